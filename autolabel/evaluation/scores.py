"""Evaluation of predictions against gold, as pure functions (CogniBench's measure).

Hallucination detection is scored at the sentence level, weighted by words:

    recall    = words of gold-hallucinated sentences that were predicted hallucinated
                / words of gold-hallucinated sentences
    precision = words of predicted-hallucinated sentences that are gold-hallucinated
                / words of predicted-hallucinated sentences
    F1        = harmonic mean

for three views of a hallucination: any hallucination (invented, misleading,
speculative, pooled: one F1 over all hallucinated words), factual (invented) and
cognitive (misleading + speculative). In the factual and cognitive views a
prediction counts when its kind matches: a sentence predicted hallucinated is
factual when its label is invented (or, without a label, its agreeing samples
called it factual), cognitive when its label is cognitive.

CogniBench's Table 3 "Overall" is not the pooled figure: it is the macro-average
of the factual F1 and the cognitive F1 (``cognibench_overall``). The pooled view
was called "overall" here before; the key ``overall`` stays in the reports as an
alias of ``any_hallucination`` so that existing API clients keep working.

When there are gold-hallucinated words and none is predicted, precision is
undefined and F1 is 0 by convention (nothing found of what was there to find);
with no gold-hallucinated words at all, recall and F1 are undefined (None).

Two trivial baselines are scored by the same counting on the same sentences:
flag every sentence (in every view), and flag none (F1 0 by the convention above).

The predictions keep every sample's vote, so the same job is scored at every
threshold from 1 to k. The four-way cognitive accuracy and confusion matrix use
one threshold (the job's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from annotator.domain import languages
from annotator.domain.vocabulary import COGNITIVE_HALLUCINATED_LABELS, COGNITIVE_LABELS, HALLUCINATED_LABELS, Label

from autolabel.labelling.voting import Decision, decide

VIEWS = ("any_hallucination", "factual", "cognitive")
MACRO = "cognibench_overall"
LEGACY_OVERALL = "overall"  # the old name of the pooled view, kept as an alias in the reports
VIEW_NAMES = {
    "any_hallucination": "any hallucination (pooled)",
    "factual": "factual (invented)",
    "cognitive": "cognitive (misleading + speculative)",
    MACRO: "CogniBench overall (macro)",
}
BASELINES = {"flag_every_sentence": "flag every sentence", "flag_none": "flag none"}
COGNITIVE_ORDER = [Label.MISLEADING.value, Label.SPECULATIVE.value, Label.RELIABLE.value, Label.UNEQUIVOCAL.value]
NOT_COGNITIVE = "not cognitive"
NO_LABEL = "no label"


@dataclass(frozen=True)
class Item:
    """One sentence with gold: its word count, gold label and the samples' votes.

    ``sentences`` > 1 stands for that many sentences with the same gold and the same votes, ``words`` their
    total (see ``collapse``): every figure here depends on nothing else.
    """

    words: int
    gold: str
    votes: Sequence[dict]
    sentences: int = 1


_HALLUCINATED_CODE = {True: 1, False: 0, None: -1}


def vote_key(votes: Sequence[dict]) -> tuple:
    """The votes as a canonical, hashable multiset: the vote does not depend on the samples' order."""
    return tuple(sorted(
        (v.get("label") or "", _HALLUCINATED_CODE.get(v.get("hallucinated"), -1), v.get("kind") or "") for v in votes
    ))


@lru_cache(maxsize=65536)
def _decide_key(key: tuple, threshold: int) -> Decision:
    hallucinated = {1: True, 0: False, -1: None}
    return decide([{"label": label or None, "hallucinated": hallucinated[h], "kind": kind or None}
                   for label, h, kind in key], threshold)


def decision(votes: Sequence[dict], threshold: int) -> Decision:
    """``voting.decide``, remembered per multiset of votes: a project's sentences share few distinct vote patterns,
    and every view, threshold, calibration bin and bootstrap count asks again."""
    return _decide_key(vote_key(votes), threshold)


def collapse(items: Iterable[Item]) -> list[Item]:
    """Sentences with the same gold and the same multiset of votes merged into one item (words summed).

    A job's sentences fall into a few hundred such patterns, so the scores at every threshold, the baselines,
    the confusion matrix and the calibration are counted over patterns instead of over sentences.
    """
    groups: dict[tuple, list] = {}
    for item in items:
        group = groups.setdefault((item.gold, vote_key(item.votes)), [0, 0, item.votes])
        group[0] += item.words
        group[1] += item.sentences
    return [Item(words, gold, votes, sentences) for (gold, _), (words, sentences, votes) in groups.items()]


# Words weigh the scores (CogniBench §4.1): the studio's one count, whitespace words in spaced scripts and
# characters in Chinese and Japanese (annotator/domain/languages.py; docs/autolabel.md says why).
word_count = languages.word_count


def _gold_positive(view: str, gold: str) -> bool:
    if view == "any_hallucination":
        return gold in HALLUCINATED_LABELS
    if view == "factual":
        return gold == Label.INVENTED
    return gold in COGNITIVE_HALLUCINATED_LABELS


def _predicted_positive(view: str, decided) -> bool:
    if not decided.hallucinated:
        return False
    if view == "any_hallucination":
        return True
    if decided.label:
        is_cognitive = decided.label in COGNITIVE_LABELS
    else:
        is_cognitive = decided.kind == "cognitive"
    return is_cognitive if view == "cognitive" else not is_cognitive


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def f1_from_counts(correct: int, predicted: int, gold: int) -> dict:
    """Precision, recall and F1 (rounded to 4 places) from word counts, with the conventions above."""
    precision = _ratio(correct, predicted)
    recall = _ratio(correct, gold)
    f1 = None
    if recall is not None:
        if precision is None or precision + recall == 0:
            f1 = 0.0
        else:
            f1 = round(2 * precision * recall / (precision + recall), 4)
    return {"precision": precision, "recall": recall, "f1": f1}


def macro_f1(factual_f1: float | None, cognitive_f1: float | None) -> float | None:
    """CogniBench's "Overall": the mean of the factual and the cognitive F1 (undefined if either is)."""
    if factual_f1 is None or cognitive_f1 is None:
        return None
    return round((factual_f1 + cognitive_f1) / 2, 4)


def item_flags(item: Item, threshold: int) -> dict[str, tuple[bool, bool]]:
    """Per view, (gold positive, predicted positive) of one sentence at one threshold."""
    decided = decision(item.votes, threshold)
    return {view: (_gold_positive(view, item.gold), _predicted_positive(view, decided)) for view in VIEWS}


def _scores(items: Iterable[Item], predicted) -> dict:
    """Word-weighted scores per view; ``predicted(item)`` gives each view's prediction of a sentence."""
    totals = {view: {"tp": 0, "predicted": 0, "gold": 0} for view in VIEWS}
    for item in items:
        flags = predicted(item)
        for view in VIEWS:
            gold = _gold_positive(view, item.gold)
            if gold:
                totals[view]["gold"] += item.words
            if flags[view]:
                totals[view]["predicted"] += item.words
            if gold and flags[view]:
                totals[view]["tp"] += item.words
    scores = {}
    for view, t in totals.items():
        scores[view] = {
            **f1_from_counts(t["tp"], t["predicted"], t["gold"]),
            "correct_words": t["tp"], "predicted_words": t["predicted"], "gold_words": t["gold"],
        }
    scores[MACRO] = {
        "f1": macro_f1(scores["factual"]["f1"], scores["cognitive"]["f1"]),
        "factual_f1": scores["factual"]["f1"], "cognitive_f1": scores["cognitive"]["f1"],
    }
    scores[LEGACY_OVERALL] = scores["any_hallucination"]
    return scores


def detection_scores(items: Iterable[Item], threshold: int) -> dict:
    """Word-weighted precision, recall and F1 per view at one threshold, and CogniBench's macro F1."""
    return _scores(items, lambda item: {view: flags[1] for view, flags in item_flags(item, threshold).items()})


def baseline_scores(items: Sequence[Item]) -> dict:
    """The trivial baselines, counted like a job: every sentence flagged (in every view), and none."""
    return {
        "flag_every_sentence": _scores(items, lambda item: dict.fromkeys(VIEWS, True)),
        "flag_none": _scores(items, lambda item: dict.fromkeys(VIEWS, False)),
    }


def cognitive_confusion(items: Iterable[Item], threshold: int) -> dict:
    """Four-way accuracy on gold-cognitive sentences and the confusion matrix (sentence counts).

    Rows are gold labels; columns the four labels, then "not cognitive" (the
    prediction is factual or irrelevant) and "no label" (no agreeing sample gave one).
    """
    columns = COGNITIVE_ORDER + [NOT_COGNITIVE, NO_LABEL]
    matrix = {gold: {column: 0 for column in columns} for gold in COGNITIVE_ORDER}
    for item in items:
        if item.gold not in matrix:
            continue
        label = decision(item.votes, threshold).label
        column = label if label in COGNITIVE_ORDER else (NOT_COGNITIVE if label else NO_LABEL)
        matrix[item.gold][column] += item.sentences
    total = sum(sum(row.values()) for row in matrix.values())
    correct = sum(matrix[gold][gold] for gold in COGNITIVE_ORDER)
    predicted_cognitive = sum(matrix[g][c] for g in COGNITIVE_ORDER for c in COGNITIVE_ORDER)
    return {
        "columns": columns,
        "rows": COGNITIVE_ORDER,
        "matrix": matrix,
        "total": total,
        "correct": correct,
        "accuracy": _ratio(correct, total),
        "accuracy_when_cognitive": _ratio(correct, predicted_cognitive),
    }


def evaluate(items: Sequence[Item], samples: int, threshold: int) -> dict:
    """The full report: detection scores for thresholds 1..samples, the trivial baselines, cognitive accuracy
    at ``threshold``."""
    items = collapse(items)
    return {
        "sentences": sum(item.sentences for item in items),
        "words": sum(item.words for item in items),
        "samples": samples,
        "threshold": threshold,
        "thresholds": {t: detection_scores(items, t) for t in range(1, max(samples, 1) + 1)},
        "baselines": baseline_scores(items),
        "cognitive": cognitive_confusion(items, threshold),
    }
