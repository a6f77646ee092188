"""The two example protocols walked in Chromium, continued (tests/test_protocol_wiring_browser.py walks the
annotation, the dispute, agreement per step and a pre-labelling job): an annotator takes the qualification with
the document's keys and reads the score and explanations in the document's words; a lead downloads the gold
JSONL from the project page, uploads it into a new project, and the new project follows the same protocol
document with the same gold."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotator.domain.protocol.document import load_shipped
from annotator.domain.protocol.groups import reading
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.gold.services import gold_override
from annotator.models import GoldLabel, Project
from annotator.qa import qualification as q
from tests.factories import DialogueFactory, MembershipFactory, ProjectFactory, TurnFactory, member
from tests.protocol_walks import DISAGREEMENT, EXAMPLES, TEXTS, example_project, walk_turn
from tests.conftest import start_from_queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


@pytest.mark.parametrize("shipped", EXAMPLES)
def test_an_annotator_takes_the_qualification_of_an_example_protocol_with_its_keys(page_for, shipped):
    protocol = load_shipped(shipped)
    project, lead = example_project(shipped, f"qualify-{shipped.replace('_', '-')}")
    gold, wrong = DISAGREEMENT[shipped]
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    for sentence, label in zip(turn.sentences.order_by("index"), gold):  # imported gold: no reason of a lead's
        GoldLabel.objects.create(sentence=sentence, label=label, path=protocol.path_for_label(label),
                                 provenance=GoldProvenance.IMPORTED)
    q.qualification_set(project=project, actor=lead, turn_ids=[turn.pk], pass_mark=1.0)

    page = page_for(member(project, Role.ANNOTATOR))
    page.on("dialog", lambda dialog: dialog.accept())
    start_from_queue(page, project, says="Start the qualification")
    walk_turn(page, protocol, [gold[0], wrong, gold[2]])

    page.wait_for_url(f"**/p/{project.slug}/qa/qualification/score/")
    expect(page.get_by_test_id("qualification-score")).to_have_text("2 of 3 sentences right (67%)")
    expect(page.get_by_test_id("qualification-verdict")).to_contain_text("Not passed")
    expect(page.get_by_test_id("detail-right")).to_have_count(2)
    row = page.get_by_test_id("detail-wrong")
    # Both walks in the document's questions and answers, the step where they part, and what the document says there.
    read = reading(protocol)
    step = protocol.divergence(protocol.path_for_label(wrong), protocol.path_for_label(gold[1]))
    expect(row.locator(".chip").first).to_have_text(protocol.label(wrong).name)
    expect(row.locator(".chip").nth(1)).to_have_text(protocol.label(gold[1]).name)
    expect(row.locator("ol.path").nth(1).locator("li")).to_have_text(
        [f"{read.step_questions[s]} {read.answer_names[(s, v)]}" for s, v in protocol.path_for_label(gold[1]).items()])
    expect(row.get_by_test_id("diverged-at")).to_have_text(protocol.step(step).question)
    answer = read.answer_names[(step, protocol.path_for_label(gold[1])[step])]
    expect(row.get_by_test_id("gold-explanation")).to_have_text(
        f"At “{protocol.step(step).question}” the gold answer is {answer}: {read.step_definitions[step]}")


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.parametrize("shipped", EXAMPLES)
def test_the_gold_jsonl_downloaded_and_uploaded_into_a_new_project_restores_the_protocol_and_the_gold(
        page_for, start_celery_worker, private_files, tmp_path, shipped):
    protocol = load_shipped(shipped)
    project, lead = example_project(shipped, f"export-{shipped.replace('_', '-')}")
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    labels, _ = DISAGREEMENT[shipped]
    for sentence, label in zip(turn.sentences.order_by("index"), labels):
        gold_override(sentence, lead, label, "Checked against the reference.")
    copy = ProjectFactory(slug=f"copy-{shipped.replace('_', '-')}")
    MembershipFactory(project=copy, user=lead, role=Role.LEAD)
    start_celery_worker(concurrency=1, extra_env={"MEDIA_ROOT": str(private_files)})

    page = page_for(lead)
    page.goto(f"/p/{project.slug}/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export gold JSONL", exact=True).click()
    exported = tmp_path / download.value.suggested_filename
    download.value.save_as(exported)
    assert json.loads(exported.read_text().splitlines()[0]) == {"protocol": protocol.document}

    page.goto(f"/p/{copy.slug}/imports/new/")
    page.get_by_label("Format").select_option(label="Project JSONL")
    page.get_by_label("File", exact=True).set_input_files(exported)
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(rf"/p/{copy.slug}/imports/\d+/$"))
    expect(page.locator(".import-state")).to_have_text("Done", timeout=60_000)

    page.goto(f"/p/{copy.slug}/protocol/")
    expect(page.get_by_test_id("protocol-current")).to_contain_text(
        f"The project follows {protocol.name} v{protocol.version}")
    restored = page.get_by_test_id("protocol-versions").locator("tbody tr")  # set by the import, as the lead who ran it
    expect(restored).to_have_count(1)
    expect(restored).to_contain_text(f"{protocol.name} v{protocol.version} current")
    expect(restored.locator("td").nth(2)).to_have_text(lead.get_username())
    shown = StringIO()
    call_command("protocol_show", "--project", copy.slug, stdout=shown)
    assert json.loads(shown.getvalue()) == protocol.document

    def gold_of(some):
        return sorted(GoldLabel.objects.filter(sentence__turn__dialogue__project=some)
                      .values_list("sentence__text", "label", "path"))

    assert gold_of(Project.objects.get(pk=copy.pk)) == gold_of(project) != []
