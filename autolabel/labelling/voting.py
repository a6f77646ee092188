"""The vote over k samples, as a pure function.

Each sample gives, for one sentence, a *vote*: ``{"label": ..., "hallucinated":
..., "kind": ...}`` (see parsing.sample_label; ``kind`` is the label's family id in the protocol, e.g.
CogniBench's factual / cognitive). A sample that could not be read for the sentence abstains
(``hallucinated`` is None).

The decision follows CogniBench: a sentence is hallucinated when at least
``threshold`` samples say so. The label is then the most frequent label among
the samples that agree with that decision; it is never a label that no sample
gave, and it is empty when no agreeing sample got as far as a label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from annotator.domain.protocol.document import default_protocol

from autolabel.labelling.stages import tie_break_order

# On equal counts the label listed first wins: the protocol's hallucinated labels first, so that a tie is
# resolved towards flagging for review, then the others, each in document order (stages.tie_break_order).
# Without a ``label_order`` the built-in default protocol's order is used.
_DEFAULT_ORDER = tie_break_order(default_protocol())


@dataclass(frozen=True)
class Decision:
    label: str  # a label id, or "" when no agreeing sample gave one
    hallucinated: bool
    hallucinated_votes: int
    faithful_votes: int
    abstentions: int
    label_votes: dict[str, int]
    kind: str  # majority family among the samples that agree ("" when none said)


def decide(votes: Sequence[dict], threshold: int, *, label_order: Sequence[str] | None = None) -> Decision:
    """The vote; ``label_order`` breaks ties between labels (``stages.tie_break_order(protocol)``)."""
    rank = {label: position for position, label in enumerate(_DEFAULT_ORDER if label_order is None else label_order)}
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
        label = min(agreeing_labels, key=lambda lab: (-agreeing_labels[lab], rank.get(lab, len(rank)), lab))
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
