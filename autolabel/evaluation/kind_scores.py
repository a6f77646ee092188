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

from collections.abc import Sequence
from dataclasses import dataclass

from annotator.domain.protocol.kinds import multiple, scale, text
from annotator.domain.protocol.kinds.measures import Pair

MULTIPLE, SCALE, TEXT = "multiple", "scale", "text"

# One function per kind, in the kind's module (annotator/domain/protocol/kinds/<kind>.py: ``score``).
score_multiple = multiple.score
score_scale = scale.score
score_text = text.score

__all__ = ["Pair", "score_multiple", "score_scale", "score_text", "score_step", "KindItem",
           "protocol_kind_scores", "summary"]


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
        kappa = step.get("kappa_undefined") or shown(step["kappa"])
        figures = f"MAE {shown(step['mae'])}, quadratic-weighted kappa {kappa}"
    else:
        figures = f"not scored ({step['predicted']} predicted, {step['gold']} in gold)"
    return f"{step['step']} ({step['kind']}, {step['pairs']} sentences): {figures}"
