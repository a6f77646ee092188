"""The learned judge's decision, one rule, pure: a sentence's label from its probabilities.

A sentence is **hallucinated when the protocol's hallucinated labels hold at least half of its probability**
(summed); its label is then **the most probable label of that side** (hallucinated labels, or the others), equal
probabilities broken by the protocol's tie-break order (``stages.tie_break_order``: the hallucinated labels first,
each part in document order). ``judge_decision`` is that rule; the cross-validated figures, their intervals, the
choosing of a shape, the exported out-of-fold predictions and the judge's jobs all label through it.

A job's predictions keep an LLM job's shape (``SAMPLES`` votes read at ``THRESHOLD``) so that its evaluation page,
calibration, comparison and draws read them as samples. ``votes_for`` shares the votes among the labels by their
probabilities (largest remainder), then moves the fewest votes that make the vote at ``THRESHOLD`` give the rule's
label: rounding to twentieths alone would call a sentence with 0.49 of hallucinated probability hallucinated
(10 votes of 20), and break a near tie between two labels by the tie-break order instead of the probabilities.
The votes are a display of the probabilities; the label is the rule's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from autolabel.evaluation.protocol_views import scoring
from autolabel.labelling.stages import tie_break_order

SAMPLES = 20
THRESHOLD = SAMPLES // 2  # the votes of a hallucinated verdict: at least half, as the rule's half of the probability
HALF = 0.5
# A row's probabilities are normalised floats: a mass of exactly one half may read 0.49999999999999994.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class JudgeDecision:
    label: str
    hallucinated: bool
    hallucinated_probability: float  # the hallucinated labels' summed probability
    confidence: float  # the probability of ``label``, rounded to 4 places


@dataclass(frozen=True)
class _Reading:
    labels: tuple
    hallucinated: tuple  # per column: is its label hallucinated
    rank: tuple  # per column: its place in the tie-break order
    votes: tuple  # per column: its vote, as a job's sample gives it


_READINGS: dict = {}


def _reading(protocol, labels: tuple) -> _Reading:
    """What the rule reads of the protocol for these columns, once per protocol (its checksum) and labels."""
    key = (protocol.checksum, labels)
    if key not in _READINGS:
        read = scoring(protocol)
        order = {label: i for i, label in enumerate(tie_break_order(protocol))}
        votes = []
        for label in labels:
            family = protocol.family_of(label)
            votes.append({"label": label, "hallucinated": label in read.hallucinated,
                          "kind": family.id if family else None})
        _READINGS[key] = _Reading(labels, tuple(label in read.hallucinated for label in labels),
                                  tuple(order.get(label, len(order)) for label in labels), tuple(votes))
    return _READINGS[key]


def _values(probabilities) -> list[float]:
    # Plain floats: a job reads hundreds of thousands of rows, and numpy's cost per call dwarfs a row's arithmetic.
    return [float(p) for p in (probabilities.tolist() if hasattr(probabilities, "tolist") else probabilities)]


def _decide(values: list[float], read: _Reading) -> tuple[int, bool, float]:
    mass = sum(p for p, hallucinated in zip(values, read.hallucinated) if hallucinated)
    verdict = mass >= HALF - TOLERANCE
    side = [i for i, hallucinated in enumerate(read.hallucinated) if hallucinated is verdict]
    return min(side, key=lambda i: (-values[i], read.rank[i])), verdict, mass


def judge_decision(probabilities: Sequence[float], labels: Sequence[str], protocol) -> JudgeDecision:
    """The rule (module docstring) on one sentence's probabilities, columns in ``labels``' order."""
    values = _values(probabilities)
    column, verdict, mass = _decide(values, _reading(protocol, tuple(labels)))
    return JudgeDecision(labels[column], verdict, mass, round(values[column], 4))


def votes_for(probabilities: Sequence[float], labels: Sequence[str], protocol, samples: int = SAMPLES) -> list[dict]:
    """``samples`` votes (each a job sample's ``{"label", "hallucinated", "kind"}``) shared by the probabilities,
    whose vote at half the samples gives ``judge_decision``'s label (module docstring)."""
    read = _reading(protocol, tuple(labels))
    values = _values(probabilities)
    target, verdict, _ = _decide(values, read)
    exact = [p * samples for p in values]
    counts = [int(value) for value in exact]  # the floor: probabilities are not negative
    # Largest remainder first; equal remainders in the tie-break order.
    order = sorted(range(len(exact)), key=lambda i: (counts[i] - exact[i], read.rank[i]))
    for i in order[: samples - sum(counts)]:
        counts[i] += 1

    def move_from(columns) -> None:  # one vote from the column of most votes (ties: the last in tie order)
        source = max((i for i in columns if counts[i] > 0), key=lambda i: (counts[i], read.rank[i]))
        counts[source] -= 1
        counts[target] += 1

    threshold = -(-samples // 2)
    hallucinated_votes = sum(c for c, hallucinated in zip(counts, read.hallucinated) if hallucinated)
    while (hallucinated_votes >= threshold) is not verdict:  # the verdict's votes reach (or miss) the threshold
        move_from([i for i, hallucinated in enumerate(read.hallucinated) if hallucinated is not verdict])
        hallucinated_votes += 1 if verdict else -1
    rivals = [i for i, hallucinated in enumerate(read.hallucinated) if hallucinated is verdict and i != target]
    while rivals:  # the rule's label leads its side: more votes, or as many and earlier in the tie-break order
        rival = max(rivals, key=lambda i: (counts[i], -read.rank[i]))
        if (counts[rival], -read.rank[rival]) < (counts[target], -read.rank[target]):
            break
        move_from([rival])
    return [dict(vote) for vote, count in zip(read.votes, counts) for _ in range(count)]
