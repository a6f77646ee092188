"""The two example protocols (Face4RAG's three-level typology, CogniBench with a clinical-harm step) walked in
Chromium: the annotation screen asks each document's questions and takes its keys, two annotators disagree,
the adjudicator walks the document on the dispute, and the lead's reports page shows agreement per step in
the document's wording; a lead starts a pre-labelling job from the job page (a real worker, the offline judge)
and reads predictions and its evaluation in the document's labels. Qualification and the export/re-import
round trip: tests/test_protocol_walk_browser.py."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.protocol.document import load_shipped
from annotator.domain.protocol.groups import reading
from annotator.gold.services import gold_override
from annotator.models import Adjudication, GoldLabel, Sentence
from annotator.projects.protocol_services import protocol_set
from annotator.domain.vocabulary import Role
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.protocol_walks import DISAGREEMENT, EXAMPLES, TEXTS, example_project, keys_for, walk_turn
from tests.conftest import start_from_queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


@pytest.mark.parametrize("shipped", EXAMPLES)
def test_an_example_protocol_in_chromium_dispute_adjudication_and_agreement_per_step(page_for, shipped):
    protocol = load_shipped(shipped)
    project, lead = example_project(shipped, f"walk-{shipped.replace('_', '-')}", overlap=2)
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    labels, other = DISAGREEMENT[shipped]
    mine, theirs = protocol.path_for_label(labels[1]), protocol.path_for_label(other)
    diverged = protocol.divergence(mine, theirs)

    for walked in (labels, [labels[0], other, labels[2]]):
        page = page_for(member(project, Role.ANNOTATOR))
        page.on("dialog", lambda dialog: dialog.accept())
        start_from_queue(page, project)
        walk_turn(page, protocol, walked)
        expect(page.locator(".panel-message, #submitted, .message.success")).to_contain_text(re.compile("ubmitted"))
        page.close()

    dispute = Adjudication.objects.get(status=Adjudication.Status.OPEN)
    assert dispute.sentence.index == 1
    assert set(GoldLabel.objects.values_list("label", flat=True)) == {labels[0], labels[2]}

    page = page_for(member(project, Role.ADJUDICATOR))
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    # The two walks parted at the step the document adds its depth with.
    expect(card.locator("[data-diverged]")).to_have_attribute("data-diverged", diverged)
    for key, step in zip(keys_for(protocol, mine), mine):
        expect(card.locator(".question")).to_contain_text(protocol.step(step).question)
        page.keyboard.press(key)
    expect(card.locator("[data-walk-label] .chip")).to_have_text(protocol.label(labels[1]).name)
    page.keyboard.press("r")
    page.keyboard.type("The reference says so.")
    page.keyboard.press("Control+Enter")  # the reason is sent with Ctrl+Enter (issue 46)
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = GoldLabel.objects.get(sentence=dispute.sentence)
    assert (gold.label, gold.path) == (labels[1], mine)

    # The lead's reports page: one row per counted step of the document, titled with its question.
    page = page_for(lead)
    page.goto(f"/p/{project.slug}/reports/")
    rows = page.locator("#table-agreement tbody tr")
    read = reading(protocol)
    expect(rows).to_have_count(1 + len(protocol.agreement_steps))
    expect(rows.nth(0).locator("th")).to_have_text(f"Final label ({len(protocol.labels)} categories)")
    for number, step in enumerate(protocol.agreement_steps, start=1):
        expect(rows.nth(number).locator("th")).to_have_text(read.step_title(step))
        expect(rows.nth(number).locator("th")).to_contain_text(protocol.step(step).question)
    # Units, alpha, percent, kappa: the first question was asked of both on all three sentences, alike; the step
    # they parted at on one sentence only (counted, but one unit is no figure).
    start = rows.nth(1 + protocol.agreement_steps.index(protocol.start)).locator("td")
    expect(start.nth(0)).to_have_text("all sentences")
    expect(start.nth(1)).to_have_text("3")
    expect(start.nth(3)).to_have_text("100.0%")
    parted = rows.nth(1 + protocol.agreement_steps.index(diverged)).locator("td")
    expect(parted.nth(1)).to_have_text("1")
    expect(parted.nth(3)).to_have_text("n/a")


PRELABEL_TEXTS = [
    "The Danube rises in the Black Forest of Germany.",
    "It was named after a Roman goddess of pearls and silver fish in 1312.",
    "Therefore the Danube is probably the most important trade route in the whole world.",
]
PRELABEL_REFERENCE = ("The Danube rises in the Black Forest of Germany and flows 2850 kilometres into the Black Sea. "
                      "Vienna and Budapest stand on its banks.")


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.parametrize("shipped", ["face4rag", "cognibench_clinical"])
def test_a_lead_starts_a_pre_labelling_job_on_an_example_protocol_and_sees_its_labels(
        page_for, start_celery_worker, baseline_llm, shipped):
    from autolabel.models import AutoLabelJob, LLMProfile, Prediction

    protocol = load_shipped(shipped)
    LLMProfile.objects.create(name="Offline baseline", base_url=baseline_llm.base_url, api_key_env="", concurrency=1)
    project = ProjectFactory(slug=f"prelabel-{shipped.replace('_', '-')}")
    lead = member(project, Role.LEAD)
    protocol_set(project, protocol.document, user=lead)
    project.refresh_from_db()
    dialogue = DialogueFactory(project=project, reference=PRELABEL_REFERENCE)
    TurnFactory(dialogue=dialogue, sentences=PRELABEL_TEXTS)
    start_celery_worker(concurrency=1)

    page = page_for(lead)
    page.goto(f"/p/{project.slug}/autolabel/")
    page.get_by_label("Endpoint profile").select_option(label="Offline baseline")
    page.get_by_label("Samples", exact=True).fill("3")
    page.get_by_label("Threshold", exact=True).fill("2")
    page.get_by_role("button", name="Start auto-label job").click()
    page.wait_for_url("**/autolabel/jobs/*/")
    page.get_by_text("Done", exact=True).wait_for(timeout=60000)

    job = AutoLabelJob.objects.get()
    assert job.protocol_version_id == project.protocol_version_id
    predicted = {p.sentence.index: p.label for p in Prediction.objects.filter(job=job).select_related("sentence")}
    assert set(predicted.values()) - {""} <= set(protocol.labels)
    rows = page.locator("#job-predictions tbody tr")
    expect(rows).to_have_count(3)
    supported = "consistent" if shipped == "face4rag" else "faithful"
    unsupported = "hallucination" if shipped == "face4rag" else predicted[1]
    assert predicted[0] == supported and predicted[1] == unsupported
    # The chips carry the document's names for its own labels.
    expect(rows.nth(0).locator(".chip").first).to_have_text(protocol.label(supported).name)
    expect(rows.nth(1).locator(".chip").first).to_have_text(protocol.label(unsupported).name)
    if predicted[2]:
        expect(rows.nth(2).locator(".chip").first).to_have_text(protocol.label(predicted[2]).name)

    # Its evaluation: the page's columns are the document's views and its macro. Gold equal to the job's labels (where it gave one): every view's F1 at the job's threshold is then 1.
    for sentence in Sentence.objects.filter(turn__dialogue=dialogue).order_by("index"):
        if predicted[sentence.index]:
            gold_override(sentence, lead, predicted[sentence.index], "set for the evaluation walk")
    page.get_by_role("link", name="Evaluation against gold").click()
    table = page.locator(".evaluation-table")
    macro = protocol.document["groups"]["evaluation"]["macro"]["name"]
    expect(table.locator("thead")).to_contain_text(f"{macro} F1")
    for view in protocol.document["groups"]["evaluation"]["views"]:
        expect(table.locator("thead")).to_contain_text(view["name"][0].upper() + view["name"][1:])
    # The pooled view (the document's first) at the job's threshold.
    pooled = table.locator("tbody tr.current td strong")
    expect(pooled.nth(1)).to_have_text("1.0")
