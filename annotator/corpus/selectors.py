"""Read-side queries over the corpus for lists and filters (the REST API's sentence lists)."""

from datetime import timedelta

from django.db.models import Case, CharField, Count, Exists, OuterRef, TextChoices, Value, When
from django.utils import timezone

from ..models import Adjudication, Dialogue, GoldLabel, Sentence, Turn
from ..domain.vocabulary import GoldProvenance


class AgreementState(TextChoices):
    """Where a sentence stands between its annotators, derived from gold and adjudications."""

    PENDING = "pending", "No gold yet"
    AGREED = "agreed", "Annotators agreed"
    DISPUTED = "disputed", "Waiting for adjudication"
    ADJUDICATED = "adjudicated", "Adjudicated (or overridden by a lead)"
    IMPORTED = "imported", "Gold came with the import"
    REVIEWED = "reviewed", "One annotator's review of a drawn turn"


def agreement_state_expression():
    open_adjudication = Adjudication.objects.filter(sentence=OuterRef("pk"), status=Adjudication.Status.OPEN)
    return Case(
        When(Exists(open_adjudication), then=Value(AgreementState.DISPUTED)),
        When(gold__provenance=GoldProvenance.AGREEMENT, then=Value(AgreementState.AGREED)),
        When(
            gold__provenance__in=[GoldProvenance.ADJUDICATION, GoldProvenance.OVERRIDE],
            then=Value(AgreementState.ADJUDICATED),
        ),
        When(gold__provenance=GoldProvenance.IMPORTED, then=Value(AgreementState.IMPORTED)),
        When(gold__provenance=GoldProvenance.REVIEW, then=Value(AgreementState.REVIEWED)),
        default=Value(AgreementState.PENDING),
        output_field=CharField(),
    )


def dialogues_of(project):
    return Dialogue.objects.filter(project=project).annotate(turn_count=Count("turns")).order_by("id")


def turns_of(project):
    return (
        Turn.objects.filter(dialogue__project=project)
        .select_related("dialogue")
        .prefetch_related("sentences")
        .order_by("id")
    )


def sentences_of(project, with_gold: bool):
    """Sentences of a project; with gold label and agreement state for those allowed to see them."""
    queryset = Sentence.objects.filter(turn__dialogue__project=project).select_related("turn__dialogue")
    if with_gold:
        queryset = queryset.select_related("gold").annotate(agreement_state=agreement_state_expression())
    return queryset.order_by("id")


def sentence_filter_by_state(queryset, state: str):
    return queryset.annotate(state_for_filter=agreement_state_expression()).filter(state_for_filter=state)


def gold_of(project):
    return (
        GoldLabel.objects.filter(sentence__turn__dialogue__project=project)
        .select_related("sentence__turn__dialogue", "decided_by")
        .order_by("id")
    )


# How long a queued import or export may wait before its page says that no worker seems to be running: a running
# worker starts a job within a second or two (the filesystem broker polls every second), so a minute means none is.
WORKER_PATIENCE = timedelta(minutes=1)


def job_waits_for_a_worker(job, now=None) -> bool:
    """An import batch or export job still queued a minute after it was started (no worker took it)."""
    return job.status == "pending" and (now or timezone.now()) - job.created_at > WORKER_PATIENCE
