"""A multiple step: pick ``min`` to ``max`` of its two to nine answers (digits toggle, Enter confirms).

The answers do not branch: the step carries ``next`` or ``yields``. The path value is the list of the chosen
values in the step's answer order, without repeats, so two equal sets are equal values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ..parts import ProtocolError, Step
from .common import foreign_fields, target_of, target_problems, text_fields
from .measures import KindVote, Pair, StepAgreement, _counts, _f1, _ratio, _shared

MULTIPLE = "multiple"

FIELDS = ("answers", "min", "max", "next", "yields")


def validate_step(step_doc: dict, where: str) -> list[tuple[str, str]]:
    found = foreign_fields(step_doc, where, FIELDS) + target_problems(step_doc, where)
    answers = step_doc.get("answers", [])
    for k, answer in enumerate(answers):
        for field in ("next", "yields"):
            if field in answer:
                found.append((f"{where}/answers/{k}/{field}", "a multiple step's answers do not branch: put "
                              "'next' or 'yields' on the step"))
        if answer.get("yn"):
            found.append((f"{where}/answers/{k}/yn", "y and n answer a yes/no question; a multiple step's keys "
                          "toggle its answers"))
    low, high = step_doc.get("min", 1), step_doc.get("max", len(answers))
    if high > len(answers):
        found.append((f"{where}/max", f"max {high} exceeds the step's {len(answers)} answers"))
    if low > high:
        found.append((f"{where}/min", f"min {low} is above max {high}"))
    return found


def canonical(step_doc: dict) -> dict:
    answers = [{"value": a["value"], "label": a["label"], "key": a.get("key", str(number)),
                "evidence": bool(a.get("evidence", False))} for number, a in enumerate(step_doc["answers"], start=1)]
    return {**text_fields(step_doc), "answers": answers, "min": step_doc.get("min", 1),
            "max": step_doc.get("max", len(answers)), **target_of(step_doc)}


def parse_value(step: Step, raw) -> list[str]:
    values = step.values
    if not isinstance(raw, (list, tuple)) or not all(isinstance(value, str) for value in raw):
        raise ProtocolError(f"step {step.id!r} takes a list of its answers ({', '.join(values)}), not {raw!r}")
    unknown = [value for value in raw if value not in values]
    if unknown:
        raise ProtocolError(f"step {step.id!r} has no answer {unknown[0]!r} (it has {', '.join(values)})")
    if len(set(raw)) != len(raw):
        raise ProtocolError(f"step {step.id!r}: an answer is picked twice in {list(raw)!r}")
    if not step.min <= len(raw) <= step.max:
        raise ProtocolError(f"step {step.id!r} takes {_between(step)} of its answers, not {len(raw)}")
    chosen = set(raw)
    return [value for value in values if value in chosen]


def _between(step: Step) -> str:
    return f"{step.min}" if step.min == step.max else f"{step.min} to {step.max}"


def describe(step: Step) -> dict:
    return {"answers": [{"value": a.value, "label": a.label, "key": a.key} for a in step.answers],
            "min": step.min, "max": step.max}


def summary(step: Step) -> str:
    return f"{_between(step)} of {len(step.answers)} answers"


# ------------------------------------------------------- agreement, the pre-labeler's vote and score


def _masi_metric(sets: Sequence[frozenset]) -> Callable:
    """The MASI distance between the domain's sets, as a metric of ``krippendorff`` (it reads the columns'
    indices): computed once per pair of distinct sets by NLTK."""
    # Imported here: ``import nltk`` loads scikit-learn and SciPy (a second of start-up), and every process that
    # reads a protocol (each request's worker, each Celery task) would pay it, though few measure agreement.
    import numpy as np
    from nltk.metrics.distance import masi_distance

    table = np.array([[masi_distance(set(a), set(b)) for b in sets] for a in sets], dtype=np.float64)

    def metric(v1, v2, i1, i2, n_v, dtype=np.float64):
        return table[i1, i2].astype(dtype)

    return metric


def agree(units: Sequence[Sequence[Sequence[str]]], answers: Sequence[str]) -> StepAgreement:
    """A multiple step: α over the MASI distance between the chosen sets, and a binary α per answer."""
    sets = [[frozenset(chosen) for chosen in values if isinstance(chosen, (list, tuple))] for values in units]
    domain = sorted({chosen for values in sets for chosen in values}, key=lambda s: (len(s), sorted(s)))
    import numpy as np  # only when agreement is measured (measures._counts says why)

    from ... import agreement

    counts, weights = _counts(sets, domain)
    answered = sum(1 for values in units if values)
    # Each annotator who answered the step either chose an answer or not: per answer, a two-valued nominal
    # variable, whose counts follow from the sets' counts (chosen: the sets holding it; not: the others).
    membership = np.array([[answer in chosen for answer in answers] for chosen in domain], dtype=np.int64)
    given = counts.sum(axis=1)
    per_answer = []
    for column, answer in enumerate(answers):
        chosen = counts @ membership[:, column] if domain else np.zeros(len(counts), dtype=np.int64)
        binary = np.column_stack([given - chosen, chosen])
        per_answer.append((answer, agreement.alpha(binary, "nominal", weights=weights)))
    if not domain:
        return StepAgreement("multiple", "MASI α", None, None, 0, answered, tuple(per_answer))
    return StepAgreement("multiple", "MASI α", agreement.alpha(counts, _masi_metric(domain), weights=weights),
                         agreement.percent_agreement(counts, weights), agreement.pairable_units(counts, weights),
                         answered, tuple(per_answer))


def vote(values: Sequence[Sequence[str] | None], answers: Sequence[str], threshold: int,
         minimum: int = 1, maximum: int | None = None) -> KindVote:
    """Per-answer majority over the samples' chosen lists; ``answers`` are the step's values in document order."""
    if threshold < 1:
        raise ValueError("threshold must be at least 1")
    maximum = len(answers) if maximum is None else maximum
    order = {answer: position for position, answer in enumerate(answers)}
    valid = [list(value) for value in values if value is not None]
    counts = Counter(answer for value in valid for answer in set(value) if answer in order)
    ranked = sorted(counts, key=lambda answer: (-counts[answer], order[answer]))
    chosen = [answer for answer in ranked if counts[answer] >= threshold]
    if len(chosen) < minimum:
        chosen = ranked[:minimum]  # the most-chosen first: the threshold's choices, then the next best
    chosen = chosen[:maximum]
    value = sorted(chosen, key=order.__getitem__) if valid and len(chosen) >= minimum else None
    return KindVote(MULTIPLE, value, len(valid), dict(counts))


def score(pairs: Sequence[Pair], answers: Sequence[str]) -> dict:
    """Per-answer precision, recall and F1 (answers in document order) and the micro average."""
    # A value that is not a list (a path stored before the step was a multiple one) is no set of answers.
    shared = [pair for pair in _shared(pairs) if isinstance(pair.gold, (list, tuple))
              and isinstance(pair.predicted, (list, tuple))]
    per_answer = {}
    totals = [0, 0, 0]
    for answer in answers:
        correct = sum(1 for pair in shared if answer in pair.gold and answer in pair.predicted)
        predicted = sum(1 for pair in shared if answer in pair.predicted)
        gold = sum(1 for pair in shared if answer in pair.gold)
        totals = [totals[0] + correct, totals[1] + predicted, totals[2] + gold]
        per_answer[answer] = {"precision": _ratio(correct, predicted), "recall": _ratio(correct, gold),
                              "f1": _f1(correct, predicted, gold), "predicted": predicted, "gold": gold,
                              "correct": correct}
    correct, predicted, gold = totals
    exact = sum(1 for pair in shared if set(pair.gold) == set(pair.predicted))
    return {"kind": MULTIPLE, "metric": "per-answer F1", "pairs": len(shared), "answers": per_answer,
            "micro": {"precision": _ratio(correct, predicted), "recall": _ratio(correct, gold),
                      "f1": _f1(correct, predicted, gold)},
            "exact_match": _ratio(exact, len(shared))}
