"""A batch of texts read at once as numpy arrays: characters, tokens, their hashes, character n-grams.

The learned judge reads hundreds of thousands of sentences and a reference per turn; a Python loop per sentence
(or per n-gram, as scikit-learn's analyzers are) costs minutes. ``TextBatch`` joins the texts, reads their code
points into one array and finds every token and n-gram with array operations, so the cost is a few passes over
the characters of the batch.

Tokens are those of ``features.tokens``: lower-cased runs of word characters (``\\w``), each character of a script
written without spaces a token of its own. Character n-grams are read within whitespace-separated words padded
with a space (scikit-learn's ``char_wb``). A token or n-gram is known by a 64-bit hash of its characters,
polynomial over the code points (computed for every span at once from prefix sums, wrapping modulo 2**64) and
mixed (splitmix64): the same text gives the same hash in every process and on every machine, so a fitted model
keeps its meaning when it is stored and read back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from annotator.domain.languages import is_unspaced

_BASE = 0x100000001B3  # odd: invertible modulo 2**64
_BASE_INVERSE = pow(_BASE, -1, 2**64)
_WORD = re.compile(r"\w")
_SPACE = 32


def mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: every bit of the result depends on every bit of the value (uint64, wrapping)."""
    x = np.asarray(values, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def combine(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The hash of an ordered pair (a word pair, or a key within a group)."""
    with np.errstate(over="ignore"):
        return mix(np.asarray(first, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ mix(second))


_POWERS: dict[int, np.ndarray] = {}


def _powers(base: int, count: int) -> np.ndarray:
    """base**0 … base**(count - 1) modulo 2**64, kept between batches (grown by doubling)."""
    known = _POWERS.get(base)
    if known is None or len(known) < count:
        size = max(count, 2 * len(known) if known is not None else 1 << 16)
        powers = np.full(size, base, dtype=np.uint64)
        powers[0] = 1
        with np.errstate(over="ignore"):
            known = _POWERS[base] = np.cumprod(powers, dtype=np.uint64)
    return known[:count]


_WORD_FLAG, _SPACE_FLAG, _UNSPACED_FLAG = 1, 2, 4
_ASCII_LOWER = np.arange(128, dtype=np.uint32)
_ASCII_LOWER[65:91] += 32
_ASCII_FLAGS = np.array([_WORD_FLAG * bool(_WORD.match(chr(c))) + _SPACE_FLAG * chr(c).isspace() for c in range(128)],
                        dtype=np.uint8)


def _classes(codes: np.ndarray):
    """Per character: its lower case, whether it is a word character, a space, a character of a script written
    without spaces. ASCII from tables; the other code points once per distinct one."""
    ascii_codes = np.minimum(codes, 127)
    lower = _ASCII_LOWER[ascii_codes]
    flags = _ASCII_FLAGS[ascii_codes]
    wide = np.flatnonzero(codes > 127)
    if len(wide):
        distinct, where = np.unique(codes[wide], return_inverse=True)
        characters = [chr(c) for c in distinct]
        lowered = [c.lower() for c in characters]
        lower[wide] = np.array([ord(low) if len(low) == 1 else ord(c) for c, low in zip(characters, lowered)],
                               dtype=np.uint32)[where]
        flags[wide] = np.array([_WORD_FLAG * (bool(_WORD.match(c)) or is_unspaced(c)) + _SPACE_FLAG * c.isspace()
                                + _UNSPACED_FLAG * is_unspaced(c) for c in characters], dtype=np.uint8)[where]
    return lower, (flags & _WORD_FLAG) > 0, (flags & _SPACE_FLAG) > 0, (flags & _UNSPACED_FLAG) > 0


class TextBatch:
    """Texts joined by newlines (a space and a sentence end, so nothing is read across two texts).

    ``token_start``/``token_end`` are character offsets into ``codes``, ``token_text`` the index of the text a
    token belongs to, ``token_hash`` its hash. ``codes`` keeps the original case (names are read from it)."""

    def __init__(self, texts: Sequence[str]):
        self.size = len(texts)
        joined = "\n" + "\n".join(texts) + "\n"
        self.joined = joined
        self.codes = np.frombuffer(joined.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=self.size)
        self.starts = 1 + np.concatenate([[0], np.cumsum(self.lengths + 1)])[: self.size].astype(np.int64)
        self.lower, self.word, self.space, self.unspaced = _classes(self.codes)
        opening = np.zeros(len(self.codes), dtype=np.int32)
        opening[self.starts] = 1
        self._owner = np.cumsum(opening, dtype=np.int32) - 1  # the text a character of a text stands in
        padded = np.where(self.space, np.uint32(_SPACE), self.lower).astype(np.uint64) + np.uint64(1)
        self._power = _powers(_BASE, len(padded))
        self._inverse = _powers(_BASE_INVERSE, len(padded))
        with np.errstate(over="ignore"):
            self._prefix = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(padded * self._power,
                                                                                    dtype=np.uint64)])
        self._tokens()

    def text_at(self, positions: np.ndarray) -> np.ndarray:
        """The index of the text each character offset (inside a text) stands in."""
        return self._owner[positions].astype(np.int64)

    def span_hash(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The hash of each span [start, end) of the lower-cased text (whitespace read as one space)."""
        with np.errstate(over="ignore"):
            value = (self._prefix[end] - self._prefix[start]) * self._inverse[start]
            return mix(value ^ (np.asarray(end - start, dtype=np.uint64) * np.uint64(0xD6E8FEB86659FD93)))

    def _tokens(self):
        word, unspaced = self.word, self.unspaced
        before_word = np.concatenate([[False], word[:-1]])
        before_unspaced = np.concatenate([[False], unspaced[:-1]])
        after_word = np.concatenate([word[1:], [False]])
        after_unspaced = np.concatenate([unspaced[1:], [False]])
        self.token_start = np.flatnonzero(word & (unspaced | ~before_word | before_unspaced))
        self.token_end = np.flatnonzero(word & (unspaced | ~after_word | after_unspaced)) + 1
        self.token_text = self.text_at(self.token_start)
        self.token_hash = self.span_hash(self.token_start, self.token_end)

    def token_counts(self) -> np.ndarray:
        return np.bincount(self.token_text, minlength=self.size)

    def token_runs(self, length: int) -> tuple[np.ndarray, np.ndarray]:
        """Hashes of every run of ``length`` consecutive tokens of one text (pairs, triples) and their texts."""
        count = len(self.token_hash) - length + 1
        if count <= 0:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        same = self.token_text[:count] == self.token_text[length - 1:]
        hashes = self.token_hash[:count]
        for offset in range(1, length):
            hashes = combine(hashes, self.token_hash[offset:offset + count])
        return hashes[same], self.token_text[:count][same]

    def character_ngrams(self, sizes=(2, 3, 4)) -> tuple[np.ndarray, np.ndarray]:
        """Hashes of the n-grams within each whitespace-separated word padded with a space, and their texts.

        An n-gram is kept when no space stands inside it (one may pad either end) and it is not two spaces."""
        space = self.space
        spaces_before = np.concatenate([[0], np.cumsum(space, dtype=np.int32)])
        hashes, texts = [], []
        for size in sizes:
            count = len(space) - size + 1
            if count <= 0:
                continue
            valid = spaces_before[size - 1:size - 1 + count] == spaces_before[1:1 + count]
            if size == 2:
                valid &= ~(space[:count] & space[1:1 + count])
            start = np.flatnonzero(valid)
            with np.errstate(over="ignore"):
                value = (self._prefix[start + size] - self._prefix[start]) * self._inverse[start]
            hashes.append(mix(value ^ np.uint64(size * 0xD6E8FEB86659FD93 % 2**64)))
            texts.append(self.text_at(start + space[start]))
        if not hashes:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        return np.concatenate(hashes), np.concatenate(texts)


def member(keys: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Whether each key is among ``known`` (uint64 arrays; a sort and a binary search, no set)."""
    if not len(known) or not len(keys):
        return np.zeros(len(keys), dtype=bool)
    known = np.sort(known)
    where = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    return known[where] == keys
