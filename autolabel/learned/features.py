"""What the learned judge reads of a sentence, as pure functions (no database, no model).

A ``Example`` is one sentence with what surrounds it: its turn's reference and question, its position among the
turn's sentences and, when a finished pre-labelling job predicted it, that job's sample votes. ``dense_features``
turns it into the numbers a linear model weighs beside the sentence's own n-grams:

- overlap with the reference: the share of the sentence's words (characters where the script is written without
  spaces) and word pairs found in the reference, and in the question;
- what the reference does not hold: numbers, capitalised names and dates of the sentence absent from it (counts
  and shares), the words in none of the reference's sentences;
- negation (the sentence's, and whether the reference has one), hedges and reasoning cues;
- the position (first, last, relative) and the length;
- the pre-label job's votes: the share of samples that gave each label of the protocol, and that said hallucinated.

Tokens are lower-cased words in spaced scripts and single characters in Chinese and Japanese
(``annotator.domain.languages``), so every language is read, not only English.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from annotator.domain.languages import UNSPACED_RANGES, is_unspaced

_TOKEN = re.compile(r"\w+", re.UNICODE)
_ANY_UNSPACED = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in UNSPACED_RANGES) + "]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z\-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*|\n+")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_NEGATIONS = frozenset("not no never none nor neither without cannot isn't aren't wasn't weren't doesn't don't "
                       "didn't won't can't nothing nobody 不 没 無 无 非 未 ない nicht kein keine pas jamais".split())
_HEDGES = frozenset("may might could can possibly perhaps likely unlikely probably suggest suggests suggesting "
                    "seem seems appear appears potentially generally often typically usually some".split())
_REASONING = frozenset("because therefore thus hence so consequently since overall however important "
                       "significant crucial essential key should must recommend recommended consider helps help "
                       "allows ensure ensures contribute contributes impact role making makes".split())
_STOP = frozenset("the a an of in on at to and or is are was were be been it its this that these those for with by "
                  "as from which who their there they he she his her we you your i".split())


@dataclass(frozen=True)
class Example:
    """One sentence to judge with its context. ``votes``: the pre-label job's sample votes ([] when none)."""

    text: str
    reference: str
    question: str = ""
    position: int = 0  # 0-based index among the turn's sentences
    sentences: int = 1  # how many sentences the turn has
    votes: Sequence[dict] = field(default_factory=tuple)


def tokens(text: str) -> list[str]:
    """Lower-cased words; each character of a script written without spaces is a token of its own."""
    words = _TOKEN.findall(text.lower())
    if not _ANY_UNSPACED.search(text):  # the common case, one scan of the text
        return words
    found = []
    for word in words:
        if not _ANY_UNSPACED.search(word):
            found.append(word)
            continue
        run = ""  # a spaced run inside the word ("iphone" in "用iphone拍照") stays one token
        for character in word:
            if is_unspaced(character):
                found.extend([run, character] if run else [character])
                run = ""
            else:
                run += character
        if run:
            found.append(run)
    return found


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in _STOP]


@dataclass(frozen=True)
class ReferenceIndex:
    """What the features ask of a reference, computed once per reference (a turn's sentences share it)."""

    words: frozenset
    pairs: frozenset
    triples: frozenset
    sentences: tuple  # each reference sentence's content words (a frozenset)
    numbers: frozenset
    lowered: str
    has_negation: bool


@lru_cache(maxsize=4096)
def reference_index(reference: str) -> ReferenceIndex:
    words = tokens(reference)
    parts = tuple(frozenset(_content(tokens(part))) for part in _SENTENCE_END.split(reference) if part.strip())
    return ReferenceIndex(
        words=frozenset(words), pairs=frozenset(zip(words, words[1:])),
        triples=frozenset(zip(words, words[1:], words[2:])), sentences=parts,
        numbers=frozenset(_normal_number(n) for n in _NUMBER.findall(reference)),
        lowered=reference.lower(), has_negation=any(w in _NEGATIONS for w in words),
    )


def _normal_number(number: str) -> str:
    return number.replace(",", "")


def _share(found: int, total: int) -> float:
    return found / total if total else 0.0


def dense_names(labels: Sequence[str]) -> list[str]:
    """The names of ``dense_features``' columns, in order (the votes' columns follow the protocol's labels)."""
    return [
        "word_overlap", "content_overlap", "pair_overlap", "triple_overlap", "best_sentence_overlap",
        "question_overlap", "words_not_in_reference",
        "numbers", "numbers_absent", "numbers_absent_share", "names", "names_absent", "names_absent_share",
        "dates_absent", "negation", "reference_negation", "negation_mismatch", "hedges", "reasoning_cues",
        "first", "last", "relative_position", "log_words", "has_votes", "votes_hallucinated",
    ] + [f"votes_{label}" for label in labels]


def dense_features(example: Example, labels: Sequence[str]) -> list[float]:
    """The numbers of one sentence (``dense_names`` says which), beside its n-grams."""
    reference = reference_index(example.reference)
    words = tokens(example.text)
    content = _content(words)
    question = set(tokens(example.question))
    pairs = list(zip(words, words[1:]))
    triples = list(zip(words, words[1:], words[2:]))
    content_set = set(content)
    numbers = [_normal_number(n) for n in _NUMBER.findall(example.text)]
    absent_numbers = [n for n in numbers if n not in reference.numbers]
    names = [n.lower() for n in _NAME.findall(example.text)]
    absent_names = [n for n in names if n not in reference.words]
    dates = _YEAR.findall(example.text) + [m for m in _MONTHS if m in words]
    absent_dates = [d for d in dates if d not in reference.lowered]
    negation = any(w in _NEGATIONS for w in words)
    votes = list(example.votes or ())
    answered = [v for v in votes if v.get("hallucinated") is not None]
    row = [
        _share(sum(w in reference.words for w in words), len(words)),
        _share(sum(w in reference.words for w in content), len(content)),
        _share(sum(p in reference.pairs for p in pairs), len(pairs)),
        _share(sum(t in reference.triples for t in triples), len(triples)),
        max((_share(len(content_set & part), len(content_set)) for part in reference.sentences), default=0.0),
        _share(sum(w in question for w in content), len(content)),
        math.log1p(sum(w not in reference.words for w in content)),
        float(len(numbers)), float(len(absent_numbers)), _share(len(absent_numbers), len(numbers)),
        float(len(names)), float(len(absent_names)), _share(len(absent_names), len(names)),
        float(len(absent_dates)),
        float(negation), float(reference.has_negation), float(negation and not reference.has_negation),
        float(sum(w in _HEDGES for w in words)), float(sum(w in _REASONING for w in words)),
        float(example.position == 0), float(example.position == example.sentences - 1),
        _share(example.position, max(example.sentences - 1, 1)), math.log1p(len(words)),
        float(bool(answered)),
        _share(sum(v.get("hallucinated") is True for v in answered), len(answered)),
    ]
    row += [_share(sum(v.get("label") == label for v in answered), len(answered)) for label in labels]
    return row
