"""Scores of a protocol's non-choice steps (multiple, scale, text) against gold, as pure functions.

A sentence counts for a step when both the gold path and the pre-label carry a value for it (the gold walked
the step and the vote decided a value): a step the two walks did not share is a matter of the label, which
the label's F1 already scores.

- multiple: per answer, the sentences are a binary decision (was the answer chosen?): precision, recall and F1
  of the pre-label's choices against gold's, and their micro average over every answer (the counts pooled).
  Precision is undefined when the answer was never predicted, recall (and F1) when gold never chose it.
- scale: the mean absolute error in points, and Cohen's κ with quadratic weights
  (``sklearn.metrics.cohen_kappa_score(weights="quadratic")``) over the scale's points: a miss by two points
  costs four times a miss by one. κ is undefined with fewer than two pairs or when it divides by zero (every
  pair on one point).
- text: not scored (free text has no right answer to count against); the pairs are counted.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

MULTIPLE, SCALE, TEXT = "multiple", "scale", "text"


@dataclass(frozen=True)
class Pair:
    """A sentence's gold value and predicted value for one step (either None when absent)."""

    gold: object
    predicted: object


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _f1(correct: int, predicted: int, gold: int) -> float | None:
    return round(2 * correct / (predicted + gold), 4) if gold else None


def _shared(pairs: Sequence[Pair]) -> list[Pair]:
    return [pair for pair in pairs if pair.gold is not None and pair.predicted is not None]


def score_multiple(pairs: Sequence[Pair], answers: Sequence[str]) -> dict:
    """Per-answer precision, recall and F1 (answers in document order) and the micro average."""
    # A value that is not a list (a path stored before the step was a multiple one) is no set of answers.
    shared = [pair for pair in _shared(pairs) if isinstance(pair.gold, (list, tuple))
              and isinstance(pair.predicted, (list, tuple))]
    per_answer = {}
    totals = [0, 0, 0]
    for answer in answers:
        correct = sum(1 for pair in shared if answer in pair.gold and answer in pair.predicted)
        predicted = sum(1 for pair in shared if answer in pair.predicted)
        gold = sum(1 for pair in shared if answer in pair.gold)
        totals = [totals[0] + correct, totals[1] + predicted, totals[2] + gold]
        per_answer[answer] = {"precision": _ratio(correct, predicted), "recall": _ratio(correct, gold),
                              "f1": _f1(correct, predicted, gold), "predicted": predicted, "gold": gold,
                              "correct": correct}
    correct, predicted, gold = totals
    exact = sum(1 for pair in shared if set(pair.gold) == set(pair.predicted))
    return {"kind": MULTIPLE, "metric": "per-answer F1", "pairs": len(shared), "answers": per_answer,
            "micro": {"precision": _ratio(correct, predicted), "recall": _ratio(correct, gold),
                      "f1": _f1(correct, predicted, gold)},
            "exact_match": _ratio(exact, len(shared))}


def quadratic_kappa(gold: Sequence[int], predicted: Sequence[int], points: Sequence[int]) -> float | None:
    """Quadratic-weighted Cohen's κ (scikit-learn's), None when undefined."""
    if len(gold) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score  # scikit-learn is heavy to import: only when scoring a scale

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a zero division is reported as NaN, which is None here
        kappa = cohen_kappa_score(list(gold), list(predicted), labels=list(points), weights="quadratic")
    return None if math.isnan(kappa) else round(float(kappa), 4)


def _point(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def score_scale(pairs: Sequence[Pair], minimum: int, maximum: int) -> dict:
    """Mean absolute error (points) and quadratic-weighted κ over the scale ``minimum..maximum``."""
    shared = [pair for pair in _shared(pairs) if _point(pair.gold) and _point(pair.predicted)]
    gold = [pair.gold for pair in shared]
    predicted = [pair.predicted for pair in shared]
    mae = round(sum(abs(g - p) for g, p in zip(gold, predicted)) / len(shared), 4) if shared else None
    return {"kind": SCALE, "metric": "mean absolute error, quadratic-weighted κ", "pairs": len(shared),
            "mae": mae, "kappa": quadratic_kappa(gold, predicted, range(minimum, maximum + 1)),
            "exact_match": _ratio(sum(1 for g, p in zip(gold, predicted) if g == p), len(shared))}


def score_text(pairs: Sequence[Pair]) -> dict:
    return {"kind": TEXT, "metric": "not scored (counted)", "pairs": len(_shared(pairs)),
            "predicted": sum(1 for pair in pairs if pair.predicted is not None),
            "gold": sum(1 for pair in pairs if pair.gold is not None)}


def score_step(kind: str, pairs: Sequence[Pair], *, answers: Sequence[str] = (), minimum: int = 1,
               maximum: int = 5) -> dict:
    """The score of one step of ``kind`` (the dispatch the evaluation uses)."""
    if kind == MULTIPLE:
        return score_multiple(pairs, answers)
    if kind == SCALE:
        return score_scale(pairs, minimum, maximum)
    if kind == TEXT:
        return score_text(pairs)
    raise ValueError(f"no score for a step of kind {kind!r}")


@dataclass(frozen=True)
class KindItem:
    """A sentence with gold, for the non-choice steps: its gold path and the samples' votes (with their values)."""

    gold_path: dict
    votes: Sequence[dict]


def protocol_kind_scores(protocol, items: Sequence[KindItem], threshold: int) -> list[dict]:
    """Per non-choice step of ``protocol`` (in document order): its kind, metric and scores at ``threshold``.

    The predicted value is the vote of the samples on the majority path of the voted label
    (``kind_votes.decide_kinds``); the gold value is the gold path's."""
    from autolabel.evaluation.scores import decision
    from autolabel.labelling.kind_votes import decide_kinds

    steps = protocol.kind_steps()
    pairs: dict[str, list[Pair]] = {step: [] for step in steps}
    for item in items:
        label = decision(item.votes, threshold, protocol).label
        decided = decide_kinds(item.votes, label, protocol, threshold)
        for step in steps:
            predicted = decided[step].value if step in decided else None
            pairs[step].append(Pair((item.gold_path or {}).get(step), predicted))
    report = []
    for step_id in steps:
        step = protocol.step(step_id)
        scores = score_step(step.kind, pairs[step_id], answers=step.values, minimum=step.min or 1,
                            maximum=step.max or 1)
        report.append({"step": step_id, "question": step.question, **scores})
    return report


def summary(step: dict) -> str:
    """One line of a step's scores (``evaluate_autolabel``'s text output)."""
    def shown(value):
        return "-" if value is None else f"{value:.3f}"

    if step["kind"] == MULTIPLE:
        answers = ", ".join(f"{answer} {shown(figures['f1'])}" for answer, figures in step["answers"].items())
        figures = f"micro F1 {shown(step['micro']['f1'])}; per answer F1: {answers}"
    elif step["kind"] == SCALE:
        figures = f"MAE {shown(step['mae'])}, quadratic-weighted kappa {shown(step['kappa'])}"
    else:
        figures = f"not scored ({step['predicted']} predicted, {step['gold']} in gold)"
    return f"{step['step']} ({step['kind']}, {step['pairs']} sentences): {figures}"
