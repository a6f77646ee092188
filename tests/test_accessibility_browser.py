"""axe-core (vendored in tests/vendor/axe-core, never served) on every page of the studio, as each role sees it:
no serious or critical violation (issue 17)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, ProtocolMode
from tests.test_security_csp_browser import demo, visit  # noqa: F401  (the fixture: the demo with a dispute)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

AXE = (Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js").read_text()
SERIOUS = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.filter((v) => ["serious", "critical"].includes(v.impact))
    .map((v) => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 4).map((n) => n.target.join(" ")).join(" | "));
}"""


def violations_on(page, path):
    visit(page, path)
    page.evaluate(AXE)  # evaluated through the DevTools protocol: the page's CSP does not apply to it
    return [f"{path}: {v}" for v in page.evaluate(SERIOUS)]


def test_no_page_has_a_serious_or_critical_accessibility_violation(demo, page_for):  # noqa: F811
    project, users, disputed, assignment, question = demo
    slug = project.slug
    found = []
    annotator = page_for(users["annotator1"])
    for path in ("/", f"/p/{slug}/", f"/p/{slug}/work/", f"/a/{assignment.pk}/", "/qa/mine/", "/qa/feedback/"):
        found += violations_on(annotator, path)
    # Independent mode: the seven labels at once.
    project.protocol_mode = ProtocolMode.INDEPENDENT
    project.save(update_fields=["protocol_mode"])
    found += violations_on(annotator, f"/a/{assignment.pk}/")
    speculative = str(list(Label).index(Label.SPECULATIVE) + 1)
    annotator.keyboard.press(speculative)  # the Speculative chip (its colour had 3.1:1 against white) is on screen
    expect(annotator.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Speculative")
    annotator.keyboard.press("k")  # back to the labelled sentence: the label chosen is marked pressed; the focus
    # rests on the panel, not on a label button a Space would press (issue 46)
    expect(annotator.locator(".label-picker .pick.chosen")).to_have_attribute("aria-pressed", "true")
    expect(annotator.locator("#decision-panel")).to_be_focused()
    annotator.evaluate(AXE)
    found += [f"independent mode, a label chosen: {v}" for v in annotator.evaluate(SERIOUS)]
    project.protocol_mode = ProtocolMode.SEQUENTIAL
    project.save(update_fields=["protocol_mode"])
    judge = page_for(users["adjudicator"])
    for path in (f"/p/{slug}/adjudication/", f"/p/{slug}/adjudication/turn/{disputed.pk}/"):
        found += violations_on(judge, path)
    lead = page_for(users["lead"])
    sentence = disputed.sentences.order_by("index").first()
    for path in (f"/p/{slug}/", f"/p/{slug}/turns/", f"/p/{slug}/turns/{disputed.pk}/", f"/p/{slug}/reports/",
                 f"/p/{slug}/assignments/", f"/p/{slug}/imports/", f"/p/{slug}/imports/new/", "/qa/questions/",
                 f"/qa/questions/{question.pk}/", f"/p/{slug}/qa/review/", f"/p/{slug}/qa/measures/",
                 f"/p/{slug}/qa/qualification/", f"/p/{slug}/gold/sentence/{sentence.pk}/", f"/p/{slug}/autolabel/",
                 f"/p/{slug}/claims/reports/", f"/p/{slug}/claims/disputes/", f"/p/{slug}/units/flags/",
                 f"/p/{slug}/protocol/", "/api/token/"):
        found += violations_on(lead, path)
    # A page showing a message after a form (the messages list is a live region).
    visit(lead, f"/p/{slug}/qa/qualification/")
    lead.locator("input[name=qualification_auto_retries]").fill("1")
    lead.locator("input[name=qualification_auto_retries]").press("Enter")
    expect(lead.locator(".messages")).to_contain_text("Automatic retries: 1")
    lead.evaluate(AXE)
    found += [f"a page with a message: {v}" for v in lead.evaluate(SERIOUS)]
    assert not found, "\n".join(found)


def test_the_pre_labelers_pages_have_no_serious_or_critical_accessibility_violation(demo, page_for):  # noqa: F811
    """The job's page, its evaluation (calibration, rater table), the comparison of two jobs, the faithfulness
    report and the human checks, on a finished job with gold drawn at random."""
    from tests.factories_faithfulness import draw, finished_job

    project, users, *_ = demo
    turns = [("model-a", [(Label.FAITHFUL, Label.FAITHFUL), (Label.SPECULATIVE, Label.RELIABLE)]),
             ("model-b", [(Label.INVENTED, Label.INVENTED), (Label.UNEQUIVOCAL, Label.UNEQUIVOCAL)])] * 3
    job, created = finished_job(project, turns)
    draw(job, created[:4])
    other, _ = finished_job(project, turns)
    lead = page_for(users["lead"])
    base = f"/p/{project.slug}/autolabel/jobs/{job.pk}"
    found = []
    for path in (f"{base}/", f"{base}/evaluation/", f"{base}/evaluation/compare/?other={other.pk}",
                 f"{base}/faithfulness/", f"{base}/checks/", f"/p/{project.slug}/autolabel/endpoints/"):
        found += violations_on(lead, path)
    assert not found, "\n".join(found)
