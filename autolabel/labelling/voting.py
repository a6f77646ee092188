"""The vote over k samples, as a pure function.

Each sample gives, for one sentence, a *vote*: ``{"label": ..., "hallucinated":
..., "kind": ...}`` (see parsing.sample_label). A sample that could not be read
for the sentence abstains (``hallucinated`` is None).

The decision follows CogniBench: a sentence is hallucinated when at least
``threshold`` samples say so. The label is then the most frequent label among
the samples that agree with that decision; it is never a label that no sample
gave, and it is empty when no agreeing sample got as far as a label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from annotator.domain.vocabulary import Label

# Tie-break order: on equal counts the label listed first wins. Hallucinated
# labels come first so that a tie is resolved towards flagging for review.
_LABEL_ORDER = [
    Label.INVENTED, Label.MISLEADING, Label.SPECULATIVE,
    Label.FAITHFUL, Label.RELIABLE, Label.UNEQUIVOCAL, Label.IRRELEVANT,
]
_RANK = {label.value: rank for rank, label in enumerate(_LABEL_ORDER)}


@dataclass(frozen=True)
class Decision:
    label: str  # a Label value, or "" when no agreeing sample gave one
    hallucinated: bool
    hallucinated_votes: int
    faithful_votes: int
    abstentions: int
    label_votes: dict[str, int]
    kind: str  # majority stage-1 kind among the samples that agree ("factual" / "cognitive" / "")


def decide(votes: Sequence[dict], threshold: int) -> Decision:
    if threshold < 1:
        raise ValueError("threshold must be at least 1")
    hallucinated = sum(1 for v in votes if v.get("hallucinated") is True)
    not_hallucinated = sum(1 for v in votes if v.get("hallucinated") is False)
    abstentions = len(votes) - hallucinated - not_hallucinated
    is_hallucinated = hallucinated >= threshold
    agreeing = [v for v in votes if v.get("hallucinated") is (True if is_hallucinated else False)]
    label_votes = Counter(v["label"] for v in votes if v.get("label"))
    agreeing_labels = Counter(v["label"] for v in agreeing if v.get("label"))
    label = ""
    if agreeing_labels:
        label = min(agreeing_labels, key=lambda lab: (-agreeing_labels[lab], _RANK.get(lab, 99)))
    kinds = Counter(v["kind"] for v in agreeing if v.get("kind"))
    kind = ""
    if kinds:
        kind = min(kinds, key=lambda k: (-kinds[k], k))
    return Decision(
        label=label,
        hallucinated=is_hallucinated,
        hallucinated_votes=hallucinated,
        faithful_votes=not_hallucinated,
        abstentions=abstentions,
        label_votes=dict(label_votes),
        kind=kind,
    )
