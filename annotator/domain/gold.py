"""Gold from agreement, as a rule on plain values: which sentences of a fully annotated turn agree, which go to
a dispute.

The database service (annotator/gold/services.py) reads the turn's submitted answers, asks this module what to
decide, and writes the gold labels, events and adjudications it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .gold_kinds import agreed_path, reviewed_path

MIN_ANNOTATORS = 2  # gold by agreement needs at least two independent annotators, whatever the project says


@dataclass(frozen=True)
class GivenAnswer:
    """One annotator's final answer on one sentence (what agreement compares)."""

    label: str
    severity: int | None = None
    error_type: str = ""
    path: Mapping = field(default_factory=dict)  # the walk (the values of a protocol's multiple, scale, text steps)


@dataclass(frozen=True)
class AgreedGold:
    sentence_id: int
    label: str
    path: dict
    reason: str
    severity: int | None
    error_type: str


@dataclass(frozen=True)
class TurnDecision:
    agreed: list[AgreedGold]
    disputed: list[int]


def turn_is_complete(submitted: int, overlap: int) -> bool:
    """A turn is compared once all of its ``overlap`` annotators (at least two) have submitted."""
    return submitted >= max(overlap, MIN_ANNOTATORS)


def same(values: Iterable):
    """The one value all of ``values`` share, or None (also for none at all)."""
    values = list(values)
    return values[0] if values and all(v == values[0] for v in values) else None


def decide_turn(protocol, sentence_ids: Sequence[int], answers: Mapping[int, Sequence[GivenAnswer]],
                annotators: int, settled: Iterable[int] = (), imported: Mapping[int, str] | None = None,
                imported_is_final: bool = True) -> TurnDecision:
    """Gold by agreement or a dispute for each sentence of a complete turn.

    ``protocol`` is the project's (its one path of the agreed label is the gold's path).
    A sentence gets agreement gold when every one of the ``annotators`` answered it with the same label and the
    same value at each multiple and scale step (``gold_kinds.agreed_path``: text never decides) (its severity
    and error type come along when they agree too); otherwise it is disputed. Sentences in ``settled``
    (they already have gold the project decided, or an open dispute) are left alone, so deciding a turn twice
    changes nothing.

    Gold imported with the data (``imported``: sentence -> label) never hides a disagreement: two annotators
    who disagree are always disputed, so an adjudicator sees it and may replace the imported label. When they
    agree, imported gold that is final stays; imported gold that is only a reference is replaced by the agreement.
    """
    settled = set(settled)
    imported = imported or {}
    agreed, disputed = [], []
    for sentence_id in sentence_ids:
        if sentence_id in settled:
            continue
        given = answers.get(sentence_id, ())
        label = same(a.label for a in given) if len(given) == annotators else None
        path = agreed_path(protocol, label, [a.path for a in given]) if label else None
        if path is None:
            label = None  # a multiple or scale step they answered differently: a dispute, as a label would be
        if label and sentence_id in imported and imported_is_final:
            continue
        if label:
            reason = f"{len(given)} annotators agreed"
            if sentence_id in imported:
                reason += f" (the imported gold was {imported[sentence_id]})"
            agreed.append(AgreedGold(
                sentence_id=sentence_id, label=label, path=path,
                reason=reason, severity=same(a.severity for a in given),
                error_type=same(a.error_type for a in given) or "",
            ))
        else:
            disputed.append(sentence_id)
    return TurnDecision(agreed=agreed, disputed=disputed)


def decided_by_review(submitted: int, overlap: int, single_review: bool) -> bool:
    """A drawn turn under single review gets gold from its first submitted annotation, unless the turn is
    complete by the normal rule anyway (then agreement decides, as for any turn)."""
    return single_review and submitted >= 1 and not turn_is_complete(submitted, overlap)


def decide_reviewed_turn(protocol, sentence_ids: Sequence[int], answers: Mapping[int, GivenAnswer],
                         settled: Iterable[int] = (), imported: Mapping[int, str] | None = None,
                         imported_is_final: bool = True) -> list[AgreedGold]:
    """Gold from one annotator's review of a drawn turn: their label of each sentence (``answers``).

    As with agreement, sentences in ``settled`` are left alone (deciding twice changes nothing), and gold
    imported with the data stays when it is final and is replaced when it is only a reference.
    """
    settled = set(settled)
    imported = imported or {}
    gold = []
    for sentence_id in sentence_ids:
        given = answers.get(sentence_id)
        if sentence_id in settled or given is None or not given.label:
            continue
        if sentence_id in imported and imported_is_final:
            continue
        reason = "One annotator's review of a drawn turn"
        if sentence_id in imported:
            reason += f" (the imported gold was {imported[sentence_id]})"
        gold.append(AgreedGold(sentence_id=sentence_id, label=given.label, path=reviewed_path(protocol, given.label, given.path),
                               reason=reason, severity=given.severity, error_type=given.error_type or ""))
    return gold
