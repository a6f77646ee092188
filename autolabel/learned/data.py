"""Reads of the learned judge: a project's gold sentences as examples, the sentences a job predicts, the votes of
the project's latest finished pre-labelling job.

Only gold in the project's current protocol is learned from (a label the document no longer has is left out),
and only turns outside the qualification set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count

from annotator.models import Sentence
from annotator.projects.protocols import protocol_for

from autolabel.evaluation.scores import word_count
from autolabel.learned.features import Example
from autolabel.models import AutoLabelJob, Prediction


@dataclass
class GoldSet:
    """The gold a judge learns from: parallel lists, one entry per sentence."""

    examples: list[Example]
    gold: list[str]
    turns: list[int]
    words: list[int]
    sentence_ids: list[int]
    votes_job_id: int | None
    # Where each sentence is, as the exports name it: turn id, dialogue and record (the source's ids), sentence index.
    places: list[dict] = field(default_factory=list)

    def __len__(self):
        return len(self.examples)


def votes_job(project) -> AutoLabelJob | None:
    """The project's latest finished LLM pre-labelling job in its current protocol version, if any (a learned
    judge's own job never feeds another judge)."""
    return (AutoLabelJob.objects.filter(project=project, status=AutoLabelJob.Status.DONE,
                                        protocol_version_id=project.protocol_version_id, learned_judge__isnull=True)
            .order_by("-finished_at", "-pk").first())


def job_votes(job_id: int | None, sentence_ids=None) -> dict[int, list]:
    """sentence id -> the job's sample votes ({} without a job)."""
    if job_id is None:
        return {}
    rows = Prediction.objects.filter(job_id=job_id)
    if sentence_ids is not None:
        rows = rows.filter(sentence__turn_id__in=sentence_ids)
    return dict(rows.values_list("sentence_id", "sample_votes").iterator(chunk_size=5000))


def _turn_sizes(turn_ids) -> dict[int, int]:
    rows = Sentence.objects.filter(turn_id__in=turn_ids).values("turn_id").annotate(n=Count("pk"))
    return {row["turn_id"]: row["n"] for row in rows}


def gold_set(project, *, with_votes: bool = True) -> GoldSet:
    """Every gold sentence of the project in its current protocol, with its turn's reference and question."""
    labels = set(protocol_for(project).labels)
    job = votes_job(project) if with_votes else None
    votes = job_votes(job.pk if job else None)
    rows = list(
        Sentence.objects.filter(turn__dialogue__project=project, turn__is_qualification=False, gold__isnull=False)
        .order_by("turn_id", "index")
        .values_list("pk", "turn_id", "index", "text", "gold__label", "turn__dialogue__reference",
                     "turn__user_message", "turn__dialogue__external_id", "turn__external_id")
    )
    sizes = _turn_sizes({row[1] for row in rows})
    found = GoldSet([], [], [], [], [], job.pk if job else None)
    for sentence_id, turn_id, index, text, label, reference, question, dialogue, record in rows:
        if label not in labels:
            continue
        found.examples.append(Example(text, reference, question, index, sizes.get(turn_id, 1),
                                      tuple(votes.get(sentence_id, ()))))
        found.gold.append(label)
        found.turns.append(turn_id)
        found.words.append(word_count(text))
        found.sentence_ids.append(sentence_id)
        found.places.append({"sentence_id": sentence_id, "turn_id": turn_id, "dialogue": dialogue, "record": record,
                             "sentence_index": index})
    return found
