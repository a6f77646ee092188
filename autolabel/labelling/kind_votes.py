"""The vote over the samples for a protocol's non-choice steps (multiple, scale, text), as pure functions.

The label is voted by ``voting.decide``; a step of another kind is voted here, over the samples on the
*majority path*: those whose reading ended on the decided label (the caller picks them). Each function takes
one value per such sample, in sample order, ``None`` where the sample gave no valid value for the step (it
abstains on the step, as a sample that could not be read abstains on the label).

- multiple: per-answer majority. An answer is chosen when at least ``threshold`` samples chose it, the job's
  threshold for the label (5 samples, threshold 3: three samples must pick "fabricated fact"). The result must
  still be a value the step accepts, ``min <= len <= max``: when fewer answers reach the threshold than the
  step's ``min``, the most-chosen of the others (ties: document order) are added until ``min`` is reached, as
  long as at least one sample chose them; when more reach it than ``max``, the most-chosen ``max`` are kept
  (ties: document order). No valid value at all (or too few chosen answers to reach ``min``) gives ``None``.
  The chosen values are returned in the step's document order, as a path stores them.
- scale: the median of the valid values. With an even count it is the *lower* of the two middle values
  (``statistics.median_low``): always a point some sample gave, never a half point the scale does not have, and
  on a severity scale it does not overstate what half the samples said.
- text: the first valid reply (in sample order) of the majority path, kept as a note: free text is not voted.

``KindVote`` gathers a step's result and its counts (what the job's page and the stored prediction show).
"""

from __future__ import annotations

from collections.abc import Sequence

from annotator.domain.protocol.kinds import multiple, scale, text
from annotator.domain.protocol.kinds.measures import KindVote

MULTIPLE, SCALE, TEXT = "multiple", "scale", "text"

# One function per kind, in the kind's module (annotator/domain/protocol/kinds/<kind>.py: ``vote``).
vote_multiple = multiple.vote
vote_scale = scale.vote
vote_text = text.vote

__all__ = ["KindVote", "vote_multiple", "vote_scale", "vote_text", "vote_step", "majority_path", "decide_kinds",
           "decided_values"]


def vote_step(kind: str, values: Sequence, *, threshold: int, answers: Sequence[str] = (),
              minimum: int = 1, maximum: int | None = None) -> KindVote:
    """The vote of one step of ``kind`` (the dispatch the pipeline and the evaluation use)."""
    if kind == MULTIPLE:
        return vote_multiple(values, answers, threshold, minimum, maximum)
    if kind == SCALE:
        return vote_scale(values)
    if kind == TEXT:
        return vote_text(values)
    raise ValueError(f"no vote for a step of kind {kind!r}")


def majority_path(votes: Sequence[dict], label: str) -> list[dict]:
    """The samples whose reading ended on the decided ``label`` (none when no label was decided)."""
    return [vote for vote in votes if label and vote.get("label") == label]


def decide_kinds(votes: Sequence[dict], label: str, protocol, threshold: int) -> dict[str, KindVote]:
    """The vote of every non-choice step of ``protocol`` over the samples' readings (``votes``: the prediction's
    ``sample_votes``, each with its ``values``, step -> value) on the majority path of ``label``; a step that no
    such sample walked is left out. The same votes give the same values at any threshold asked (the evaluation
    re-decides at every threshold, as it does the label)."""
    on_path = majority_path(votes, label)
    decided = {}
    for step_id in protocol.kind_steps():
        values = [(vote.get("values") or {}).get(step_id) for vote in on_path]
        if all(value is None for value in values):
            continue
        step = protocol.step(step_id)
        decided[step_id] = vote_step(step.kind, values, threshold=threshold, answers=step.values,
                                     minimum=step.min if step.min is not None else 1, maximum=step.max)
    return decided


def decided_values(votes: Sequence[dict], label: str, protocol, threshold: int) -> dict:
    """step -> the voted value of each non-choice step that has one (what a prediction shows beside its label)."""
    return {step: vote.value for step, vote in decide_kinds(votes, label, protocol, threshold).items()
            if vote.value is not None}
