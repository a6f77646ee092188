"""Scoring a qualification attempt, as a rule on plain values: sentence accuracy against gold, and where each
wrong answer left the gold's decision path (what the annotator is shown afterwards).

The database service (annotator/qa/qualification.py) reads the qualification sentences and the
annotator's answers, scores them here and stores the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


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
        is_correct = bool(label) and label == sentence.gold_label
        correct += is_correct
        gold_path = sentence.gold_path or protocol.path_for_label(sentence.gold_label) or {}
        diverged = protocol.divergence(path, gold_path)
        details.append({
            "sentence": sentence.id, "turn": sentence.turn_id, "turn_name": sentence.turn_name,
            "index": sentence.index, "text": sentence.text, "label": label, "path": path,
            "gold_label": sentence.gold_label, "gold_path": gold_path, "gold_reason": sentence.gold_reason,
            "correct": is_correct, "diverged_at": str(diverged) if diverged and not is_correct else "",
        })
    total = len(sentences)
    return Score(correct=correct, total=total, passed=total == 0 or correct / total >= pass_mark, details=details)


# The most automatic retries a project may set (a lead still sees every attempt).
MAX_AUTO_RETRIES = 20


def retry_opens_by_itself(failed_attempts: int, auto_retries: int) -> bool:
    """After a failed attempt, whether the next one opens without a lead: while the annotator's failed
    attempts so far (this one included) are at most the project's ``auto_retries``."""
    return 0 < failed_attempts <= auto_retries


def automatic_retries_left(failed_attempts: int, auto_retries: int) -> int:
    """How many more failed attempts would still open the next one by themselves."""
    return max(0, auto_retries - failed_attempts)
