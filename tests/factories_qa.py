"""Factories and builders for the QA loop's tests: gold-labelled turns, submitted work."""

import factory
from django.utils import timezone

from annotator import models
from annotator.domain import protocol
from annotator.domain.vocabulary import GoldProvenance
from tests.factories import AssignmentFactory, DialogueFactory, TurnFactory


class GoldLabelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.GoldLabel

    label = "faithful"
    path = factory.LazyAttribute(lambda g: protocol.path_for_label(g.label))
    provenance = GoldProvenance.IMPORTED


def gold_turn(project, gold, reasons=None, texts=None, **turn_kwargs):
    """A turn of ``project`` whose sentences carry the gold labels ``gold`` (and optional reasons)."""
    texts = texts or [f"Sentence number {i + 1} about the river." for i in range(len(gold))]
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=texts, **turn_kwargs)
    for sentence, label, reason in zip(turn.sentences.order_by("index"), gold, reasons or [""] * len(gold), strict=False):
        GoldLabelFactory(sentence=sentence, label=label, reason=reason)
    return turn


def submitted_work(turn, annotator, labels, is_qualification=False, submitted_at=None):
    """``annotator``'s submitted assignment on ``turn`` with one complete path per label."""
    assignment = AssignmentFactory(
        turn=turn, project=turn.dialogue.project, annotator=annotator, is_qualification=is_qualification,
        status=models.Assignment.Status.SUBMITTED, submitted_at=submitted_at or timezone.now(),
    )
    for sentence, label in zip(turn.sentences.order_by("index"), labels, strict=False):
        models.SentenceAnnotation.objects.create(
            assignment=assignment, sentence=sentence, label=label, path=protocol.path_for_label(label)
        )
    return assignment


def finish(assignment, labels):
    """Fill an existing assignment with complete paths for ``labels`` and mark it submitted."""
    for sentence, label in zip(assignment.turn.sentences.order_by("index"), labels, strict=False):
        models.SentenceAnnotation.objects.update_or_create(
            assignment=assignment, sentence=sentence,
            defaults={"label": label, "path": protocol.path_for_label(label)},
        )
    assignment.status = models.Assignment.Status.SUBMITTED
    assignment.submitted_at = timezone.now()
    assignment.save()
    return assignment
