"""Reads of the auto-labeller: a project's jobs, predictions for pages and exports, candidates for contrastive examples
and the examples a job shows the model (read by ``services`` and ``estimation`` alike)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404

from annotator.models import Turn

from autolabel.evaluation.protocol_views import job_protocol
from autolabel.labelling import prompting
from autolabel.labelling.kind_votes import decided_values
from autolabel.models import AutoLabelJob, ContrastiveExample, Prediction, SeverityPrediction

MAX_EXAMPLES = 8  # the contrastive examples a job shows the model, at most


def job_scope(project, turn_ids=None):
    """(the turns a job would label, the asked ids not in the project): ``turn_ids``, or every turn outside
    the qualification set."""
    turns = Turn.objects.filter(dialogue__project=project)
    if turn_ids is None:
        return turns.filter(is_qualification=False), []
    turn_ids = sorted({int(t) for t in turn_ids})
    found = set(turns.filter(pk__in=turn_ids).values_list("pk", flat=True))
    return turns.filter(pk__in=turn_ids), [t for t in turn_ids if t not in found]


def turn_ids_of_import(batch) -> list[int] | None:
    """The turns a job started on one import labels (outside the qualification set); None (every turn) without one."""
    if batch is None:
        return None
    return list(Turn.objects.filter(dialogue__batch=batch, is_qualification=False).values_list("pk", flat=True))


def job_of_project(project, job_id) -> AutoLabelJob:
    """The project's job ``job_id`` with its profile, prompt and protocol versions (404 for another project's job)."""
    return get_object_or_404(AutoLabelJob.objects.select_related("profile", "prompt_version", "protocol_version"), pk=job_id, project=project)


def has_finished_job(project) -> bool:
    return AutoLabelJob.objects.filter(project=project, status=AutoLabelJob.Status.DONE).exists()


def latest_finished_job(project) -> AutoLabelJob | None:
    return (
        AutoLabelJob.objects.filter(project=project, status=AutoLabelJob.Status.DONE).order_by("-finished_at", "-pk").first()
    )


def predictions_for_turn(turn, job: AutoLabelJob | None = None) -> list[Prediction]:
    """Predictions of the turn's sentences from ``job`` (default: the project's latest finished job that covers it)."""
    queryset = Prediction.objects.filter(sentence__turn=turn).select_related("sentence", "job")
    if job is None:
        job_id = (
            queryset.filter(job__status=AutoLabelJob.Status.DONE).order_by("-job__finished_at", "-job_id")
            .values_list("job_id", flat=True).first()
        )
        if job_id is None:
            return []
        queryset = queryset.filter(job_id=job_id)
    else:
        queryset = queryset.filter(job=job)
    return list(queryset.order_by("sentence__index"))


def predictions_for_annotator(project, turn) -> list[Prediction]:
    """What an annotator may see: nothing unless the project shows pre-labels (off by default)."""
    if not project.show_prelabels or turn.dialogue.project_id != project.pk:
        return []
    return predictions_for_turn(turn)


def contrastive_candidates(project, job: AutoLabelJob | None = None, limit: int = 200):
    """Gold sentences the LLM got wrong in a job (default: the latest finished one), not yet examples.

    Returns (job, rows): rows are predictions with their sentence and gold, most confident mistakes first.
    """
    job = job or latest_finished_job(project)
    if job is None:
        return None, []
    rows = (
        Prediction.objects.filter(job=job, sentence__gold__isnull=False)
        .exclude(label="")
        .exclude(sentence__contrastive_examples__project=project)
        .select_related("sentence__gold", "sentence__turn__dialogue")
        .order_by("-hallucinated_votes", "sentence_id")
    )
    wrong = []
    for prediction in rows.iterator(chunk_size=500):
        if prediction.label != prediction.sentence.gold.label:
            wrong.append(prediction)
            if len(wrong) >= limit:
                break
    return job, wrong


def active_example_ids(project) -> list[int]:
    """The contrastive examples a job created now shows the model."""
    return list(
        ContrastiveExample.objects.filter(project=project, active=True).values_list("pk", flat=True)[:MAX_EXAMPLES]
    )


def prompt_examples(ids) -> list[prompting.Example]:
    """The examples ``ids`` as the prompt writes them, in their order."""
    rows = ContrastiveExample.objects.filter(pk__in=ids).select_related("sentence__turn__dialogue").order_by("position", "pk")
    return [
        prompting.Example(
            sentence=row.sentence.text, reference=row.sentence.turn.dialogue.reference,
            wrong=row.wrong_label, right=row.right_label, explanation=row.explanation,
        )
        for row in rows
    ]


def prediction_values(prediction, job=None) -> dict:
    """Step -> the voted value of each step of another kind than choice (multiple, scale, text) that has one: what a
    prediction says beside its label, voted from its samples in its job's protocol at the job's threshold (the
    API's predictions and the gold export's ``prediction`` both show these); empty for a protocol of choice steps.
    ``job``: the prediction's, when the caller holds it already (the API lists one job's predictions)."""
    job = job or prediction.job
    protocol = job_protocol(job)
    if not protocol.kind_steps():
        return {}
    return decided_values(prediction.sample_votes or [], prediction.label, protocol, job.threshold)


def latest_predictions_by_sentence(project, sentence_ids=None) -> dict[int, Prediction]:
    """For exports: each sentence's prediction from the most recent finished job that labelled it (its job's
    protocol version read with it, but for the document: a job's protocol is loaded once per process)."""
    queryset = (Prediction.objects.filter(job__project=project, job__status=AutoLabelJob.Status.DONE)
                .select_related("job__protocol_version").defer("job__protocol_version__document"))
    if sentence_ids is not None:
        queryset = queryset.filter(sentence_id__in=sentence_ids)
    latest: dict[int, Prediction] = {}
    for prediction in queryset.order_by("sentence_id", "-job__finished_at", "-job_id").iterator(chunk_size=2000):
        latest.setdefault(prediction.sentence_id, prediction)
    return latest


def latest_severities_by_sentence(project) -> dict[int, int]:
    """Each sentence's severity from the latest severity job that rated it."""
    latest = {}
    for sentence_id, severity in SeverityPrediction.objects.filter(
        job__project=project,
    ).order_by("sentence_id", "job_id").values_list("sentence_id", "severity"):
        latest[sentence_id] = severity
    return latest
