"""Evaluation of predictions against gold, as pure functions (CogniBench's measure, over the protocol's views).

Hallucination detection is scored at the sentence level, weighted by words:

    recall    = words of gold-positive sentences that were predicted positive / words of gold-positive sentences
    precision = words of predicted-positive sentences that are gold-positive / words of predicted-positive sentences
    F1        = 2 · correct words / (predicted words + gold words), the harmonic mean, from the counts (each
                figure is rounded to 4 places only when reported; the macro averages the unrounded F1s)

(docs/autolabel.md, *Definitions*). A sentence counts in a view only when its gold label is within the view's
``scope`` (every label by default): outside it, a prediction is no false alarm of that view.

per evaluation view of the project's protocol (its document's ``groups.evaluation.views``): a sentence is
gold-positive in a view when its gold label is one of the view's positive labels, and predicted positive as
``protocol_views.Scoring.predicted_positive`` says (the voted label is positive there; a vote without a label
by its verdict and stage-one answer). CogniBench's views: any hallucination (invented, misleading,
speculative, pooled: one F1 over all hallucinated words), factual (invented) and cognitive (misleading +
speculative); a prediction counts in the factual or the cognitive view when its kind matches.

The document's macro (CogniBench's Table 3 "Overall", ``cognibench_overall``) is the mean of its views' F1,
undefined when one of them is; it is not the pooled figure. The pooled view (the one whose positive labels are
the whole hallucination group, over every label; derived from that group when the document declares none)
keeps a second key, ``overall``, its old name, so existing API clients keep working and every protocol has it.

When there are gold-positive words and none is predicted, precision is undefined and F1 is 0 by convention
(nothing found of what was there to find); with no gold-positive words at all, recall and F1 are undefined.

Two trivial baselines are scored by the same counting on the same sentences: flag every sentence (positive in
every view), and flag none (F1 0 by the convention above).

The predictions keep every sample's vote, so the same job is scored at every threshold from 1 to k. The
confusion matrices (one per family of the protocol: CogniBench's factual and cognitive) use one threshold
(the job's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from annotator.domain import languages

from autolabel.evaluation.protocol_views import LEGACY_POOLED, scoring
from autolabel.labelling.stages import tie_break_order
from autolabel.labelling.voting import Decision, decide

BASELINES = {"flag_every_sentence": "flag every sentence", "flag_none": "flag none"}
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
def _decide_key(key: tuple, threshold: int, label_order: tuple | None) -> Decision:
    hallucinated = {1: True, 0: False, -1: None}
    return decide([{"label": label or None, "hallucinated": hallucinated[h], "kind": kind or None}
                   for label, h, kind in key], threshold, label_order=label_order)


def decision(votes: Sequence[dict], threshold: int, protocol=None) -> Decision:
    """``voting.decide`` with the protocol's tie-break order (the job's own vote), remembered per multiset of
    votes: a project's sentences share few distinct vote patterns, and every view, threshold, calibration bin and
    bootstrap count asks again."""
    return _decide_key(vote_key(votes), threshold, _tie_break(protocol) if protocol is not None else None)


@lru_cache(maxsize=64)
def _tie_break(protocol) -> tuple:
    return tie_break_order(protocol)


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


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def exact_f1(correct: int, predicted: int, gold: int) -> float | None:
    """F1 from the word counts themselves, unrounded: 2·correct / (predicted + gold), which is the harmonic mean
    of precision and recall; 0 when nothing gold-positive was found, undefined with no gold-positive words."""
    if not gold:
        return None
    return 2 * correct / (predicted + gold)


def f1_from_counts(correct: int, predicted: int, gold: int) -> dict:
    """Precision, recall and F1 from word counts, with the conventions above. Each is computed from the counts
    and rounded to 4 places only here, where it is reported (F1 from rounded P and R drifted by 1e-4)."""
    f1 = exact_f1(correct, predicted, gold)
    return {"precision": _ratio(correct, predicted), "recall": _ratio(correct, gold),
            "f1": None if f1 is None else round(f1, 4)}


def macro_f1(f1s) -> float | None:
    """The macro: the mean of its views' F1 (CogniBench's "Overall": factual and cognitive), undefined if one is.
    Give it the unrounded F1s (``exact_f1``); it rounds once."""
    f1s = list(f1s)
    if not f1s or any(f1 is None for f1 in f1s):
        return None
    return round(sum(f1s) / len(f1s), 4)


def item_flags(protocol, item: Item, threshold: int) -> dict[str, tuple[bool, bool]]:
    """Per view of the protocol, (gold positive, predicted positive) of one sentence at one threshold."""
    read = scoring(protocol)
    decided = decision(item.votes, threshold, protocol)
    return {view.id: (item.gold in view.positive, read.in_scope(view, item.gold) and read.predicted_positive(view, decided))
            for view in read.views}


def _scores(protocol, items: Iterable[Item], predicted) -> dict:
    """Word-weighted scores per view; ``predicted(item)`` gives each view's (gold, predicted) of a sentence."""
    read = scoring(protocol)
    totals = {view: {"tp": 0, "predicted": 0, "gold": 0} for view in read.view_ids}
    for item in items:
        for view, (gold, flagged) in predicted(item).items():
            if gold:
                totals[view]["gold"] += item.words
            if flagged:
                totals[view]["predicted"] += item.words
            if gold and flagged:
                totals[view]["tp"] += item.words
    scores = {}
    for view, t in totals.items():
        scores[view] = {
            **f1_from_counts(t["tp"], t["predicted"], t["gold"]),
            "correct_words": t["tp"], "predicted_words": t["predicted"], "gold_words": t["gold"],
        }
    if read.macro_id:
        exact = {view: exact_f1(totals[view]["tp"], totals[view]["predicted"], totals[view]["gold"])
                 for view in read.macro_views}
        scores[read.macro_id] = {"f1": macro_f1(exact.values()),
                                 **{f"{view}_f1": scores[view]["f1"] for view in read.macro_views}}
    if read.pooled and LEGACY_POOLED not in scores:
        scores[LEGACY_POOLED] = scores[read.pooled]
    return scores


def detection_scores(protocol, items: Iterable[Item], threshold: int) -> dict:
    """Word-weighted precision, recall and F1 per view of the protocol at one threshold, and its macro F1."""
    return _scores(protocol, items, lambda item: item_flags(protocol, item, threshold))


def _flag_all(protocol, flag: bool):
    read = scoring(protocol)
    return lambda item: {view.id: (item.gold in view.positive, flag and read.in_scope(view, item.gold))
                         for view in read.views}


def baseline_scores(protocol, items: Sequence[Item]) -> dict:
    """The trivial baselines, counted like a job: every sentence flagged (in every view), and none."""
    return {
        "flag_every_sentence": _scores(protocol, items, _flag_all(protocol, True)),
        "flag_none": _scores(protocol, items, _flag_all(protocol, False)),
    }


def family_confusion(protocol, family, items: Iterable[Item], threshold: int) -> dict:
    """Accuracy on the sentences whose gold is in one family and the confusion matrix (sentence counts).

    Rows are the family's gold labels; columns the family's labels, then "not <family>" (the voted label is
    outside the family) and "no label" (no agreeing sample gave one). CogniBench's cognitive family gives the
    four-way cognitive accuracy.
    """
    order = list(family.labels)
    outside = f"not {family.name.lower()}"
    columns = order + [outside, NO_LABEL]
    matrix = {gold: {column: 0 for column in columns} for gold in order}
    for item in items:
        if item.gold not in matrix:
            continue
        label = decision(item.votes, threshold, protocol).label
        column = label if label in order else (outside if label else NO_LABEL)
        matrix[item.gold][column] += item.sentences
    total = sum(sum(row.values()) for row in matrix.values())
    correct = sum(matrix[gold][gold] for gold in order)
    predicted_in_family = sum(matrix[g][c] for g in order for c in order)
    return {
        "family": family.id,
        "name": family.name,
        "columns": columns,
        "rows": order,
        "matrix": matrix,
        "total": total,
        "correct": correct,
        "accuracy": _ratio(correct, total),
        f"accuracy_when_{family.id}": _ratio(correct, predicted_in_family),
    }


def confusion(protocol, items: Sequence[Item], threshold: int) -> dict:
    """Per family of the protocol (by its id), ``family_confusion``."""
    return {family.id: family_confusion(protocol, family, items, threshold) for family in scoring(protocol).families}


# The report's own keys: a family whose id is one of them is only under "confusion".
_REPORT_KEYS = {"sentences", "words", "samples", "threshold", "thresholds", "baselines", "confusion", "views",
                "macro", "job", "model", "prompt_version", "gold_sentences_in_scope", "calibration", "rater",
                "comparison", "protocol", "kind_steps"}


def evaluate(protocol, items: Sequence[Item], samples: int, threshold: int) -> dict:
    """The full report: detection scores for thresholds 1..samples, the trivial baselines, the confusion matrix
    of each family at ``threshold`` (also under the family's own id: CogniBench's ``cognitive`` key)."""
    items = collapse(items)
    read = scoring(protocol)
    matrices = confusion(protocol, items, threshold)
    report = {
        "sentences": sum(item.sentences for item in items),
        "words": sum(item.words for item in items),
        "samples": samples,
        "threshold": threshold,
        # A view's scope (the gold labels it counts) when narrower than every label, else None.
        "views": [{"id": view.id, "name": read.names[view.id],
                   "scope": [label for label in read.labels if label in view.scope] if read.narrow(view) else None}
                  for view in read.views],
        "macro": {"id": read.macro_id, "name": read.names[read.macro_id], "views": list(read.macro_views)}
        if read.macro_id else None,
        "thresholds": {t: detection_scores(protocol, items, t) for t in range(1, max(samples, 1) + 1)},
        "baselines": baseline_scores(protocol, items),
        "confusion": matrices,
    }
    report.update({family: figures for family, figures in matrices.items() if family not in _REPORT_KEYS})
    return report
