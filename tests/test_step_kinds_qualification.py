"""The qualification set on a protocol with step kinds (issue 42): an answer is right when its label and its
multiple and scale values agree with the gold's by gold's own rules (an equal set, an equal point; a text never
decides), and the score page shows the annotator the step where they differed."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator import models
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.projects.protocol_services import protocol_set
from annotator.qa import qualification as q

from .factories import DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = pytest.mark.django_db

SUPPORTED = {"supported": "yes"}


def walk(errors=("fabricated",), severity=4, text="The statute says three years."):
    return {"supported": "no", "error_types": list(errors), "severity": severity, "justification": text}


@pytest.fixture
def project():
    project = ProjectFactory(slug="legal-qual")
    lead = member(project, Role.LEAD)
    protocol_set(project, load_shipped("halludetect").document, user=lead)
    project.refresh_from_db()
    gold = [SUPPORTED, walk(["fabricated", "wrong_citation"], 4, "No such case."), walk(severity=5),
            walk(["outdated_law"], 3)]
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=[f"Sentence {n}." for n in range(4)])
    protocol = load_shipped("halludetect")
    for sentence, path in zip(turn.sentences.order_by("index"), gold):
        models.GoldLabel.objects.create(sentence=sentence, label=protocol.label_of(path), path=path,
                                        provenance=GoldProvenance.IMPORTED)
    q.qualification_set(project=project, actor=lead, turn_ids=[turn.pk], pass_mark=0.75)
    return project


def take(project, annotator, paths):
    protocol = load_shipped("halludetect")
    assignment = q.qualification_assignment_next(project, annotator)
    for sentence, path in zip(assignment.turn.sentences.order_by("index"), paths):
        models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, path=path,
                                                 label=protocol.label_of(path))
    assignment.status = models.Assignment.Status.SUBMITTED
    assignment.submitted_at = timezone.now()
    assignment.save()


def score_page(project, annotator):
    client = Client()
    client.force_login(annotator)
    response = client.get(reverse("qa:qualification_score", args=[project.slug]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_same_set_and_point_in_other_words_are_right_a_different_point_or_set_is_not(project):
    annotator = member(project, Role.ANNOTATOR)
    take(project, annotator, [
        SUPPORTED,
        walk(["fabricated", "wrong_citation"], 4, "The case does not exist."),  # same set, other words: right
        walk(severity=2),  # the gold's point is 5
        walk(["misread_holding"], 3),  # the gold's set is outdated_law
    ])
    page = score_page(project, annotator)
    result = models.QualificationResult.objects.get(annotator=annotator)
    assert (result.correct, result.total, result.passed) == (2, 4, False)
    assert [(d["label"], d["correct"], d["differed_at"], d["diverged_at"]) for d in result.details] == [
        ("supported", True, [], ""), ("unsupported", True, [], ""),
        ("unsupported", False, ["severity"], "severity"), ("unsupported", False, ["error_types"], "error_types"),
    ]
    # The annotator reads the step where they differed, and both walks with the values.
    assert page.count('data-testid="differed-at"') == 2
    assert "Same label, another answer at: <strong>How severe is the worst error?</strong>" in page
    assert "Same label, another answer at: <strong>Which errors does it make?</strong>" in page
    assert "Misread holding" in page and "Outdated law" in page


def test_a_wrong_label_on_a_kinds_protocol_still_says_where_the_walk_left_the_gold(project):
    annotator = member(project, Role.ANNOTATOR)
    take(project, annotator, [walk(), walk(["fabricated", "wrong_citation"], 4), walk(severity=5),
                              walk(["outdated_law"], 3, "Another text entirely.")])
    page = score_page(project, annotator)
    result = models.QualificationResult.objects.get(annotator=annotator)
    assert (result.correct, result.passed) == (3, True)
    assert [d["diverged_at"] for d in result.details] == ["supported", "", "", ""]
    assert 'data-testid="differed-at"' not in page and "You went another way at" in page
