"""Evaluation of predictions against gold, as pure functions (CogniBench's measure).

Hallucination detection is scored at the sentence level, weighted by words:

    recall    = words of gold-hallucinated sentences that were predicted hallucinated
                / words of gold-hallucinated sentences
    precision = words of predicted-hallucinated sentences that are gold-hallucinated
                / words of predicted-hallucinated sentences
    F1        = harmonic mean

for three views of a hallucination: overall (invented, misleading, speculative),
factual (invented) and cognitive (misleading + speculative). In the factual and
cognitive views a prediction counts when its kind matches: a sentence predicted
hallucinated is factual when its label is invented (or, without a label, its
agreeing samples called it factual), cognitive when its label is cognitive.

The predictions keep every sample's vote, so the same job is scored at every
threshold from 1 to k. The four-way cognitive accuracy and confusion matrix use
one threshold (the job's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotator.domain.vocabulary import COGNITIVE_HALLUCINATED_LABELS, COGNITIVE_LABELS, HALLUCINATED_LABELS, Label

from .voting import decide

VIEWS = ("overall", "factual", "cognitive")
COGNITIVE_ORDER = [Label.MISLEADING.value, Label.SPECULATIVE.value, Label.RELIABLE.value, Label.UNEQUIVOCAL.value]
NOT_COGNITIVE = "not cognitive"
NO_LABEL = "no label"


@dataclass(frozen=True)
class Item:
    """One sentence with gold: its word count, gold label and the samples' votes."""

    words: int
    gold: str
    votes: Sequence[dict]


def word_count(text: str) -> int:
    return len(text.split())


def _gold_positive(view: str, gold: str) -> bool:
    if view == "overall":
        return gold in HALLUCINATED_LABELS
    if view == "factual":
        return gold == Label.INVENTED
    return gold in COGNITIVE_HALLUCINATED_LABELS


def _predicted_positive(view: str, decision) -> bool:
    if not decision.hallucinated:
        return False
    if view == "overall":
        return True
    if decision.label:
        is_cognitive = decision.label in COGNITIVE_LABELS
    else:
        is_cognitive = decision.kind == "cognitive"
    return is_cognitive if view == "cognitive" else not is_cognitive


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def detection_scores(items: Iterable[Item], threshold: int) -> dict:
    """Word-weighted precision, recall and F1 per view at one threshold."""
    totals = {view: {"tp": 0, "predicted": 0, "gold": 0} for view in VIEWS}
    for item in items:
        decision = decide(item.votes, threshold)
        for view in VIEWS:
            gold = _gold_positive(view, item.gold)
            predicted = _predicted_positive(view, decision)
            if gold:
                totals[view]["gold"] += item.words
            if predicted:
                totals[view]["predicted"] += item.words
            if gold and predicted:
                totals[view]["tp"] += item.words
    scores = {}
    for view, t in totals.items():
        precision = _ratio(t["tp"], t["predicted"])
        recall = _ratio(t["tp"], t["gold"])
        f1 = None
        if precision is not None and recall is not None:
            f1 = round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0
        scores[view] = {
            "precision": precision, "recall": recall, "f1": f1,
            "correct_words": t["tp"], "predicted_words": t["predicted"], "gold_words": t["gold"],
        }
    return scores


def cognitive_confusion(items: Iterable[Item], threshold: int) -> dict:
    """Four-way accuracy on gold-cognitive sentences and the confusion matrix (sentence counts).

    Rows are gold labels; columns the four labels, then "not cognitive" (the
    prediction is factual or irrelevant) and "no label" (no agreeing sample gave one).
    """
    columns = COGNITIVE_ORDER + [NOT_COGNITIVE, NO_LABEL]
    matrix = {gold: {column: 0 for column in columns} for gold in COGNITIVE_ORDER}
    for item in items:
        if item.gold not in matrix:
            continue
        label = decide(item.votes, threshold).label
        column = label if label in COGNITIVE_ORDER else (NOT_COGNITIVE if label else NO_LABEL)
        matrix[item.gold][column] += 1
    total = sum(sum(row.values()) for row in matrix.values())
    correct = sum(matrix[gold][gold] for gold in COGNITIVE_ORDER)
    predicted_cognitive = sum(matrix[g][c] for g in COGNITIVE_ORDER for c in COGNITIVE_ORDER)
    return {
        "columns": columns,
        "rows": COGNITIVE_ORDER,
        "matrix": matrix,
        "total": total,
        "correct": correct,
        "accuracy": _ratio(correct, total),
        "accuracy_when_cognitive": _ratio(correct, predicted_cognitive),
    }


def evaluate(items: Sequence[Item], samples: int, threshold: int) -> dict:
    """The full report: detection scores for thresholds 1..samples, cognitive accuracy at ``threshold``."""
    items = list(items)
    return {
        "sentences": len(items),
        "words": sum(item.words for item in items),
        "samples": samples,
        "threshold": threshold,
        "thresholds": {t: detection_scores(items, t) for t in range(1, max(samples, 1) + 1)},
        "cognitive": cognitive_confusion(items, threshold),
    }
