"""Reads for a job's scores, calibration, the pre-labeler as a rater, and the comparison of two jobs (cached).

Each figure reads every prediction of a job with its gold (and, for the rater
table, every submitted human label of those sentences), so it is computed once
per job state and project data version (gold and submitted slots: the reports'
``data_version``) and kept in the cache, as the reports page keeps its figures.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from annotator.models import Assignment, Sentence, SentenceAnnotation
from annotator.reports.agreement import cached, data_version

from autolabel.evaluation import calibration
from autolabel.evaluation import kind_scores
from autolabel.evaluation import scores as evaluation
from autolabel.evaluation.protocol_views import job_protocol
from autolabel.models import AutoLabelJob, Prediction

if TYPE_CHECKING:
    from autolabel.evaluation.rater_agreement import RatedSentence


def evaluation_items(job: AutoLabelJob):
    """(sentence words, gold label, sample votes) for every predicted sentence that has gold."""
    rows = (
        Prediction.objects.filter(job=job, sentence__gold__isnull=False)
        .values_list("sentence__text", "sentence__gold__label", "sample_votes")
    )
    for text, gold, votes in rows.iterator(chunk_size=2000):
        yield evaluation.Item(evaluation.word_count(text), gold, votes)


def kind_items(job: AutoLabelJob):
    """(gold path, sample votes) for every predicted sentence that has gold: the non-choice steps' scores."""
    rows = (Prediction.objects.filter(job=job, sentence__gold__isnull=False)
            .values_list("sentence__gold__path", "sample_votes"))
    for path, votes in rows.iterator(chunk_size=2000):
        yield kind_scores.KindItem(path or {}, votes)


def job_evaluation(job: AutoLabelJob) -> dict:
    protocol = job_protocol(job)
    report = evaluation.evaluate(protocol, list(evaluation_items(job)), job.samples, job.threshold)
    if protocol.kind_steps():
        report["kind_steps"] = kind_scores.protocol_kind_scores(protocol, list(kind_items(job)), job.threshold)
    report["protocol"] = {"id": protocol.id, "version": protocol.version, "name": protocol.name}
    report["job"] = job.pk
    report["model"] = job.model
    report["prompt_version"] = job.prompt_version.version
    report["gold_sentences_in_scope"] = Sentence.objects.filter(
        turn_id__in=job.job_turns.values("turn_id"), gold__isnull=False
    ).count()
    return report


def _job_state(job: AutoLabelJob) -> str:
    # A running job gains predictions: its figures are cached per turns done, a finished job's for good.
    return f"{job.pk}:{job.status}:{job.done_turns}"


def _cached(job: AutoLabelJob, name: str, compute, extra: str = ""):
    # The protocol's checksum too: the figures of one protocol are never served for another.
    version = f"{data_version(job.project)}|{_job_state(job)}|{job_protocol(job).checksum[:16]}{extra}"
    return cached(job.project, f"autolabel:{name}:{job.pk}", compute, version)


def job_scores(job: AutoLabelJob) -> dict:
    """``job_evaluation`` (the scores by threshold, the baselines, the confusion matrix), cached."""
    return _cached(job, "scores", lambda: job_evaluation(job))


def job_calibration(job: AutoLabelJob) -> dict:
    """Reliability tables, ECE and Brier of the job's predictions against gold, at the job's threshold."""
    return _cached(job, "calibration", lambda: calibration.calibration(job_protocol(job), evaluation_items(job),
                                                                             job.threshold))


def rated_sentences(job: AutoLabelJob) -> list[RatedSentence]:
    """Every sentence the job predicted: its gold, the pre-label and the submitted human labels (by username)."""
    # The rater table and the comparison are NumPy: imported when asked for, not by every web worker (issue 49).
    from autolabel.evaluation import rater_agreement

    humans: dict[int, dict[str, str]] = defaultdict(dict)
    annotations = SentenceAnnotation.objects.filter(
        sentence__predictions__job=job, assignment__project_id=job.project_id,
        assignment__status=Assignment.Status.SUBMITTED, assignment__is_qualification=False,
    ).exclude(label="").values_list("sentence_id", "assignment__annotator__username", "label")
    for sentence_id, username, label in annotations.iterator(chunk_size=5000):
        humans[sentence_id][username] = label
    rows = Prediction.objects.filter(job=job).values_list("sentence_id", "label", "stage1_kind", "sentence__gold__label")
    return [
        rater_agreement.RatedSentence(gold=gold, prelabel=label, prelabel_kind=kind, humans=humans.get(sentence_id, {}))
        for sentence_id, label, kind, gold in rows.iterator(chunk_size=5000)
    ]


def job_rater_agreement(job: AutoLabelJob) -> dict:
    from autolabel.evaluation import rater_agreement  # NumPy: see rated_sentences

    return _cached(job, "rater", lambda: rater_agreement.rater_agreement(job_protocol(job),
                                                                         rated_sentences(job)))


def comparable_jobs(job: AutoLabelJob):
    """The project's other finished jobs, newest first: what the comparison form offers."""
    return (
        AutoLabelJob.objects.filter(project_id=job.project_id, status=AutoLabelJob.Status.DONE)
        .exclude(pk=job.pk).select_related("prompt_version").order_by("-finished_at", "-pk")
    )


def _votes(job: AutoLabelJob) -> dict[int, list]:
    rows = Prediction.objects.filter(job=job, sentence__gold__isnull=False).values_list("sentence_id", "sample_votes")
    return dict(rows.iterator(chunk_size=5000))


def job_comparison(job_a: AutoLabelJob, job_b: AutoLabelJob) -> dict:
    """F1 per view of both jobs on the sentences both predicted that have gold, with bootstrap intervals."""

    def compute():
        from autolabel.evaluation import comparison  # NumPy: see rated_sentences

        votes_a, votes_b = _votes(job_a), _votes(job_b)
        shared = set(votes_a) & set(votes_b)
        sentences = {}
        # Read in full and filtered here: a list of shared ids in the query would pass SQLite's variable limit.
        rows = Prediction.objects.filter(job=job_a, sentence__gold__isnull=False).values_list(
            "sentence_id", "sentence__turn_id", "sentence__text", "sentence__gold__label")
        for sentence_id, turn_id, text, gold in rows.iterator(chunk_size=5000):
            if sentence_id in shared:
                sentences[sentence_id] = (turn_id, evaluation.word_count(text), gold)
        turns_a, turns_b = comparison.paired_turns(sentences, votes_a, votes_b)
        report = comparison.compare(job_protocol(job_a), turns_a, job_a.threshold, turns_b, job_b.threshold)
        report["only_a"] = len(set(votes_a) - shared)
        report["only_b"] = len(set(votes_b) - shared)
        return report

    return _cached(job_a, f"comparison:{job_b.pk}", compute, f"|{_job_state(job_b)}")


def job_evaluation_report(job: AutoLabelJob, other: AutoLabelJob | None = None) -> dict:
    """The API's and the command's report: the evaluation page's numbers, calibration, the rater table and, with
    ``other``, the comparison (A: ``job``, B: ``other``)."""
    report = dict(job_scores(job))
    report["calibration"] = job_calibration(job)
    report["rater"] = job_rater_agreement(job)
    if other is not None:
        report["comparison"] = {"a": job.pk, "b": other.pk, **job_comparison(job, other)}
    return report
