"""Scoring a qualification attempt, as a rule on plain values: sentence accuracy against gold, and where each
wrong answer left the gold's decision path (what the annotator is shown afterwards).

The database service (annotator/qa/qualification.py) reads the qualification sentences and the
annotator's answers, scores them here and stores the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .gold_kinds import DECIDING_KINDS, same_answer


@dataclass(frozen=True)
class GoldSentence:
    id: int
    turn_id: int
    turn_name: str
    index: int
    text: str
    gold_label: str
    gold_path: dict  # empty when the gold has none: the one path of its label is used
    gold_reason: str = ""


@dataclass(frozen=True)
class Answered:
    label: str
    path: dict


@dataclass(frozen=True)
class Score:
    correct: int
    total: int
    passed: bool
    details: list[dict]


def score_attempt(protocol, sentences: Sequence[GoldSentence], answers: Mapping[int, Answered],
                  pass_mark: float) -> Score:
    """Scored against the project's ``protocol`` (the gold's path, and where a wrong answer left it).

    A sentence counts as correct when the annotator's label is the gold label; the attempt passes when the
    share of correct sentences reaches ``pass_mark`` (a set with no scored sentence passes)."""
    details, correct = [], 0
    for sentence in sentences:
        mine = answers.get(sentence.id)
        label = mine.label if mine else ""
        path = mine.path if mine else {}
        gold_path = sentence.gold_path or protocol.path_for_label(sentence.gold_label) or {}
        differed = kind_differences(protocol, path, gold_path) if label == sentence.gold_label else []
        is_correct = bool(label) and label == sentence.gold_label and not differed
        correct += is_correct
        diverged = differed[0] if differed else _divergence(protocol, path, gold_path)
        details.append({
            "sentence": sentence.id, "turn": sentence.turn_id, "turn_name": sentence.turn_name,
            "index": sentence.index, "text": sentence.text, "label": label, "path": path,
            "gold_label": sentence.gold_label, "gold_path": gold_path, "gold_reason": sentence.gold_reason,
            "correct": is_correct, "diverged_at": str(diverged) if diverged and not is_correct else "",
            "differed_at": differed,
        })
    total = len(sentences)
    return Score(correct=correct, total=total, passed=total == 0 or correct / total >= pass_mark, details=details)


def kind_differences(protocol, path: Mapping, gold_path: Mapping) -> list[str]:
    """The multiple and scale steps (protocol order) where ``path`` does not give the gold's value, by gold's
    rules (annotator/domain/gold_kinds.py): a multiple step agrees on an equal set, a scale on an equal point,
    a text never decides. A step the gold's walk lacks (gold imported with its label only) is not held against
    the annotator: there is nothing to compare with."""
    if not protocol.kind_steps():
        return []
    path = path if isinstance(path, Mapping) else {}
    differed = []
    for step in protocol.kind_steps():
        if protocol.step_kind(step) not in DECIDING_KINDS or step not in gold_path:
            continue
        if step not in path or not same_answer(protocol.step_kind(step), [gold_path[step], path[step]]):
            differed.append(step)
    return differed


def _divergence(protocol, path: Mapping, gold_path: Mapping):
    """Where a wrong label left the gold's walk. On a protocol with step kinds, a different text (or the order a
    list was stored in) is not where the annotator went another way: only choices and the deciding kinds count."""
    if not protocol.kind_steps():
        return protocol.divergence(path, gold_path)
    deciding = {step for step in protocol.kind_steps() if protocol.step_kind(step) in DECIDING_KINDS}
    text = set(protocol.kind_steps()) - deciding
    return protocol.divergence(
        {step: (sorted(value) if isinstance(value, list) else value) for step, value in path.items() if step not in text},
        {step: (sorted(value) if isinstance(value, list) else value) for step, value in gold_path.items() if step not in text})


# The most automatic retries a project may set (a lead still sees every attempt).
MAX_AUTO_RETRIES = 20


def retry_opens_by_itself(failed_attempts: int, auto_retries: int) -> bool:
    """After a failed attempt, whether the next one opens without a lead: while the annotator's failed
    attempts so far (this one included) are at most the project's ``auto_retries``."""
    return 0 < failed_attempts <= auto_retries


def automatic_retries_left(failed_attempts: int, auto_retries: int) -> int:
    """How many more failed attempts would still open the next one by themselves."""
    return max(0, auto_retries - failed_attempts)
