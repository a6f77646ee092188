"""The learned judge's model: n-grams and reference features into logistic regressions, pure (scikit-learn).

``JudgeModel.fit(examples, labels)`` learns from gold; ``predict_proba(examples)`` gives, per sentence, a
probability for every label of the protocol. Two shapes, chosen by ``strategy``:

- ``"steps"`` (the default) mirrors the protocol's walk: one classifier per step, trained on the gold sentences
  whose path passes through it, over that step's answers; a label's probability is the product of the answers'
  probabilities along its path (summed over its paths). A rare label shares what its earlier steps learned from
  every sentence that went that way (CogniBench: "cognitive" is learned from all cognitive sentences before
  "speculative or not" is learned from fewer).
- ``"flat"``: one classifier over the labels.

Every classifier weighs the classes by their inverse frequency (``class_weight="balanced"``): the hallucinated
labels are the rare ones, and the macro of the evaluation counts each view alike.

The text is read as character n-grams within words (every script, spaced or not) and word n-grams (words, or
characters where the script has no spaces: ``features.tokens``), beside ``features.dense_features``, scaled.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from autolabel.learned.features import Example, dense_features, tokens

STRATEGIES = ("steps", "flat")


class TextFeatures:
    """Sentence n-grams (TF-IDF) and the dense features, scaled; fitted on the training sentences only."""

    def __init__(self, labels: Sequence[str], *, use_ngrams: bool = True, use_dense: bool = True,
                 use_characters: bool = True):
        self.labels = tuple(labels)
        self.use_ngrams, self.use_dense, self.use_characters = use_ngrams, use_dense, use_characters
        self.characters = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, sublinear_tf=True,
                                          max_features=20000)
        self.words = TfidfVectorizer(tokenizer=tokens, token_pattern=None, lowercase=False, ngram_range=(1, 2),
                                     min_df=2, sublinear_tf=True, max_features=10000)
        self.scaler = StandardScaler()

    def _dense(self, examples: Sequence[Example]) -> np.ndarray:
        return np.asarray([dense_features(example, self.labels) for example in examples], dtype=np.float64)

    def fit_transform(self, examples: Sequence[Example]):
        texts = [example.text for example in examples]
        blocks = []
        if self.use_ngrams and self.use_characters:
            blocks.append(self.characters.fit_transform(texts))
        if self.use_ngrams:
            blocks.append(self.words.fit_transform(texts))
        if self.use_dense:
            blocks.append(sparse.csr_matrix(self.scaler.fit_transform(self._dense(examples))))
        return sparse.hstack(blocks, format="csr")

    def transform(self, examples: Sequence[Example]):
        texts = [example.text for example in examples]
        blocks = []
        if self.use_ngrams and self.use_characters:
            blocks.append(self.characters.transform(texts))
        if self.use_ngrams:
            blocks.append(self.words.transform(texts))
        if self.use_dense:
            blocks.append(sparse.csr_matrix(self.scaler.transform(self._dense(examples))))
        return sparse.hstack(blocks, format="csr")


class _Constant:
    """A step whose training sentences all gave one answer: it always gives that answer."""

    def __init__(self, answer: str):
        self.classes_ = np.asarray([answer])

    def predict_proba(self, matrix) -> np.ndarray:
        return np.ones((matrix.shape[0], 1))


def _classifier(matrix, targets: Sequence[str], regularization: float):
    if len(set(targets)) < 2:
        return _Constant(targets[0])
    # liblinear is the fast solver on sparse text; with more than two classes, one model per class (the
    # multinomial lbfgs took minutes on this machine for a few hundred sentences).
    # The dual problem: far more features (n-grams) than sentences, where liblinear's dual solver is the fast one.
    model = LogisticRegression(C=regularization, class_weight="balanced", solver="liblinear", dual=True,
                               max_iter=1000)
    if len(set(targets)) > 2:
        model = OneVsRestClassifier(model)
    return model.fit(matrix, list(targets))


class JudgeModel:
    """A fitted judge for one protocol: ``labels`` its labels, ``paths`` its walks (step -> answer dicts, one per
    label reachable through it, as ``Protocol.paths()`` and ``Protocol.label_of`` give them)."""

    def __init__(self, labels: Sequence[str], paths: Sequence[tuple[dict, str]], *, strategy: str = "steps",
                 regularization: float = 1.0, use_ngrams: bool = True, use_dense: bool = True,
                 use_characters: bool = True):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy is one of {', '.join(STRATEGIES)}, not {strategy!r}")
        self.labels = tuple(labels)
        self.paths = [(dict(path), label) for path, label in paths]
        self.strategy = strategy
        self.regularization = regularization
        self.features = TextFeatures(self.labels, use_ngrams=use_ngrams, use_dense=use_dense,
                                     use_characters=use_characters)
        self.classifiers: dict[str, object] = {}

    def fit(self, examples: Sequence[Example], labels: Sequence[str]) -> JudgeModel:
        if not examples:
            raise ValueError("there are no gold sentences to learn from")
        matrix = self.features.fit_transform(examples)
        if self.strategy == "flat":
            self.classifiers = {"": _classifier(matrix, labels, self.regularization)}
            return self
        path_of = {label: path for path, label in self.paths}
        by_step: dict[str, tuple[list[int], list[str]]] = {}
        for row, label in enumerate(labels):
            for step, answer in path_of.get(label, {}).items():
                rows, answers = by_step.setdefault(step, ([], []))
                rows.append(row)
                answers.append(answer)
        self.classifiers = {step: _classifier(matrix[rows], answers, self.regularization)
                            for step, (rows, answers) in by_step.items()}
        return self

    def predict_proba(self, examples: Sequence[Example]) -> np.ndarray:
        """(sentences, labels) probabilities, columns in ``self.labels``' order; each row sums to 1."""
        matrix = self.features.transform(examples)
        result = np.zeros((matrix.shape[0], len(self.labels)))
        column = {label: i for i, label in enumerate(self.labels)}
        if self.strategy == "flat":
            model = self.classifiers[""]
            probabilities = model.predict_proba(matrix)
            for j, label in enumerate(model.classes_):
                result[:, column[label]] = probabilities[:, j]
            return result
        answers = {}
        for step, model in self.classifiers.items():
            probabilities = model.predict_proba(matrix)
            answers[step] = {answer: probabilities[:, j] for j, answer in enumerate(model.classes_)}
        for path, label in self.paths:
            product = np.ones(matrix.shape[0])
            for step, answer in path.items():
                # A step never reached in training, or an answer it never saw, gives that path nothing.
                product = product * answers.get(step, {}).get(answer, 0.0)
            result[:, column[label]] += product
        totals = result.sum(axis=1, keepdims=True)
        uniform = np.full(len(self.labels), 1 / len(self.labels))
        return np.where(totals > 0, result / np.where(totals > 0, totals, 1), uniform)


def protocol_paths(protocol) -> list[tuple[dict, str]]:
    """Every walk of the protocol with the label it yields."""
    return [(path, protocol.label_of_shape(path)) for path in protocol.paths()]


def judge_for(protocol, **options) -> JudgeModel:
    return JudgeModel(tuple(protocol.labels), protocol_paths(protocol), **options)
