"""How far the pre-labeler's confidence can be trusted, against gold, as pure functions.

A prediction's *confidence* is the share of its samples that gave the answer the
vote chose, counting only the samples that answered (an abstaining sample, lost
to a fault or an unreadable reply, has no say):

- binary ("hallucinated or not", the protocol's hallucination group): the share of answering samples that voted the
  predicted hallucinated / not hallucinated; its probability of "hallucinated" is
  the share that voted hallucinated;
- n-way (the label, over the protocol's labels): the share of answering samples that gave the voted
  label (0 when the vote has no label); its probability vector is each label's
  share of the answering samples (a sample that stopped before a label gives
  none, so the vector may sum to less than 1).

A sentence whose every sample abstained has no confidence and is left out
(counted as ``abstained``).

Calibration then asks: of the predictions made with confidence about 0.8, are
about 80 % right? The reliability table puts confidences in 10 equal-width bins
([0, 0.1), [0.1, 0.2), ... [0.9, 1.0], 1.0 in the last) with, per bin, the
count, mean confidence and accuracy. The expected calibration error (ECE) is the
mean gap between confidence and accuracy, weighted by the bins' counts. The Brier
score is the mean squared difference between the probability and the outcome
(binary: (p - y)^2; n-way: the sum over the labels of (p_k - y_k)^2, from 0
for certain and right to 2 for certain and wrong).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from autolabel.evaluation.scores import collapse, decision

BINS = 10
KINDS = ("binary", "label")
KIND_NAMES = {"binary": "hallucinated or not", "label": "the protocol's label"}


@dataclass(frozen=True)
class Forecast:
    """One prediction as a forecast: how confident, whether right, and the Brier term."""

    confidence: float
    correct: bool
    brier: float


def forecasts(protocol, gold: str, votes: Sequence[dict], threshold: int) -> dict[str, Forecast] | None:
    """The binary (the protocol's hallucination group) and label forecasts of one sentence (over the protocol's
    labels); None when every sample abstained."""
    decided = decision(votes, threshold, protocol)
    answering = decided.hallucinated_votes + decided.faithful_votes
    if answering == 0:
        return None
    p_hallucinated = decided.hallucinated_votes / answering
    gold_hallucinated = gold in protocol.hallucination_labels
    binary = Forecast(
        confidence=p_hallucinated if decided.hallucinated else 1 - p_hallucinated,
        correct=decided.hallucinated == gold_hallucinated,
        brier=(p_hallucinated - (1.0 if gold_hallucinated else 0.0)) ** 2,
    )
    shares = {label: 0.0 for label in protocol.labels}
    for vote in votes:
        if vote.get("hallucinated") is not None and vote.get("label") in shares:
            shares[vote["label"]] += 1 / answering
    label = Forecast(
        confidence=shares.get(decided.label, 0.0),
        correct=bool(decided.label) and decided.label == gold,
        brier=sum((share - (1.0 if name == gold else 0.0)) ** 2 for name, share in shares.items()),
    )
    return {"binary": binary, "label": label}


def bin_index(confidence: float) -> int:
    """The bin of a confidence: [k/10, (k+1)/10), the last bin closed. A hair of tolerance so that 3/10 is in bin 3."""
    return min(BINS - 1, max(0, math.floor(confidence * BINS + 1e-9)))


def reliability(points: Iterable[tuple[Forecast, int]]) -> dict:
    """The reliability table (10 bins), ECE, Brier score, accuracy and mean confidence of some forecasts.

    ``points`` are (forecast, how many sentences made it).
    """
    points = list(points)
    bins = [{"low": k / BINS, "high": (k + 1) / BINS, "count": 0, "confidence_sum": 0.0, "correct": 0}
            for k in range(BINS)]
    for point, count in points:
        cell = bins[bin_index(point.confidence)]
        cell["count"] += count
        cell["confidence_sum"] += point.confidence * count
        cell["correct"] += int(point.correct) * count
    n = sum(count for _, count in points)
    ece = 0.0
    rows = []
    for cell in bins:
        count = cell["count"]
        confidence = cell["confidence_sum"] / count if count else None
        accuracy = cell["correct"] / count if count else None
        if count:
            ece += count / n * abs(accuracy - confidence)
        rows.append({
            "low": round(cell["low"], 2), "high": round(cell["high"], 2), "count": count, "correct": cell["correct"],
            "confidence": _round(confidence), "accuracy": _round(accuracy),
        })
    return {
        "n": n,
        "bins": rows,
        "ece": _round(ece) if n else None,
        "brier": _round(sum(p.brier * c for p, c in points) / n) if n else None,
        "accuracy": _round(sum(p.correct * c for p, c in points) / n) if n else None,
        "mean_confidence": _round(sum(p.confidence * c for p, c in points) / n) if n else None,
    }


def calibration(protocol, items: Iterable, threshold: int) -> dict:
    """Per kind ("binary", "label"): the reliability table, ECE and Brier against the project's ``protocol``; and
    how many sentences abstained.

    ``items`` are ``evaluation.Item`` (gold label, sample votes); the words do not count here: a forecast is
    a sentence.
    """
    points: dict[str, list[tuple[Forecast, int]]] = {kind: [] for kind in KINDS}
    abstained = 0
    for item in collapse(items):
        forecast = forecasts(protocol, item.gold, item.votes, threshold)
        if forecast is None:
            abstained += item.sentences
            continue
        for kind in KINDS:
            points[kind].append((forecast[kind], item.sentences))
    return {"threshold": threshold, "abstained": abstained, **{kind: reliability(points[kind]) for kind in KINDS}}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
