"""The pre-labeler as one more rater: its agreement with gold and with the humans, per protocol step (pure).

The measures are the ones the reports use for humans (``annotator.domain.agreement``):
Cohen's kappa of two raters' tables, Krippendorff's alpha (nominal) of value
counts. A final label determines the whole path of answers
(``protocol.path_for_label``), so each protocol step is measured by mapping every
rater's label onto that step's answer; a rater whose path never asked the step
(e.g. "faithful or invented?" for a sentence it called cognitive) gives no value
there, so a step counts only the sentences where the raters' paths reach it.

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
from annotator.domain.vocabulary import Step

VARIABLES = agreement.VARIABLES  # "label", then the protocol steps in order
MIN_UNITS = agreement.MIN_UNITS
_N_LABELS = len(agreement.LABELS)


@dataclass(frozen=True)
class RatedSentence:
    """One sentence: its gold label, the pre-labeler's label and each annotator's ("" or None: no label)."""

    gold: str | None
    prelabel: str | None
    humans: Mapping[str, str] = field(default_factory=dict)


def _code(label: str | None) -> int:
    return agreement.LABEL_INDEX.get(label or "", -1)


def _kappa(table: np.ndarray, variable: str) -> dict:
    """Kappa and the number of sentences of one rater pair's label table, on one variable."""
    if variable != "label":
        table = agreement.step_table(table, variable)
    units = int(np.asarray(table).sum())
    kappa = agreement.cohen_kappa(table) if units >= MIN_UNITS else None
    return {"kappa": kappa, "n": units}


def _alpha(label_counts: np.ndarray, variable: str) -> dict:
    counts = label_counts if variable == "label" else agreement.step_counts(label_counts, variable)
    units = agreement.pairable_units(counts)
    value = agreement.alpha(counts) if units >= MIN_UNITS else None
    return {"alpha": value, "n": units}


def rater_agreement(sentences: Iterable[RatedSentence]) -> dict:
    """Per variable: kappa with gold, kappa with each annotator, alpha of the humans without and with it."""
    sentences = list(sentences)
    annotators = sorted({name for s in sentences for name in s.humans})
    pre = np.array([_code(s.prelabel) for s in sentences], dtype=np.int64)
    gold_table = agreement.confusion_matrix(pre, [_code(s.gold) for s in sentences], _N_LABELS)
    annotator_tables = {
        name: agreement.confusion_matrix(pre, [_code(s.humans.get(name)) for s in sentences], _N_LABELS)
        for name in annotators
    }
    # Value counts of the humans' labels; alpha needs two humans on a sentence, so only those sentences count,
    # with and without the pre-labeler (the same sentences both times).
    humans = np.zeros((len(sentences), _N_LABELS), dtype=np.int64)
    for row, s in enumerate(sentences):
        for label in s.humans.values():
            if _code(label) >= 0:
                humans[row, _code(label)] += 1
    with_pre = humans.copy()
    given = pre >= 0
    with_pre[np.nonzero(given)[0], pre[given]] += 1
    result = {}
    for variable in VARIABLES:
        human_counts = humans if variable == "label" else agreement.step_counts(humans, variable)
        shared = human_counts.sum(axis=1) >= 2  # the sentences where at least two humans reached the step
        result[variable] = {
            "kappa_gold": _kappa(gold_table, variable),
            "kappa_annotators": {name: _kappa(table, variable) for name, table in annotator_tables.items()},
            "alpha_humans": _alpha(humans[shared], variable),
            "alpha_with_prelabeler": _alpha(with_pre[shared], variable),
        }
    return {"annotators": annotators, "sentences": len(sentences), "variables": result}


STEP_NAMES = {"label": "Final label (7 categories)", **{step.value: str(step.label) for step in Step}}
