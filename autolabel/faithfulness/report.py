"""The LLM faithfulness report of a job (CogniBench Fig. 8 with honest intervals): reads and assembly.

Two queries: the per-turn counts of the job's finished turns (pre-labels and gold, one aggregate over
their sentences: ``faithfulness_counts``) and the turns of the job's random draws. The estimates are
``faithfulness.estimate_ratio``, per generator model and overall. The JSON shape (documented in docs/autolabel.md, stable) is ::

    {"job": id, "overall": group, "models": [group + {"generator_model": name}, ...], "calibration": {...},
     "measures": [{"id": measure, "title": its title}, ...]}
    group = {"sentences": int, "gold_sentences": int, "gold_turns": int,
             "<measure>": {"auto", "gold_only", "gold_only_ci95", "corrected", "corrected_ci95"}, ...}

Floats are rounded to 4 decimals. The measures come from the project's protocol (``measures(protocol)``), as
``annotator.domain.protocol.groups.rates`` defines them for this report and the reports page alike: the
hallucination rate (its hallucination group, over all sentences), each shown family's share of the sentences in
some family (of exactly two families only the second: the first's share is one minus it), and per family
holding hallucinations and other labels the share of its sentences that are hallucinated (a family made only of
hallucination labels has a rate of 1 by construction, and is left out). CogniBench: ``hallucination_rate``,
``cognitive_share``, ``factual_hallucination_rate``, ``cognitive_hallucination_rate``, as before protocols were
documents.

Only the gold of turns drawn at random for this job is used: gold chosen any other way (qualification
turns, disputes, an uncertainty draw, a lead's picks) would bias the correction. It is counted and
reported, not used. Every drawn turn with gold is used, on its gold sentences: a turn whose source left a
sentence unlabelled (CogniBench: 29 of 136 turns) never gets gold on it, and keeping only fully labelled
turns dropped a non-random part of the draw (those turns hallucinate less). The gold counts are over the
gold sentences; the judge's counts stay over the whole turn, drawn or not, since prediction-powered
inference is unbiased only if the judge's counts are the same function of a turn on drawn and other
turns. So ``gold_only`` and ``corrected`` estimate the rate over the sentences people label. Drawn turns
with no gold at all (not annotated yet) are left out, said so, and a warning is raised from
``LEFT_OUT_WARNING_SHARE`` of the draw on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from annotator.domain.vocabulary import DrawStrategy
from annotator.models import DrawnTurn, GoldLabel
from annotator.projects.protocol_mapping import version_carry

from annotator.domain.protocol.groups import rates, reading

from autolabel.evaluation.protocol_views import job_protocol
from autolabel.models import JobTurn
from autolabel.faithfulness.counts import TurnTable, hallucinated_in, read_turn_table

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Measure:
    id: str
    title: str
    numerator: str  # the names of the per-turn counts (faithfulness.counts)
    denominator: str


def measures(protocol) -> tuple:
    """The report's measures under ``protocol``: the rates of ``protocol.groups.rates`` (the reports page's
    too, one definition), each as the per-turn counts it divides."""
    found = []
    for rate in rates(reading(protocol)):
        if rate.id == "hallucination_rate":
            numerator, denominator = "hallucinated", "sentences"
        elif rate.id.endswith("_share"):
            numerator, denominator = rate.family, "relevant"  # the sentences in some family (counts.py)
        else:
            numerator, denominator = hallucinated_in(rate.family), rate.family
        found.append(Measure(rate.id, rate.title, numerator, denominator))
    return tuple(found)


DECIMALS = 4
# From this share of the drawn turns left out (no gold yet), the report warns that the estimate may be
# biased: the turns that wait longest may not be a random part of the draw.
LEFT_OUT_WARNING_SHARE = 0.1


def random_draw_turn_ids(job) -> set[int]:
    return set(DrawnTurn.objects.filter(
        draw__project_id=job.project_id, draw__strategy=DrawStrategy.RANDOM, draw__source_job_id=job.pk,
    ).values_list("turn_id", flat=True))


@dataclass
class Calibration:
    """Where the gold of the job's turns comes from, for the sentence the page and the command print."""

    turns: int = 0  # drawn at random for this job, with gold on at least one sentence: used
    sentences: int = 0  # their gold sentences
    drawn: int = 0  # drawn at random for this job, finished by the job
    partial_turns: int = 0  # used turns with sentences without gold
    sentences_without_gold: int = 0  # those sentences (unlabelled in the source, or not decided yet)
    drawn_waiting: int = 0  # drawn at random, no gold yet: left out
    other_turns: int = 0  # gold not drawn at random: never used
    other_sentences: int = 0
    # In a project with several protocol versions: the job's version (the one every figure is in), and the gold
    # sentences of its turns whose label does not carry over to it (left out); None: one version, nothing said.
    protocol_version: int | None = None
    gold_not_carried: int = 0

    @property
    def left_out_share(self) -> float:
        return self.drawn_waiting / self.drawn if self.drawn else 0.0

    @property
    def bias_warning(self) -> bool:
        return self.drawn_waiting > 0 and self.left_out_share >= LEFT_OUT_WARNING_SHARE

    @property
    def statement(self) -> str:
        parts = []
        if self.turns:
            parts.append(f"{_count(self.sentences, 'gold sentence')} on {_count(self.turns, 'turn')} drawn at random "
                         f"for this job correct the estimates.")
        else:
            parts.append("No gold drawn at random for this job yet: only the pre-labeler's estimates are shown.")
        if self.partial_turns:
            parts.append(f"{_count(self.sentences_without_gold, 'sentence')} of {_count(self.partial_turns, 'drawn turn')} "
                         f"{'has' if self.sentences_without_gold == 1 else 'have'} no gold (left unlabelled by the "
                         f"source, or not decided yet): those turns are used on their gold sentences, and the "
                         f"gold-only and corrected figures are over sentences with gold.")
        if self.drawn_waiting:
            verb = "has" if self.drawn_waiting == 1 else "have"
            parts.append(f"{_count(self.drawn_waiting, 'drawn turn')} {verb} no gold yet and "
                         f"{'is' if self.drawn_waiting == 1 else 'are'} left out "
                         f"({round(100 * self.left_out_share)} % of the {_count(self.drawn, 'drawn turn')}).")
        if self.protocol_version is not None:
            parts.append(f"Every figure is in protocol version {self.protocol_version} (the job's): gold decided "
                         f"under an older version counts as its mapping carries it over"
                         + (f"; {_count(self.gold_not_carried, 'gold sentence')} decided under a later version or "
                            f"with a label that does not carry over {'is' if self.gold_not_carried == 1 else 'are'} "
                            f"left out." if self.gold_not_carried
                            else "."))
        if self.bias_warning:
            parts.append("Warning: the estimates may be biased until these turns have gold, if they are not a random "
                         "part of the draw (turns that wait longest are often the hardest).")
        if self.other_turns:
            verb = "was" if self.other_sentences == 1 else "were"
            parts.append(f"{_count(self.other_sentences, 'gold sentence')} on {_count(self.other_turns, 'turn')} "
                         f"{verb} not drawn at random (qualification, disputes, other draws…) and "
                         f"{'is' if self.other_sentences == 1 else 'are'} not used.")
        return " ".join(parts)

    def as_json(self) -> dict:
        return {"drawn_turns": self.drawn, "used_turns": self.turns, "gold_sentences": self.sentences,
                "partial_turns": self.partial_turns, "sentences_without_gold": self.sentences_without_gold,
                "left_out_turns": self.drawn_waiting, "left_out_share": _rounded(self.left_out_share),
                "bias_warning": self.bias_warning, "other_turns": self.other_turns,
                "other_gold_sentences": self.other_sentences, "statement": self.statement,
                **({"protocol_version": self.protocol_version, "gold_not_carried": self.gold_not_carried}
                   if self.protocol_version is not None else {})}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _rounded(value):
    return None if value is None else round(float(value), DECIMALS)


def _group(table: TurnTable, rows: np.ndarray, calibrated: np.ndarray, measured: tuple) -> dict:
    from autolabel.faithfulness.estimators import estimate_ratio  # NumPy: see faithfulness_report

    in_group_calibrated = calibrated[rows]
    group = {"sentences": int(table.sentences[rows].sum()),
             "gold_sentences": int(table.gold_sentences[rows][in_group_calibrated].sum()),
             "gold_turns": int(in_group_calibrated.sum())}
    for measure in measured:
        numerator, denominator = measure.numerator, measure.denominator
        estimate = estimate_ratio(
            table.predicted[numerator][rows], table.predicted[denominator][rows], in_group_calibrated,
            table.gold[numerator][rows][in_group_calibrated], table.gold[denominator][rows][in_group_calibrated],
        )
        group[measure.id] = {
            "auto": _rounded(estimate.auto),
            "gold_only": _rounded(estimate.gold_only),
            "gold_only_ci95": [_rounded(x) for x in estimate.gold_only_ci95] if estimate.gold_only_ci95 else None,
            "corrected": _rounded(estimate.corrected),
            "corrected_ci95": [_rounded(x) for x in estimate.corrected_ci95] if estimate.corrected_ci95 else None,
        }
    return group


def _gold_carry(job):
    """How gold counts under the job's protocol version, in a project with several versions (None otherwise, and
    for a job older than the record of its version: the statement stays the one it always was)."""
    if job.protocol_version_id is None:
        return None
    carry = version_carry(job.project, as_of=job.protocol_version_id)
    return carry if carry.has_older else None


def faithfulness_report(job) -> tuple[dict, Calibration]:
    """(the report as documented JSON, where its gold came from)."""
    import numpy as np  # here, not at the top: the URLconf reads this module (its measures), a report needs NumPy

    protocol = job_protocol(job)
    measured = measures(protocol)
    carry = _gold_carry(job)
    table = read_turn_table(job, protocol, carry=carry)
    drawn = np.isin(table.turn_ids, np.fromiter(random_draw_turn_ids(job), dtype=np.int64))
    has_gold = table.gold_sentences > 0
    calibrated = drawn & has_gold  # every drawn turn with gold, on its gold sentences
    partial = calibrated & (table.gold_sentences < table.sentences)
    calibration = Calibration(
        turns=int(calibrated.sum()), sentences=int(table.gold_sentences[calibrated].sum()), drawn=int(drawn.sum()),
        partial_turns=int(partial.sum()),
        sentences_without_gold=int((table.sentences - table.gold_sentences)[partial].sum()),
        drawn_waiting=int((drawn & ~has_gold).sum()),
        other_turns=int((has_gold & ~drawn).sum()), other_sentences=int(table.gold_sentences[has_gold & ~drawn].sum()),
    )
    every_row = np.arange(len(table.turn_ids))
    report = {"job": job.pk, "overall": _group(table, every_row, calibrated, measured), "models": []}
    for code, name in sorted(table.model_names.items(), key=lambda item: item[1]):
        report["models"].append({**_group(table, np.flatnonzero(table.model_codes == code), calibrated, measured),
                                 "generator_model": name})
    if carry is not None:
        calibration.protocol_version = carry.current_number
        gold = GoldLabel.objects.filter(sentence__turn_id__in=JobTurn.objects.filter(job=job, done=True)
                                        .values("turn_id")).count()
        calibration.gold_not_carried = gold - int(table.gold_sentences.sum())
    report["calibration"] = calibration.as_json()
    report["measures"] = [{"id": measure.id, "title": measure.title} for measure in measured]
    return report, calibration
