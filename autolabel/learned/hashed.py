"""TF-IDF over hashed n-grams, fitted on the training sentences: the learned judge's n-gram columns.

``HashedTfidf`` counts a ``TextBatch``'s character n-grams (``"characters"``) or its words and word pairs
(``"words"``) by their hash, in ``BUCKETS`` buckets; fitting keeps the buckets seen in at least ``min_df`` training
sentences (the ``max_features`` most frequent of them), with their inverse document frequency. Transforming
reads only those buckets: a fixed vocabulary, so prediction never builds a dictionary or a string per n-gram.
The weights are scikit-learn's ``TfidfVectorizer(sublinear_tf=True)``: 1 + log(count), times the smoothed idf,
each row scaled to unit length.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from autolabel.learned.text_arrays import TextBatch, combine

BUCKETS = 1 << 20
KINDS = ("characters", "words")


def ngram_hashes(batch: TextBatch, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The hashes of the batch's n-grams of ``kind`` and the text each stands in."""
    if kind == "characters":
        return batch.character_ngrams()
    pairs, pair_texts = batch.token_runs(2)
    return (np.concatenate([batch.token_hash, combine(pairs, np.uint64(2))]),
            np.concatenate([batch.token_text, pair_texts]))


class HashedTfidf:
    def __init__(self, kind: str, *, min_df: int = 2, max_features: int = 20000):
        if kind not in KINDS:
            raise ValueError(f"kind is one of {', '.join(KINDS)}, not {kind!r}")
        self.kind, self.min_df, self.max_features = kind, min_df, max_features
        self.buckets = np.zeros(0, dtype=np.int64)  # sorted: column j reads bucket buckets[j]
        self.idf = np.zeros(0)

    def fit_transform(self, batch: TextBatch) -> sparse.csr_matrix:
        hashes, texts = ngram_hashes(batch, self.kind)
        buckets = (hashes % np.uint64(BUCKETS)).astype(np.int64)
        seen = np.unique(texts * BUCKETS + buckets) % BUCKETS  # each bucket once per sentence
        frequency = np.bincount(buckets, minlength=BUCKETS)
        documents = np.bincount(seen, minlength=BUCKETS)
        kept = np.flatnonzero(documents >= self.min_df)
        if len(kept) > self.max_features:  # the most frequent, ties to the lower bucket (stable)
            kept = np.sort(kept[np.argsort(-frequency[kept], kind="stable")[: self.max_features]])
        self.buckets = kept
        self.idf = np.log((1 + batch.size) / (1 + documents[kept])) + 1
        return self._matrix(buckets, texts, batch.size)

    def transform(self, batch: TextBatch) -> sparse.csr_matrix:
        hashes, texts = ngram_hashes(batch, self.kind)
        return self._matrix((hashes % np.uint64(BUCKETS)).astype(np.int64), texts, batch.size)

    def __getstate__(self):
        return {key: value for key, value in self.__dict__.items() if key != "_column_of"}  # rebuilt when read

    def _columns(self) -> np.ndarray:
        """bucket -> column (-1: a bucket the training sentences did not keep): one lookup per n-gram."""
        if getattr(self, "_column_of", None) is None:
            self._column_of = np.full(BUCKETS, -1, dtype=np.int32)
            self._column_of[self.buckets] = np.arange(len(self.buckets), dtype=np.int32)
        return self._column_of

    def _matrix(self, buckets: np.ndarray, texts: np.ndarray, rows: int) -> sparse.csr_matrix:
        columns = len(self.buckets)
        if not columns or not len(buckets):
            return sparse.csr_matrix((rows, columns))
        where = self._columns()[buckets]
        known = where >= 0
        # Duplicates (an n-gram twice in a sentence) are summed when the coordinates become rows.
        counts = sparse.csr_matrix((np.ones(int(known.sum())), (texts[known], where[known])), shape=(rows, columns))
        counts.data = (1 + np.log(counts.data)) * self.idf[counts.indices]
        norms = np.sqrt(np.bincount(np.repeat(np.arange(rows), np.diff(counts.indptr)), weights=counts.data ** 2,
                                    minlength=rows))
        norms[norms == 0] = 1
        counts.data /= np.repeat(norms, np.diff(counts.indptr))
        return counts
