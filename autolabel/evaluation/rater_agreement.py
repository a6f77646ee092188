"""The pre-labeler as one more rater: its agreement with gold and with the humans, per protocol step (pure).

The measures are the ones the reports use for humans (``annotator.domain.agreement``):
Cohen's kappa of two raters' tables, Krippendorff's alpha (nominal) of value
counts. A final label determines the whole path of answers
(``protocol.path_for_label``), so each protocol step is measured by mapping every
rater's label onto that step's answer; a rater whose path never asked the step
(e.g. "faithful or invented?" for a sentence it called cognitive) gives no value
there, so a step counts only the sentences where the raters' paths reach it. A
prediction whose vote has no label (its samples stopped before one) still answered
the first two steps, and counts there.

Per variable (the seven-way label, then each step):

- ``kappa_gold``: the pre-labeler against gold;
- ``kappa_annotators``: the pre-labeler against each annotator, on the sentences both labelled;
- ``alpha_humans``: the annotators among themselves;
- ``alpha_with_prelabeler``: the same sentences with the pre-labeler as one more rater.

If alpha rises with the pre-labeler it agrees with the humans about as much as
they agree with each other; if it falls, it is the odd one out. A figure on
fewer than ``MIN_UNITS`` sentences is not reported (None).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from annotator.domain import agreement
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import Answer, Step

VARIABLES = agreement.VARIABLES  # "label", then the protocol steps in order
MIN_UNITS = agreement.MIN_UNITS
DOMAINS = {"label": agreement.LABELS, **agreement.STEP_DOMAINS}


@dataclass(frozen=True)
class RatedSentence:
    """One sentence: its gold label, the pre-labeler's label and each annotator's ("" or None: no label).

    ``prelabel_kind`` ("factual" / "cognitive") is what the pre-labeler's agreeing samples said at stage 1; it
    places a prediction without a label on the first two steps (relevant, and its kind) and nowhere further.
    """

    gold: str | None
    prelabel: str | None
    humans: Mapping[str, str] = field(default_factory=dict)
    prelabel_kind: str = ""


# A rater's state on a sentence: one of the seven labels (its whole path), or no label but a stage-1 kind (the
# first two steps only), or nothing (-1).
STATES: tuple[tuple[str, str], ...] = tuple((label, "") for label in agreement.LABELS) + (
    ("", Answer.FACTUAL.value), ("", Answer.COGNITIVE.value))
_STATE_INDEX = {state: i for i, state in enumerate(STATES)}


def path_of(label: str | None, kind: str = "") -> dict[str, str]:
    """The protocol answers a rater gave: the whole path of a label, or (no label, a stage-1 kind) the first two."""
    if label in agreement.LABEL_INDEX:
        return path_for_label(label)
    if kind in (Answer.FACTUAL, Answer.COGNITIVE):
        return {Step.RELEVANCE.value: Answer.RELEVANT.value, Step.KIND.value: str(kind)}
    return {}


def _answer_table(variable: str) -> np.ndarray:
    """For each state, its answer to ``variable`` as an index into the variable's domain (-1: not reached)."""
    domain = DOMAINS[variable]
    table = []
    for label, kind in STATES:
        if variable == "label":
            table.append(agreement.LABEL_INDEX.get(label, -1))
        else:
            answer = path_of(label, kind).get(variable)
            table.append(domain.index(answer) if answer is not None else -1)
    return np.asarray(table + [-1], dtype=np.int64)  # the last entry answers state -1 (nothing)


ANSWER_TABLES = {variable: _answer_table(variable) for variable in VARIABLES}


def _state(label: str | None, kind: str = "") -> int:
    if label in agreement.LABEL_INDEX:
        return _STATE_INDEX[(label, "")]
    return _STATE_INDEX.get(("", kind or ""), -1)


def _kappa(first: np.ndarray, second: np.ndarray, n_values: int) -> dict:
    """Cohen's kappa of two raters on the sentences both answered, and how many those are."""
    table = agreement.confusion_matrix(first, second, n_values)
    units = int(table.sum())
    return {"kappa": agreement.cohen_kappa(table) if units >= MIN_UNITS else None, "n": units}


def _alpha(counts: np.ndarray) -> dict:
    units = agreement.pairable_units(counts)
    return {"alpha": agreement.alpha(counts) if units >= MIN_UNITS else None, "n": units}


def rater_agreement(sentences: Iterable[RatedSentence]) -> dict:
    """Per variable: kappa with gold, kappa with each annotator, alpha of the humans without and with it."""
    sentences = list(sentences)
    annotators = sorted({name for s in sentences for name in s.humans})
    states = {
        "pre": np.array([_state(s.prelabel, s.prelabel_kind) for s in sentences], dtype=np.int64),
        "gold": np.array([_state(s.gold) for s in sentences], dtype=np.int64),
        **{name: np.array([_state(s.humans.get(name)) for s in sentences], dtype=np.int64) for name in annotators},
    }
    units = np.arange(len(sentences))
    result = {}
    for variable in VARIABLES:
        n_values = len(DOMAINS[variable])
        codes = {rater: ANSWER_TABLES[variable][given] for rater, given in states.items()}  # -1 picks "nothing"
        humans = np.zeros((len(sentences), n_values), dtype=np.int64)
        for name in annotators:
            humans += agreement.value_counts(units, codes[name], n_values, len(sentences))
        with_pre = humans + agreement.value_counts(units, codes["pre"], n_values, len(sentences))
        # Alpha needs two humans on a sentence: only those sentences count, with and without the pre-labeler.
        shared = humans.sum(axis=1) >= 2
        result[variable] = {
            "kappa_gold": _kappa(codes["pre"], codes["gold"], n_values),
            "kappa_annotators": {name: _kappa(codes["pre"], codes[name], n_values) for name in annotators},
            "alpha_humans": _alpha(humans[shared]),
            "alpha_with_prelabeler": _alpha(with_pre[shared]),
        }
    return {"annotators": annotators, "sentences": len(sentences), "variables": result}


STEP_NAMES = {"label": "Final label (7 categories)", **{step.value: str(step.label) for step in Step}}
