"""What drawn turns produce: gold by single review (provenance REVIEW) or the normal double annotation, the draws
named with the gold in the export, and annotators kept blind to pre-labels on drawn turns (page and API)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.corpus.draws.services import draw_record
from annotator.domain.vocabulary import DrawStrategy, DrawnTurnReview, GoldProvenance, Label, Role
from annotator.gold.services import annotation_reopen
from annotator.models import Adjudication, Assignment, GoldLabel, Sentence
from annotator.work.assignment import assignment_next
from annotator.work.services import annotation_amend, assignment_submit
from autolabel.checks.drawing import draw_for_job
from tests.factories import ProjectFactory, member
from tests.factories_api import token_client
from tests.factories_draws import finished_job
from tests.factories_workspace import annotators, label_all, project_with_turns

pytestmark = pytest.mark.django_db


def annotate_and_submit(project, user, label):
    assignment = assignment_next(project, user)
    label_all(assignment, label, user)
    assignment_submit(Assignment.objects.get(pk=assignment.pk), actor=user)
    return Assignment.objects.get(pk=assignment.pk)


def gold_of(turn):
    return list(GoldLabel.objects.filter(sentence__turn=turn).order_by("sentence__index")
                .values_list("label", "provenance", "decided_by__username"))


# --- gold ----------------------------------------------------------------------------------------

def test_under_single_review_one_submitted_annotation_of_a_drawn_turn_is_gold_with_provenance_review():
    project, turns = project_with_turns(2, drawn_turn_review=DrawnTurnReview.SINGLE)
    draw_record(project, DrawStrategy.RANDOM, [turns[1].pk], 1, 1, None, None)
    reviewer, other = annotators(project, 2)
    submitted = annotate_and_submit(project, reviewer, Label.INVENTED)
    assert submitted.turn_id == turns[1].pk
    assert gold_of(turns[1]) == [(Label.INVENTED, GoldProvenance.REVIEW, reviewer.username)] * 3
    assert not Adjudication.objects.exists()
    # A turn that was not drawn still needs two annotators.
    annotate_and_submit(project, other, Label.FAITHFUL)
    assert gold_of(turns[0]) == []


def test_under_double_review_a_drawn_turn_waits_for_agreement_as_any_turn():
    project, turns = project_with_turns(1)
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 1, None, None)
    a, b = annotators(project, 2)
    annotate_and_submit(project, a, Label.FAITHFUL)
    assert gold_of(turns[0]) == []
    annotate_and_submit(project, b, Label.FAITHFUL)
    assert gold_of(turns[0]) == [(Label.FAITHFUL, GoldProvenance.AGREEMENT, None)] * 3


def test_review_gold_is_cleared_on_reopen_and_follows_an_amendment():
    project, turns = project_with_turns(1, drawn_turn_review=DrawnTurnReview.SINGLE)
    draw_record(project, DrawStrategy.UNCERTAINTY, [turns[0].pk], 1, None, None, None)
    reviewer, = annotators(project, 1)
    lead = member(project, Role.LEAD)
    submitted = annotate_and_submit(project, reviewer, Label.FAITHFUL)
    first = Sentence.objects.filter(turn=turns[0]).order_by("index").first()
    annotation_amend(submitted, first, Label.INVENTED, actor=reviewer, reason="the reference says otherwise")
    assert gold_of(turns[0])[0] == (Label.INVENTED, GoldProvenance.REVIEW, reviewer.username)
    annotation_reopen(Assignment.objects.get(pk=submitted.pk), lead, "look again")
    assert gold_of(turns[0]) == []
    assignment_submit(Assignment.objects.get(pk=submitted.pk), actor=reviewer)
    assert [label for label, _, _ in gold_of(turns[0])] == [Label.INVENTED, Label.FAITHFUL, Label.FAITHFUL]


def test_imported_final_gold_stays_under_single_review():
    project, turns = project_with_turns(1, drawn_turn_review=DrawnTurnReview.SINGLE)
    first = Sentence.objects.filter(turn=turns[0]).order_by("index").first()
    GoldLabel.objects.create(sentence=first, label=Label.IRRELEVANT, path={"relevance": "irrelevant"},
                             provenance=GoldProvenance.IMPORTED)
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 1, None, None)
    reviewer, = annotators(project, 1)
    annotate_and_submit(project, reviewer, Label.FAITHFUL)
    assert [provenance for _, provenance, _ in gold_of(turns[0])] == [
        GoldProvenance.IMPORTED, GoldProvenance.REVIEW, GoldProvenance.REVIEW]


# --- the export ----------------------------------------------------------------------------------

def test_the_jsonl_export_names_the_draws_with_the_gold_of_a_drawn_turn_and_imports_back(tmp_path):
    project, turns = project_with_turns(2, drawn_turn_review=DrawnTurnReview.SINGLE, slug="drawn")
    job = finished_job(project, {turns[1]: {"faithful": 3, "invented": 2}})
    uncertain = draw_for_job(job, strategy=DrawStrategy.UNCERTAINTY, size=1)
    at_random = draw_for_job(job, strategy=DrawStrategy.RANDOM, size=1, seed=4)
    GoldLabel.objects.create(sentence=turns[0].sentences.first(), label=Label.FAITHFUL, provenance="imported",
                             path={"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"})
    reviewer, = annotators(project, 1)
    annotate_and_submit(project, reviewer, Label.SPECULATIVE)
    out = tmp_path / "drawn.jsonl"
    call_command("export_gold", "--project", "drawn", "--format", "jsonl", "--out", str(out), stdout=StringIO())
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    drawn = next(line for line in lines if line["sentences"][0]["gold"]["provenance"] == "review")
    plain = next(line for line in lines if line["sentences"][0]["gold"]["provenance"] == "imported")
    expected = [{"id": uncertain.pk, "strategy": "uncertainty", "job": job.pk},
                {"id": at_random.pk, "strategy": "random", "job": job.pk}]
    assert all(sentence["gold"]["draws"] == expected for sentence in drawn["sentences"])
    assert "draws" not in plain["sentences"][0]["gold"]
    ProjectFactory(slug="copy")
    report = StringIO()
    call_command("import_jsonl", "--project", "copy", str(out), stdout=report)
    assert "2 turns" in report.getvalue()
    assert GoldLabel.objects.filter(sentence__turn__dialogue__project__slug="copy",
                                    provenance=GoldProvenance.REVIEW).count() == 3


# --- blindness -----------------------------------------------------------------------------------

def annotation_page(client, assignment):
    html = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    marker = '<script id="annotation-data" type="application/json">'
    start = html.index(marker) + len(marker)
    return html, json.loads(html[start:html.index("</script>", start)])


@pytest.mark.parametrize("shown", [False, True])
def test_an_annotator_on_a_drawn_turn_sees_a_pre_label_only_when_the_project_shows_them(client, shown):
    project, turns = project_with_turns(2, show_prelabels=shown)
    job = finished_job(project, {turn: {"speculative": 3, "faithful": 2} for turn in turns})
    draw_for_job(job, strategy=DrawStrategy.UNCERTAINTY, size=1)
    user, = annotators(project, 1)
    client.force_login(user)
    drawn = assignment_next(project, user)
    assert drawn.turn.draws.exists()
    html, data = annotation_page(client, drawn)
    prelabels = [sentence.get("prelabel") for sentence in data["sentences"]]
    if shown:
        assert prelabels == [{"label": "speculative", "display": "Speculative"}] * 3
    else:
        assert prelabels == [None] * 3 and '"prelabel"' not in html and "pre-label" not in html.lower()
    # Nothing on the page says the turn was drawn (an uncertainty draw would tell the pre-labeler was unsure).
    assert "drawn" not in html.lower() and "human check" not in html.lower() and "margin" not in html.lower()
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode().lower()
    assert "drawn" not in queue and "human check" not in queue


def test_the_api_gives_an_annotator_on_a_drawn_turn_no_pre_label_and_no_draw():
    project, turns = project_with_turns(1)
    job = finished_job(project, {turns[0]: {"invented": 3, "faithful": 2}})
    draw_for_job(job, strategy=DrawStrategy.RANDOM, size=1)
    user, = annotators(project, 1)
    api = token_client(user)
    base = f"/api/v1/projects/{project.slug}"
    answer = api.post(f"{base}/assignments/next/")
    assert answer.status_code == 200 and answer.json()["turn"] == turns[0].pk
    detail = api.get(f"{base}/assignments/{answer.json()['id']}/").content.decode()
    for text in (answer.content.decode(), detail):
        assert "invented" not in text and "label_votes" not in text and "prediction" not in text and "draw" not in text
    assert api.get(f"{base}/autolabel-jobs/{job.pk}/predictions/").status_code == 404
    assert api.get(f"{base}/autolabel-jobs/{job.pk}/draws/").status_code == 404


def test_the_api_says_a_reviewed_sentence_is_reviewed_not_pending():
    project, turns = project_with_turns(1, drawn_turn_review=DrawnTurnReview.SINGLE)
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 1, None, None)
    reviewer, = annotators(project, 1)
    annotate_and_submit(project, reviewer, Label.FAITHFUL)
    api = token_client(member(project, Role.LEAD))
    listed = api.get(f"/api/v1/projects/{project.slug}/sentences/", {"agreement_state": "reviewed"}).json()
    assert [row["agreement_state"] for row in listed["results"]] == ["reviewed"] * 3


def test_a_drawn_turn_two_annotators_already_held_is_decided_by_both_even_under_single_review():
    """Drawn after both took it: the first submission's labels must not settle the turn and hide the
    second annotator's disagreement (it is a dispute, as for any turn two people annotated)."""
    project, turns = project_with_turns(1)
    a, b = annotators(project, 2)
    first, second = assignment_next(project, a), assignment_next(project, b)
    assert first.turn_id == second.turn_id == turns[0].pk
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 1, None, None)
    project.drawn_turn_review = DrawnTurnReview.SINGLE
    project.save()
    label_all(first, Label.FAITHFUL, a)
    assignment_submit(Assignment.objects.get(pk=first.pk), actor=a)
    label_all(second, Label.INVENTED, b)
    assignment_submit(Assignment.objects.get(pk=second.pk), actor=b)
    assert gold_of(turns[0]) == []
    assert Adjudication.objects.filter(turn=turns[0], status=Adjudication.Status.OPEN).count() == 3


def test_review_gold_becomes_agreement_when_a_second_annotator_agrees():
    project, turns = project_with_turns(1, drawn_turn_review=DrawnTurnReview.SINGLE)
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 1, None, None)
    a, b = annotators(project, 2)
    annotate_and_submit(project, a, Label.FAITHFUL)
    assert [p for _, p, _ in gold_of(turns[0])] == [GoldProvenance.REVIEW] * 3
    project.drawn_turn_review = DrawnTurnReview.DOUBLE  # the lead asks for a second opinion after all
    project.save()
    annotate_and_submit(project, b, Label.FAITHFUL)
    assert gold_of(turns[0]) == [(Label.FAITHFUL, GoldProvenance.AGREEMENT, None)] * 3
