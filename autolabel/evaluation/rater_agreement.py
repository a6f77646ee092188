"""The pre-labeler as one more rater: its agreement with gold and with the humans, per protocol step (pure).

The measures are the ones the reports use for humans (``annotator.domain.agreement``):
Cohen's kappa of two raters' tables, Krippendorff's alpha (nominal) of value
counts. A final label determines the path of answers that reached it (the project's
protocol), so each protocol step is measured by mapping every rater's label onto
that step's answer; a rater whose path never asked the step gives no value there,
so a step counts only the sentences where the raters' paths reach it. A prediction
whose vote has no label (its samples stopped before one) still answered the steps
before the stage-two steps, and counts there.

Per variable (the label, then each step agreement is measured on):

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
from annotator.domain.protocol.groups import reading

MIN_UNITS = agreement.MIN_UNITS


@dataclass(frozen=True)
class RatedSentence:
    """One sentence: its gold label, the pre-labeler's label and each annotator's ("" or None: no label).

    ``prelabel_kind`` is the answer the pre-labeler's agreeing samples gave at stage 1 (the answer that leads to
    the protocol's stage-two steps); it places a prediction without a label on the steps before them and
    nowhere further.
    """

    gold: str | None
    prelabel: str | None
    humans: Mapping[str, str] = field(default_factory=dict)
    prelabel_kind: str = ""


def stage_one_path(protocol, answer: str) -> dict[str, str]:
    """The answers every path through ``answer`` shares up to and including it: what a prediction that stopped
    after stage 1 with that answer said (empty when no path gives it)."""
    paths = [path for label_paths in reading(protocol).label_paths.values() for path in label_paths
             if answer in path.values()]
    if not answer or not paths:
        return {}
    common: dict[str, str] = {}
    for step, value in paths[0].items():
        if any(path.get(step) != value for path in paths[1:]):
            break
        common[step] = value
        if value == answer:
            return common
    return {}


class _Coder:
    """Each rater's value per variable, as an index into the variable's domain (-1: no value)."""

    def __init__(self, protocol):
        self.read = reading(protocol)
        self.protocol = protocol
        self.scheme = agreement.scheme_of(protocol)
        self.domains = {"label": self.scheme.labels, **self.scheme.domains}
        self._paths: dict = {}

    def path(self, label: str | None, kind: str = "") -> dict:
        key = (label or "", kind or "")
        if key not in self._paths:
            paths = self.read.label_paths.get(label or "", ())
            self._paths[key] = (paths[0] if len(paths) == 1 else {}) if label in self.read.labels \
                else stage_one_path(self.protocol, kind)
        return self._paths[key]

    def code(self, variable: str, label: str | None, kind: str = "") -> int:
        domain = self.domains[variable]
        if variable == "label":
            return domain.index(label) if label in domain else -1
        answer = self.path(label, kind).get(variable)
        return domain.index(answer) if answer in domain else -1


def _kappa(first: np.ndarray, second: np.ndarray, n_values: int) -> dict:
    """Cohen's kappa of two raters on the sentences both answered, and how many those are."""
    table = agreement.confusion_matrix(first, second, n_values)
    units = int(table.sum())
    return {"kappa": agreement.cohen_kappa(table) if units >= MIN_UNITS else None, "n": units}


def _alpha(counts: np.ndarray) -> dict:
    units = agreement.pairable_units(counts)
    return {"alpha": agreement.alpha(counts) if units >= MIN_UNITS else None, "n": units}


def rater_agreement(protocol, sentences: Iterable[RatedSentence]) -> dict:
    """Per variable of the project's ``protocol`` (the label, then each measured step, with its title and
    scope): kappa with gold, kappa with each annotator, alpha of the humans without and with it."""
    sentences = list(sentences)
    coder = _Coder(protocol)
    annotators = sorted({name for s in sentences for name in s.humans})
    units = np.arange(len(sentences))
    result = {}
    for variable in coder.scheme.variables:
        n_values = len(coder.domains[variable])
        codes = {
            "pre": np.array([coder.code(variable, s.prelabel, s.prelabel_kind) for s in sentences], dtype=np.int64),
            "gold": np.array([coder.code(variable, s.gold) for s in sentences], dtype=np.int64),
            **{name: np.array([coder.code(variable, s.humans.get(name)) for s in sentences], dtype=np.int64)
               for name in annotators},
        }
        humans = np.zeros((len(sentences), n_values), dtype=np.int64)
        for name in annotators:
            humans += agreement.value_counts(units, codes[name], n_values, len(sentences))
        with_pre = humans + agreement.value_counts(units, codes["pre"], n_values, len(sentences))
        # Alpha needs two humans on a sentence: only those sentences count, with and without the pre-labeler.
        shared = humans.sum(axis=1) >= 2
        result[variable] = {
            "name": coder.read.step_title(variable), "scope": coder.read.step_scope(variable),
            "kappa_gold": _kappa(codes["pre"], codes["gold"], n_values),
            "kappa_annotators": {name: _kappa(codes["pre"], codes[name], n_values) for name in annotators},
            "alpha_humans": _alpha(humans[shared]),
            "alpha_with_prelabeler": _alpha(with_pre[shared]),
        }
    return {"annotators": annotators, "sentences": len(sentences), "variables": result}
