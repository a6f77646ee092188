"""Factories for gold and agreement tests: submitted annotations of a turn."""

from django.utils import timezone

from annotator import models
from annotator.domain import protocol
from annotator.domain.vocabulary import Role

from .factories import AssignmentFactory, member


def submit_walks(turn, annotator, paths, walked_protocol):
    """An annotator's submitted slot on ``turn`` with one walk (a path) per sentence; its label: where the walk
    ends in ``walked_protocol``."""
    assignment = AssignmentFactory(turn=turn, annotator=annotator, status=models.Assignment.Status.SUBMITTED,
                                   submitted_at=timezone.now())
    for sentence, path in zip(turn.sentences.order_by("index"), paths):
        models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, path=path,
                                                 label=walked_protocol.label_of(path))
    return assignment


def submit(turn, annotator, labels, notes=None, submitted_at=None):
    """An annotator's submitted assignment on ``turn`` with one final label per sentence (None: unanswered)."""
    assignment = AssignmentFactory(
        turn=turn,
        annotator=annotator,
        status=models.Assignment.Status.SUBMITTED,
        submitted_at=submitted_at or timezone.now(),
    )
    sentences = list(turn.sentences.order_by("index"))
    assert len(labels) == len(sentences), "one label per sentence"
    for position, (sentence, label) in enumerate(zip(sentences, labels)):
        if label is None:
            continue
        models.SentenceAnnotation.objects.create(
            assignment=assignment,
            sentence=sentence,
            label=label,
            path=protocol.path_for_label(label),
            note=(notes or {}).get(position, ""),
        )
    return assignment


def annotators(project, count=2):
    return [member(project, Role.ANNOTATOR) for _ in range(count)]


def disputed_turn(project, first_labels, second_labels):
    """A turn of ``project`` two annotators submitted with these labels, its gold derived (a dispute wherever they
    differ)."""
    from annotator.gold.derivation import gold_derive_for_turn

    from .factories import TurnFactory

    first, second = annotators(project)
    turn = TurnFactory(dialogue__project=project)
    submit(turn, first, first_labels)
    submit(turn, second, second_labels)
    gold_derive_for_turn(turn)
    return turn
