"""Which turns a draw for human checks of the pre-labeler takes, and in which order: plain functions.

Two strategies (``vocabulary.DrawStrategy``):

- at random: a simple random sample of the candidate turns, reproducible from its seed. Only such a sample
  lets human gold correct the pre-labeler's estimates (prediction-powered inference needs it);
- by uncertainty: the turns where the pre-labeler's samples agreed least come first.

The margin of a sentence is (votes for the voted answer - votes for the runner-up) / samples, the answers
being the labels the samples gave (``Prediction.label_votes``); a sample that abstained votes for nothing, so
abstentions lower the margin. The margin of a turn is the smallest margin of its sentences: one doubtful
sentence is enough to want a human on the turn. Ties are broken by turn id, so an order is always the same.

The database work (reading the votes, recording the draw) is elsewhere: ``autolabel.checks.drawing`` reads the
votes and ``annotator.corpus.draws.services`` records the draw.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable, Mapping
from fractions import Fraction

# The largest seed a person may type (and the column stores): a signed 64-bit integer.
MAX_SEED = 2**63 - 1
# Seeds drawn for the lead are kept short, so that they can be read out and typed again.
DRAWN_SEED_BELOW = 10**9
MAX_DRAW_SIZE = 10_000


def new_seed() -> int:
    """A seed for a draw the lead left without one (recorded, so the draw can be reproduced)."""
    return secrets.randbelow(DRAWN_SEED_BELOW)


def random_order(turn_ids: Iterable[int], size: int, seed: int) -> list[int]:
    """``size`` of the turns (all of them when fewer), drawn at random with ``seed``, in the order drawn.

    The candidates are sorted first, so the same set of turns and the same seed always give the same draw,
    whatever order the database returned them in.
    """
    population = sorted(set(turn_ids))
    return random.Random(seed).sample(population, k=min(size, len(population)))


def sentence_margin(label_votes: Mapping[str, int], samples: int) -> Fraction:
    """How far the voted label is ahead of the runner-up, as a share of the samples (0 to 1).

    No label at all (every sample abstained) is a margin of 0: nothing is known about the sentence.
    """
    if samples < 1:
        raise ValueError("a vote has at least one sample")
    counts = sorted((count for count in label_votes.values() if count > 0), reverse=True)
    first = counts[0] if counts else 0
    second = counts[1] if len(counts) > 1 else 0
    return Fraction(first - second, samples)


def turn_margin(sentences_label_votes: Iterable[Mapping[str, int]], samples: int) -> Fraction:
    """The smallest margin of the turn's sentences (a turn without predicted sentences has none to doubt: 1)."""
    return min((sentence_margin(votes, samples) for votes in sentences_label_votes), default=Fraction(1))


def uncertainty_order(margins: Mapping[int, Fraction], size: int) -> list[int]:
    """The ``size`` turns with the smallest margins, smallest first; equal margins by turn id."""
    return sorted(margins, key=lambda turn_id: (margins[turn_id], turn_id))[:size]
