"""The learned judge's dense features of a batch of sentences, as arrays (``features`` says what they are).

Every text of the batch is searched by one regular expression over the texts joined (``_find``), its tokens
hashed; a sentence's token is "in its reference" when the key (reference, token) is among the reference's keys,
a sorted search (``text_arrays.member``). What a reference gives is computed once for all the batch's sentences
that share it; the only loop per sentence reads the votes of the sentences that have some.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from autolabel.learned.features import (ALIGNED, EVALUATIVE, HEDGES, MONTHS, NEGATIONS, PERSONAL, REASONING, STEMMED,
                                        STOP, UNSPACED_CLASS, Example)
from autolabel.learned.text_arrays import combine, member

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*|\x00")
# Not at a sentence's start (``\x00`` separates the sentences searched at once), nor after a full stop. The
# lookbehinds are read after the capital (the word boundary before it is "no word character before it"): tried at
# every position, as they were first, they cost four times the search (the same matches: tests/test_learned_speed).
_NAME = re.compile(r"\x00|[A-Z](?<![.!?]\s[A-Z])(?<![\w\x00][A-Z])[a-zA-Z\-]+")
# A token or a sentence end: a run of word characters of spaced scripts, or one character that is a token of a
# script written without spaces or a sentence end (one class: two alternatives tried per position, not three).
_TOKEN_OR_END = re.compile(f"[^\\W{UNSPACED_CLASS}]+|[{UNSPACED_CLASS}.!?。！？\n\x00]")


def _share(found: np.ndarray, total: np.ndarray) -> np.ndarray:
    return np.divide(found, total, out=np.zeros(len(found)), where=total > 0)


def _per(texts: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(texts, minlength=size).astype(np.float64)


def _distinct(values) -> tuple[list, np.ndarray]:
    """The distinct values in first-seen order, and each value's index among them."""
    index: dict = {}
    where = np.fromiter((index.setdefault(value, len(index)) for value in values), dtype=np.int64)
    return list(index), where


def _hashes(words) -> np.ndarray:
    # Python's string hash: the same within a process, which is all a batch needs (nothing of it is stored).
    return np.fromiter(map(hash, words), dtype=np.int64).view(np.uint64)


_LEXICONS = {name: np.unique(_hashes(words)) for name, words in (
    ("stop", STOP), ("negation", NEGATIONS), ("hedge", HEDGES), ("reasoning", REASONING),
    ("evaluative", EVALUATIVE), ("personal", PERSONAL),
    ("date", MONTHS + tuple(str(year) for year in range(1500, 2100))), ("end", tuple(".!?。！？\n")))}


_SEPARATOR = hash("\x00")
STEM = 5


def _find(pattern: re.Pattern, texts: Sequence[str], *, lower: bool = False):
    """Every match of ``pattern`` (which also matches the separator ``\\x00``) in all the texts at once, by one
    search over the texts joined (a search per text costs more than the search): the matches, their hashes and
    the text of each."""
    joined = "\x00" + "\x00".join(texts)
    if joined.count("\x00") != max(len(texts), 1):  # a text holding the separator: read it as a space
        joined = "\x00" + "\x00".join(text.replace("\x00", " ") for text in texts)
    found = pattern.findall(joined.lower() if lower else joined)
    hashes = _hashes(found)
    separator = hashes == np.uint64(_SEPARATOR % 2**64)
    keep = np.flatnonzero(~separator)
    return found, keep, hashes[keep], (np.cumsum(separator) - 1)[keep]


class Tokens:
    """The tokens of many texts at once (``tokens``' rule, by one regular expression): ``hash``, ``text`` (the
    text's index) and ``sentence`` (sentence ends counted over the whole stream) per token."""

    def __init__(self, texts: Sequence[str], *, stems: bool = False, digits: bool = False):
        found, keep, everything, text = _find(_TOKEN_OR_END, texts, lower=True)
        end = np.isin(everything, _LEXICONS["end"])
        self.size = len(texts)
        self.hash, self.text = everything[~end], text[~end]
        self.sentence = np.cumsum(end)[~end]
        # A crude stem, the first STEM characters: "stands" meets "stand", "invented" meets "invention" (a
        # paraphrase of the reference otherwise reads as words it lacks, the look of an invented sentence).
        # A Python pass over every token (a sixth more CPU for a job): computed only for a model that reads them.
        self.stem = _hashes(found[i][:STEM] for i in keep.tolist())[~end] if stems else None
        # Which tokens are numbers (another Python pass over every token): only for a model that aligns.
        self.digit = np.fromiter((found[i].isdigit() for i in keep.tolist()), dtype=bool,
                                 count=len(keep))[~end] if digits else None

    def runs(self, length: int) -> tuple[np.ndarray, np.ndarray]:
        """Hashes of every ``length`` consecutive tokens of one sentence (pairs, triples) and their texts."""
        count = len(self.hash) - length + 1
        if count <= 0:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        same = (self.text[:count] == self.text[length - 1:]) & (self.sentence[:count] == self.sentence[length - 1:])
        hashes = self.hash[:count]
        for offset in range(1, length):
            hashes = combine(hashes, self.hash[offset:offset + count])
        return hashes[same], self.text[:count][same]


def _numbers_absent(sentences: Sequence[str], references: Sequence[str], reference_of: np.ndarray):
    """Per sentence, its numbers and those absent from its reference (``1,000`` and ``1000`` are one number)."""
    def numbers(texts):
        found, keep, _, owner = _find(_NUMBER, texts)
        return owner, _hashes(found[i].replace(",", "") for i in keep.tolist())

    owner, hashes = numbers(sentences)
    known_owner, known = numbers(references)
    absent = ~member(combine(reference_of[owner], hashes), combine(known_owner, known))
    return _per(owner, len(sentences)), _per(owner[absent], len(sentences))


def _names_absent(sentences: Sequence[str], references: Tokens, reference_of: np.ndarray):
    """Per sentence, its capitalised names (not its first word, nor a word after a full stop) and those that
    are no word of its reference."""
    found, keep, _, owner = _find(_NAME, sentences)
    hashes = _hashes(found[i].lower() for i in keep.tolist())
    absent = ~member(combine(reference_of[owner], hashes), combine(references.text, references.hash))
    return _per(owner, len(sentences)), _per(owner[absent], len(sentences))


def _reference_parts(references: Tokens) -> np.ndarray:
    """Each reference token's sentence, numbered across the batch: a new one at a sentence end or a new text
    (a reference's last sentence without a full stop is not its neighbour's first)."""
    new = np.ones(len(references.text), dtype=bool)
    new[1:] = (np.diff(references.text) != 0) | (np.diff(references.sentence) != 0)
    return np.cumsum(new) - 1


def _overlaps(sentences: Tokens, references: Tokens, reference_of, content, reference_content, parts):
    """The distinct content words each sentence shares with each sentence of its own reference (sparse:
    sentences x reference sentences, one product of the two incidence matrices over (reference, word) keys), and
    how many distinct content words each sentence and each reference sentence has."""
    sentence_keys = combine(reference_of[sentences.text[content]], sentences.hash[content])
    reference_keys = combine(references.text[reference_content], references.hash[reference_content])
    columns, where = np.unique(np.concatenate([sentence_keys, reference_keys]), return_inverse=True)
    split = len(sentence_keys)
    rows = sparse.csr_matrix((np.ones(split), (sentences.text[content], where[:split])),
                             shape=(sentences.size, len(columns)))
    found = sparse.csr_matrix((np.ones(len(where) - split), (parts[reference_content], where[split:])),
                              shape=(int(parts.max(initial=-1)) + 1, len(columns)))
    rows.data[:], found.data[:] = 1, 1  # distinct words: a word twice counts once
    product = sparse.csr_matrix((rows @ found.T))
    return product, np.diff(rows.indptr).astype(np.float64), np.diff(found.indptr).astype(np.float64)


def _best_sentence_overlap(product, content_words: np.ndarray) -> np.ndarray:
    """Per sentence, the largest share of its distinct content words found in one sentence of its reference."""
    if not product.shape[1]:
        return np.zeros(product.shape[0])
    return _share(product.max(axis=1).toarray().ravel(), content_words)


def _aligned(product, content_words, part_words, sentences: Tokens, references: Tokens, parts) -> list:
    """The ``features.ALIGNED`` columns: each sentence against the reference sentence sharing most of its content
    words (ties: the first), read from the overlap product's nonzero entries, sorted once by (row, -shared)."""
    size = product.shape[0]
    counts = np.diff(product.indptr)
    row_of = np.repeat(np.arange(size), counts)
    order = np.lexsort((-product.data, row_of))
    shared = np.append(product.data[order], 0.0)  # a sentinel: rows with no entry read index len(data)
    column = np.append(product.indices[order], -1)
    first = np.where(counts > 0, product.indptr[:-1], len(shared) - 1)
    second = np.where(counts > 1, product.indptr[:-1] + 1, len(shared) - 1)
    best, aligned = shared[first], column[first]
    union = content_words[row_of] + part_words[product.indices] - product.data
    jaccard = sparse.csr_matrix((np.divide(product.data, np.maximum(union, 1)), product.indices, product.indptr),
                                shape=product.shape)
    best_jaccard = jaccard.max(axis=1).toarray().ravel() if product.shape[1] else np.zeros(size)
    # The numbers as tokens ("2,850" is "2" and "850" on both sides): those of the sentence that its aligned
    # reference sentence does not hold (all of them when no reference sentence shares a content word).
    owner, number = sentences.text[sentences.digit], sentences.hash[sentences.digit]
    known = combine(parts[references.digit], references.hash[references.digit])
    target = aligned[owner]
    present = member(combine(np.maximum(target, 0), number), known) & (target >= 0)
    return [best_jaccard, _share(best - shared[second], content_words),
            _share(_per(owner[~present], size), _per(owner, size)), np.log1p(content_words - best)]


def dense_matrix(examples: Sequence[Example], labels: Sequence[str], *, stems: bool = True,
                 aligned: bool = True) -> np.ndarray:
    """The numbers of every sentence (rows) of ``dense_names`` (columns), read a batch at a time: what a
    reference gives is computed once for all its sentences, and every overlap is an array operation over
    (reference, token) keys. ``stems`` (``aligned``) False: the ``STEMMED`` (``ALIGNED``) columns are left at 0 (a
    model not reading them)."""
    size = len(examples)
    texts = [example.text for example in examples]
    reference_texts, reference_of = _distinct(example.reference for example in examples)
    question_texts, question_of = _distinct(example.question for example in examples)
    sentences = Tokens(texts, stems=stems, digits=aligned)
    references = Tokens(reference_texts, stems=stems, digits=aligned)
    questions = Tokens(question_texts)
    text, hashes = sentences.text, sentences.hash
    in_reference = member(combine(reference_of[text], hashes), combine(references.text, references.hash))
    in_question = member(combine(question_of[text], hashes), combine(questions.text, questions.hash))
    content = ~np.isin(hashes, _LEXICONS["stop"])
    reference_content = ~np.isin(references.hash, _LEXICONS["stop"])
    words, content_words = _per(text, size), _per(text[content], size)
    parts = _reference_parts(references)
    product, distinct_content, part_words = _overlaps(sentences, references, reference_of, content,
                                                      reference_content, parts)
    runs = {}
    for length in (2, 3):
        run, run_text = sentences.runs(length)
        known, known_text = references.runs(length)
        found = member(combine(reference_of[run_text], run), combine(known_text, known))
        runs[length] = _share(_per(run_text[found], size), _per(run_text, size))
    numbers, numbers_absent = _numbers_absent(texts, reference_texts, reference_of)
    names, names_absent = _names_absent(texts, references, reference_of)
    negation = _per(text[np.isin(hashes, _LEXICONS["negation"])], size) > 0
    reference_negation = (_per(references.text[np.isin(references.hash, _LEXICONS["negation"])],
                               references.size) > 0)[reference_of]
    position = np.fromiter((example.position for example in examples), dtype=np.float64, count=size)
    count = np.fromiter((example.sentences for example in examples), dtype=np.float64, count=size)
    columns = [
        _share(_per(text[in_reference], size), words),
        _share(_per(text[content & in_reference], size), content_words),
        runs[2], runs[3],
        _best_sentence_overlap(product, distinct_content),
        _share(_per(text[content & in_question], size), content_words),
        np.log1p(_per(text[content & ~in_reference], size)),
        numbers, numbers_absent, _share(numbers_absent, numbers),
        names, names_absent, _share(names_absent, names),
        _per(text[np.isin(hashes, _LEXICONS["date"]) & ~in_reference], size),
        negation, reference_negation, negation & ~reference_negation,
        _per(text[np.isin(hashes, _LEXICONS["hedge"])], size),
        _per(text[np.isin(hashes, _LEXICONS["reasoning"])], size),
        _per(text[np.isin(hashes, _LEXICONS["evaluative"])], size),
        _per(text[np.isin(hashes, _LEXICONS["personal"])], size),
        np.fromiter((text.rstrip()[-1:] in ("!", "?") for text in texts), dtype=bool, count=size),
        position == 0, position == count - 1, _share(position, np.maximum(count - 1, 1)), np.log1p(words),
    ]
    stemmed = []
    if stems:
        stem_in_reference = member(combine(reference_of[text], sentences.stem),
                                   combine(references.text, references.stem))
        stemmed = [_share(_per(text[content & stem_in_reference], size), content_words),
                   _share(_per(text[content & in_reference], size), words)]
    matrix = np.zeros((size, len(columns) + 2 + len(labels) + len(STEMMED) + len(ALIGNED)))
    for column, values in enumerate(columns):
        matrix[:, column] = values
    _votes(matrix, len(columns), examples, labels)
    for column, values in enumerate(stemmed, start=len(columns) + 2 + len(labels)):
        matrix[:, column] = values  # last: a model fitted before them reads the same columns (``features.STEMMED``)
    if aligned:
        matrix[:, -len(ALIGNED):] = np.column_stack(_aligned(product, distinct_content, part_words, sentences,
                                                             references, parts))
    return matrix


def _votes(matrix: np.ndarray, first: int, examples: Sequence[Example], labels: Sequence[str]) -> None:
    """The pre-label job's votes (only the sentences that have some are read one by one)."""
    for row, example in enumerate(examples):
        answered = [vote for vote in example.votes or () if vote.get("hallucinated") is not None]
        if not answered:
            continue
        matrix[row, first] = 1.0
        matrix[row, first + 1] = sum(vote.get("hallucinated") is True for vote in answered) / len(answered)
        for column, label in enumerate(labels, start=first + 2):
            matrix[row, column] = sum(vote.get("label") == label for vote in answered) / len(answered)


def dense_features(example: Example, labels: Sequence[str]) -> list[float]:
    """The numbers of one sentence (``features.dense_names`` says which), as ``dense_matrix`` reads them in a batch."""
    return [float(value) for value in dense_matrix([example], labels)[0]]
