"""Agreement aggregated from the database, and `manage.py iaa_report` printing the same numbers."""

import datetime
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotator.models import ImportBatch
from annotator.reports.agreement import project_agreement
from annotator.gold.services import adjudication_resolve
from annotator.gold.derivation import gold_derive_for_turn
from annotator.domain.vocabulary import Label, Role

from .factories import DialogueFactory, ProjectFactory, TurnFactory, member
from .factories_gold import annotators, submit

pytestmark = pytest.mark.django_db

F, I, S, R, X = Label.FAITHFUL, Label.INVENTED, Label.SPECULATIVE, Label.RELIABLE, Label.IRRELEVANT
LAST_WEEK = timezone.now() - datetime.timedelta(days=7)


@pytest.fixture
def project():
    project = ProjectFactory(slug="amazon")
    ann1, ann2, ann3 = annotators(project, 3)
    first_batch = ImportBatch.objects.create(project=project, kind=ImportBatch.Kind.JSONL, filename="first.jsonl")
    second_batch = ImportBatch.objects.create(project=project, kind=ImportBatch.Kind.JSONL, filename="second.jsonl")
    # Batch 1, last week, ann1 + ann2: 3 of 4 sentences agree.
    turn = TurnFactory(dialogue=DialogueFactory(project=project, batch=first_batch),
                       sentences=["One.", "Two.", "Three.", "Four."])
    submit(turn, ann1, [F, F, S, X], submitted_at=LAST_WEEK)
    submit(turn, ann2, [F, I, S, X], submitted_at=LAST_WEEK)
    # Batch 2, this week, ann1 + ann3: 1 of 2 agree.
    turn = TurnFactory(dialogue=DialogueFactory(project=project, batch=second_batch), sentences=["Five.", "Six."])
    submit(turn, ann1, [F, R])
    submit(turn, ann3, [F, S])
    for t in project.dialogues.all():
        for turn in t.turns.all():
            gold_derive_for_turn(turn)
    project.people = (ann1, ann2, ann3)
    return project


def by_variable(report):
    return {row["variable"]: row for row in report["measures"]}


def test_project_agreement_numbers(project):
    report = project_agreement(project)
    measures = by_variable(report)
    assert measures["label"]["units"] == 6
    assert measures["label"]["percent"] == pytest.approx(4 / 6)
    assert measures["faithfulness"]["units"] == 3  # (F,F) (F,I) (F,F)
    assert measures["faithfulness"]["percent"] == pytest.approx(2 / 3)
    assert measures["grounded"]["units"] == 2  # (S,S) and (R,S)
    ann1, ann2, ann3 = project.people
    assert {tuple(p["annotators"]): p["units"] for p in report["pairs"]} == {
        (ann1.username, ann2.username): 4, (ann1.username, ann3.username): 2
    }
    # The symmetric confusion table: F/I once, R/S once, agreements on the diagonal.
    index = {label: i for i, label in enumerate(report["labels"])}
    confusion = report["confusion"]
    assert confusion[index[F]][index[I]] == confusion[index[I]][index[F]] == 1
    assert confusion[index[F]][index[F]] == 2
    assert sum(map(sum, confusion)) - sum(confusion[i][i] for i in range(len(confusion))) == 4
    assert [(b["batch"], b["units"], round(b["percent"], 3)) for b in report["batches"]] == [
        ("Project JSONL first.jsonl", 4, 0.75), ("Project JSONL second.jsonl", 2, 0.5)
    ]
    assert [w["units"] for w in report["weekly"]] == [4, 2]
    assert report["weekly"][0]["week"] < report["weekly"][1]["week"]


def test_accuracy_against_gold_grows_with_adjudication(project):
    report = project_agreement(project)
    names = [person.username for person in project.people]
    ann1 = next(row for row in report["annotators"] if row["annotator"] == names[0])
    assert ann1["units"] == 6 and ann1["gold_units"] == 4 and ann1["accuracy"] == 1.0
    judge = member(project, Role.ADJUDICATOR)
    for adjudication in project.dialogues.first().turns.first().adjudications.all():
        adjudication_resolve(adjudication, judge, label=I, reason="The reference says otherwise.")
    report = project_agreement(project)
    rows = {row["annotator"]: row for row in report["annotators"]}
    assert rows[names[0]]["gold_units"] == 5 and rows[names[0]]["accuracy"] == pytest.approx(4 / 5)
    assert rows[names[1]]["accuracy"] == 1.0


def test_one_batch_only(project):
    batch = ImportBatch.objects.get(filename="second.jsonl")
    report = project_agreement(project, batch)
    assert by_variable(report)["label"]["units"] == 2
    assert by_variable(report)["label"]["percent"] == 0.5


def test_three_annotators_per_sentence(project):
    project.overlap = 3
    project.save()
    people = annotators(project, 3)
    turn = TurnFactory(dialogue__project=project, sentences=["A.", "B."])
    submit(turn, people[0], [F, F])
    submit(turn, people[1], [F, I])
    submit(turn, people[2], [F, I])
    measures = by_variable(project_agreement(project))
    # 6 two-coder sentences + 2 three-coder ones; sentence B agrees in 1 of 3 pairs.
    assert measures["label"]["units"] == 8
    assert measures["label"]["percent"] == pytest.approx((4 + 1 + 1 / 3) / 8)


def test_iaa_report_prints_the_page_numbers(project):
    out = StringIO()
    call_command("iaa_report", project="amazon", json=True, stdout=out)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(project_agreement(project)))
    out = StringIO()
    call_command("iaa_report", project="amazon", stdout=out)
    text = out.getvalue()
    assert "Step 3 · Faithful or invented?" in text and "66.7%" in text
    with pytest.raises(CommandError, match="No project"):
        call_command("iaa_report", project="nope")


def test_iaa_report_for_one_batch(project):
    batch = ImportBatch.objects.get(filename="second.jsonl")
    out = StringIO()
    call_command("iaa_report", project="amazon", batch=batch.pk, json=True, stdout=out)
    report = json.loads(out.getvalue())
    assert report["batch"] == "Project JSONL second.jsonl"
    assert by_variable(report)["label"]["units"] == 2
    with pytest.raises(CommandError, match="no import batch"):
        call_command("iaa_report", project="amazon", batch=999999)
