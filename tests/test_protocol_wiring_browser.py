"""Face4RAG's three-level protocol walked in Chromium: the annotation screen asks the document's questions and
takes its keys, two annotators disagree, the adjudicator walks the document on the dispute, and the reports
show agreement per step of the document (tests/test_protocol_wiring.py walks both example protocols at
service and page level, export and qualification included). On each example protocol a lead starts a
pre-labelling job from the job page (a real worker, the offline judge) and reads predictions in the document's
labels."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.protocol_document import load_shipped
from annotator.gold.services import gold_override
from annotator.models import Adjudication, GoldLabel, Sentence
from annotator.projects.protocol_services import protocol_set
from annotator.reports.agreement import project_agreement
from annotator.domain.vocabulary import Role
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

FACE4RAG = load_shipped("face4rag")
TEXTS = ["The plant opened in 2019.", "Beta acquired Alpha.", "Sales rose because of the new logo."]


def keys_for(path):
    """The keys that walk ``path``: each answer's own key in the document."""
    return [next(a.key for a in FACE4RAG.step(step).answers if a.value == value) for step, value in path.items()]


def path_to(label):
    return next(path for path in FACE4RAG.paths() if FACE4RAG.label_of(path) == label)


def annotate_with_keys(page, project, paths):
    page.goto(f"/p/{project.slug}/work/")
    expect(page.locator("#start-button")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/a/\d+/"))
    for number, path in enumerate(paths, start=1):
        expect(page.locator("#panel-title")).to_contain_text(f"Sentence {number} of 3")
        first_step = next(iter(path))
        expect(page.locator("#question-text")).to_have_text(FACE4RAG.step(first_step).question)
        for key in keys_for(path):
            page.keyboard.press(key)
        label = FACE4RAG.label_of(path)
        expect(page.locator("a.sentence").nth(number - 1).locator(".chip")).to_have_text(FACE4RAG.label(label).name)
    expect(page.locator("#save-status")).to_have_text("Saved")
    page.keyboard.press("s")
    expect(page.locator(".panel-message, #submitted, .message")).to_contain_text(re.compile("ubmitted"))


def test_face4rag_in_chromium_annotation_dispute_and_adjudication(page_for):
    project = ProjectFactory(slug="face4rag-browser", overlap=2)
    lead = member(project, Role.LEAD)
    protocol_set(project, FACE4RAG.document, user=lead)
    project.refresh_from_db()
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    consistent, inversion, causal = path_to("consistent"), path_to("entity_inversion"), path_to("causal_confusion")
    assert len(inversion) == 3  # three levels: consistent? -> which error? -> which type?

    first, second = member(project, Role.ANNOTATOR), member(project, Role.ANNOTATOR)
    for user, paths in ((first, [consistent, inversion, causal]), (second, [consistent, path_to("conflation"), causal])):
        page = page_for(user)
        page.on("dialog", lambda dialog: dialog.accept())
        annotate_with_keys(page, project, paths)
        page.close()

    dispute = Adjudication.objects.get(status=Adjudication.Status.OPEN)
    assert dispute.sentence.index == 1
    assert set(GoldLabel.objects.values_list("label", flat=True)) == {"consistent", "causal_confusion"}

    judge = member(project, Role.ADJUDICATOR)
    page = page_for(judge)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    # The two walks diverged at the third level, named in the document's words.
    expect(card.locator("[data-diverged]")).to_have_attribute("data-diverged", "knowledge")
    for key, step in zip(keys_for(inversion), inversion):
        expect(card.locator(".question")).to_contain_text(FACE4RAG.step(step).question)
        page.keyboard.press(key)
    expect(card.locator("[data-walk-label] .chip")).to_have_text(FACE4RAG.label("entity_inversion").name)
    page.keyboard.press("r")
    page.keyboard.type("The reference has Alpha acquiring Beta.")
    page.keyboard.press("Enter")
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = GoldLabel.objects.get(sentence=dispute.sentence)
    assert (gold.label, gold.path) == ("entity_inversion", inversion)

    measures = {m["variable"]: m for m in project_agreement(project)["measures"]}
    assert list(measures) == ["label", *FACE4RAG.agreement_steps]
    # The third level was asked of both on one sentence only: counted, but one unit is no figure (n/a).
    assert measures["knowledge"]["units"] == 1 and measures["knowledge"]["percent"] is None
    assert measures["category"]["units"] == 2 and measures["category"]["percent"] == 1.0
    assert measures["consistent"]["units"] == 3 and measures["consistent"]["percent"] == 1.0
    page_for(lead).goto(f"/p/{project.slug}/reports/")


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
