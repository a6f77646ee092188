"""QA instances per 500 statements (CogniBench Table 1): project, annotator, week."""

import csv
import datetime as dt
import io

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.models import Feedback, Question
from annotator.qa import selectors as selectors
from annotator.qa import services as qa
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, TurnFactory, member
from tests.factories_qa import gold_turn, submitted_work

pytestmark = pytest.mark.django_db

MONDAY = timezone.make_aware(dt.datetime(2026, 11, 2, 10, 0))


def five_sentence_turn(project):
    return TurnFactory(dialogue__project=project, sentences=[f"Statement {i}." for i in range(5)])


@pytest.fixture
def work():
    """Ann judged 20 statements (4 turns) in week 1; Bob 5 in week 2. Ann asked 2 questions, Bob 1; Ann got 1 feedback."""
    project = ProjectFactory()
    lead, ann, bob = member(project, Role.LEAD), member(project, Role.ANNOTATOR, username="ann"), member(
        project, Role.ANNOTATOR, username="bob")
    ann_work = [submitted_work(five_sentence_turn(project), ann, ["faithful"] * 5, submitted_at=MONDAY)
                for _ in range(4)]
    bob_work = submitted_work(five_sentence_turn(project), bob, ["faithful"] * 5,
                              submitted_at=MONDAY + dt.timedelta(days=7))
    for _ in range(2):
        qa.question_ask(project=project, user=ann, turn=ann_work[0].turn, body="?")
    qa.question_ask(project=project, user=bob, turn=bob_work.turn, body="?")
    qa.feedback_give(annotation=ann_work[0].sentence_annotations.first(), lead=lead, comment="Check this.")
    Question.objects.filter(asked_by=ann).update(created_at=MONDAY)
    Question.objects.filter(asked_by=bob).update(created_at=MONDAY + dt.timedelta(days=8))
    Feedback.objects.update(created_at=MONDAY + dt.timedelta(days=9))
    # Qualification work and a question about it are training, not counted.
    qualification = gold_turn(project, ["faithful"] * 5)
    qualification.is_qualification = True
    qualification.save()
    submitted_work(qualification, ann, ["faithful"] * 5, is_qualification=True, submitted_at=MONDAY)
    qa.question_ask(project=project, user=ann, turn=qualification, body="?")
    return project, lead


def test_per_project(work):
    project, _ = work
    m = selectors.qa_measures(project)
    assert (m["statements"], m["questions"], m["feedback"]) == (25, 3, 1)
    assert (m["questions_per_500"], m["feedback_per_500"], m["instances_per_500"]) == (60.0, 20.0, 80.0)


def test_per_annotator(work):
    project, _ = work
    rows = {r["annotator"]: r for r in selectors.qa_measures_by_annotator(project)}
    assert (rows["ann"]["statements"], rows["ann"]["questions_per_500"], rows["ann"]["feedback_per_500"]) == (20, 50.0, 25.0)
    assert (rows["bob"]["statements"], rows["bob"]["instances_per_500"]) == (5, 100.0)


def test_per_week(work):
    project, _ = work
    rows = selectors.qa_measures_by_week(project)
    assert [(str(r["week"]), r["statements"], r["questions"], r["feedback"]) for r in rows] == [
        ("2026-11-02", 20, 2, 0),
        ("2026-11-09", 5, 1, 1),
    ]
    assert rows[0]["instances_per_500"] == 50.0 and rows[1]["instances_per_500"] == 200.0


def test_no_statements_gives_no_rate_rather_than_a_division_by_zero():
    project = ProjectFactory()
    assert selectors.qa_measures(project)["instances_per_500"] is None


def test_measures_page_and_csv_for_leads_only(work, client):
    project, lead = work
    client.force_login(lead)
    page = client.get(reverse("qa:measures", args=[project.slug]))
    assert page.status_code == 200
    assert b"80.0" in page.content
    text = client.get(reverse("qa:measures", args=[project.slug]), {"format": "csv"}).content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert ["project", project.slug, "25", "3", "1", "60.0", "20.0", "80.0"] in rows
    assert ["annotator", "ann", "20", "2", "1", "50.0", "25.0", "75.0"] in rows
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.get(reverse("qa:measures", args=[project.slug])).status_code == 404


def test_the_page_report_agrees_with_the_separate_selectors(work):
    project, _ = work
    report = selectors.qa_report(project)
    assert report["total"] == selectors.qa_measures(project)
    assert report["by_annotator"] == selectors.qa_measures_by_annotator(project)
    assert report["by_week"] == selectors.qa_measures_by_week(project)
