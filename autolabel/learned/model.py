"""The learned judge's model: n-grams and reference features into logistic regressions, pure (scikit-learn).

``JudgeModel.fit(examples, labels)`` learns from gold; ``predict_proba(examples)`` gives, per sentence, a
probability for every label of the protocol. Two shapes, chosen by ``strategy``:

- ``"steps"`` (the default) mirrors the protocol's walk: one classifier per step, trained on the gold sentences
  whose path passes through it, over that step's answers; a label's probability is the product of the answers'
  probabilities along its path (summed over its paths). A rare label shares what its earlier steps learned from
  every sentence that went that way (CogniBench: "cognitive" is learned from all cognitive sentences before
  "speculative or not" is learned from fewer).
- ``"flat"``: one classifier over the labels.
- ``"verdict"``: hallucinated or not, learned from every gold sentence; then which label, one classifier per side
  learned from that side's gold only (issue 47 item 9: the invented/speculative split learned from the
  hallucinated sentences alone). A label's probability is its side's times its own within the side, so the
  decision's verdict (``decision``: half the probability) is the first classifier's.

Every classifier weighs the classes by their inverse frequency (``class_weight="balanced"``): the hallucinated
labels are the rare ones, and the macro of the evaluation counts each view alike.

The text is read as character n-grams within words (every script, spaced or not) and word n-grams (words, or
characters where the script has no spaces: ``features.tokens``), hashed (``hashed.HashedTfidf``), beside
``features.dense_matrix``, scaled. ``feature_version`` records which features a fitted model reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from autolabel.learned.dense import dense_matrix
from autolabel.learned.features import ALIGNED, CUES, FEATURE_VERSION, STEMMED, Example, dense_names
from autolabel.learned.hashed import HashedTfidf
from autolabel.learned.text_arrays import TextBatch

STRATEGIES = ("steps", "flat", "verdict")
CHUNK = 20_000  # sentences featurized at once when predicting: the arrays of a chunk and its references fit in memory
# More sentences than this are predicted in two processes (a budget round's 240,000: both cores of the worker);
# fewer are not worth starting a process for.
PARALLEL_ABOVE = 20_000
PROCESSES = 2


class TextFeatures:
    """Sentence n-grams (hashed TF-IDF) and the dense features, scaled; fitted on the training sentences only."""

    def __init__(self, labels: Sequence[str], *, use_ngrams: bool = True, use_dense: bool = True,
                 use_characters: bool = True, use_cues: bool = False, use_stems: bool = False,
                 use_alignment: bool = False):
        self.labels = tuple(labels)
        self.use_ngrams, self.use_dense, self.use_characters = use_ngrams, use_dense, use_characters
        self.use_stems, self.use_alignment = use_stems, use_alignment
        names = dense_names(self.labels)
        self.dense_columns = [i for i, name in enumerate(names)
                              if (use_cues or name not in CUES) and (use_stems or name not in STEMMED)
                              and (use_alignment or name not in ALIGNED)]
        self.characters = HashedTfidf("characters", max_features=20000)
        self.words = HashedTfidf("words", max_features=10000)
        self.scaler = StandardScaler()

    def _blocks(self, examples: Sequence[Example], fit: bool) -> list:
        batch = TextBatch([example.text for example in examples]) if self.use_ngrams else None
        blocks = []
        if self.use_ngrams and self.use_characters:
            blocks.append(self.characters.fit_transform(batch) if fit else self.characters.transform(batch))
        if self.use_ngrams:
            blocks.append(self.words.fit_transform(batch) if fit else self.words.transform(batch))
        if self.use_dense:
            # A model stored before the stems (the alignment) existed has no ``use_stems`` (``use_alignment``): it
            # never read them.
            dense = dense_matrix(examples, self.labels, stems=getattr(self, "use_stems", False),
                                 aligned=getattr(self, "use_alignment", False))[:, self.dense_columns]
            blocks.append(sparse.csr_matrix(self.scaler.fit_transform(dense) if fit else self.scaler.transform(dense)))
        return blocks

    def fit_transform(self, examples: Sequence[Example]):
        return sparse.hstack(self._blocks(examples, fit=True), format="csr")

    def transform(self, examples: Sequence[Example]):
        return sparse.hstack(self._blocks(examples, fit=False), format="csr")


class _Constant:
    """A step whose training sentences all gave one answer: it always gives that answer."""

    def __init__(self, answer: str):
        self.classes_ = np.asarray([answer])

    def predict_proba(self, matrix) -> np.ndarray:
        return np.ones((matrix.shape[0], 1))


def _classifier(matrix, targets: Sequence[str], regularization: float, balanced: bool = True):
    if len(set(targets)) < 2:
        return _Constant(targets[0])
    # liblinear is the fast solver on sparse text; with more than two classes, one model per class (the
    # multinomial lbfgs took minutes on this machine for a few hundred sentences).
    # The dual problem: far more features (n-grams) than sentences, where liblinear's dual solver is the fast one.
    model = LogisticRegression(C=regularization, class_weight="balanced" if balanced else None, solver="liblinear",
                               dual=True, max_iter=1000)
    if len(set(targets)) > 2:
        model = OneVsRestClassifier(model)
    return model.fit(matrix, list(targets))


class JudgeModel:
    """A fitted judge for one protocol: ``labels`` its labels, ``paths`` its walks (step -> answer dicts, one per
    label reachable through it, as ``Protocol.paths()`` and ``Protocol.label_of`` give them)."""

    def __init__(self, labels: Sequence[str], paths: Sequence[tuple[dict, str]], *, strategy: str = "steps",
                 regularization: float = 1.0, use_ngrams: bool = True, use_dense: bool = True,
                 use_characters: bool = True, use_cues: bool = False, use_stems: bool = False,
                 use_alignment: bool = False, tune_decision: bool = False, balanced: bool = True):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy is one of {', '.join(STRATEGIES)}, not {strategy!r}")
        self.labels = tuple(labels)
        self.paths = [(dict(path), label) for path, label in paths]
        self.strategy = strategy
        self.regularization = regularization
        self.balanced = balanced  # class weights inverse to frequency (False: measured in the bench, not shipped)
        self.features = TextFeatures(self.labels, use_ngrams=use_ngrams, use_dense=use_dense,
                                     use_characters=use_characters, use_cues=use_cues, use_stems=use_stems,
                                     use_alignment=use_alignment)
        self.classifiers: dict[str, object] = {}
        self.feature_version = FEATURE_VERSION
        # Per label, the weight its probability is multiplied by before the rows are normalised again: the decision
        # rule chosen on the training turns (``validation.fit_judge`` sets it when ``tune_decision``); None: none.
        self.tune_decision = tune_decision
        self.label_weights: np.ndarray | None = None

    def fit(self, examples: Sequence[Example], labels: Sequence[str]) -> JudgeModel:
        if not examples:
            raise ValueError("there are no gold sentences to learn from")
        return self.fit_matrix(self.features.fit_transform(examples), labels)

    def fit_matrix(self, matrix, labels: Sequence[str]) -> JudgeModel:
        """The classifiers fitted on ``self.features``' rows of the training sentences (``fit_transform``): judges
        that read the same features share them (``validation.choose_options`` computes them once per fold)."""
        if self.strategy == "flat":
            self.classifiers = {"": _classifier(matrix, labels, self.regularization, self.balanced)}
            return self
        path_of = {label: path for path, label in self.paths}
        by_step: dict[str, tuple[list[int], list[str]]] = {}
        for row, label in enumerate(labels):
            for step, answer in path_of.get(label, {}).items():
                rows, answers = by_step.setdefault(step, ([], []))
                rows.append(row)
                answers.append(answer)
        self.classifiers = {step: _classifier(matrix[rows], answers, self.regularization, self.balanced)
                            for step, (rows, answers) in by_step.items()}
        return self

    def predict_proba(self, examples: Sequence[Example], **chunking) -> np.ndarray:
        """(sentences, labels) probabilities, columns in ``self.labels``' order; each row sums to 1. With
        ``label_weights``, the weighted ones: the votes, the verdict and the confidence all read these.
        ``chunking``: ``raw_proba``'s."""
        probabilities = self.raw_proba(examples, **chunking)
        weights = getattr(self, "label_weights", None)  # a model stored before the decision weights has none
        return probabilities if weights is None else reweigh(probabilities, weights)

    def raw_proba(self, examples: Sequence[Example], *, chunk: int = CHUNK,
                  parallel_above: int = PARALLEL_ABOVE) -> np.ndarray:
        """The classifiers' probabilities, before any decision weights: ``chunk`` sentences featurized at once, the
        chunks shared by ``PROCESSES`` processes when there are more than ``parallel_above`` sentences (each row
        is read from its sentence alone: the same figures as one process)."""
        if len(examples) <= chunk:
            return self._chunk_proba(examples)
        chunks = [examples[start:start + chunk] for start in range(0, len(examples), chunk)]
        processes = _processes() if len(examples) > parallel_above else 1
        if processes < 2:
            return np.vstack([self._chunk_proba(part) for part in chunks])
        from joblib import Parallel, delayed  # installed with scikit-learn

        # loky's processes are kept for the next call (and closed when idle a while): started once per worker.
        return np.vstack(Parallel(n_jobs=processes)(delayed(self._chunk_proba)(part) for part in chunks))

    def _chunk_proba(self, examples: Sequence[Example]) -> np.ndarray:
        return self.matrix_proba(self.features.transform(examples))

    def matrix_proba(self, matrix) -> np.ndarray:
        """``raw_proba`` of sentences already read by ``self.features`` (``transform``)."""
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


def _processes() -> int:
    """The processes a large prediction uses: ``PROCESSES``, fewer where the machine (its CPU quota) has fewer cores."""
    from joblib import cpu_count

    return max(1, min(PROCESSES, cpu_count()))


def reweigh(probabilities: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each label's probability times its weight, each row normalised again (a row of zeros stays uniform)."""
    weighted = probabilities * weights
    totals = weighted.sum(axis=1, keepdims=True)
    uniform = np.full(probabilities.shape[1], 1 / probabilities.shape[1])
    return np.where(totals > 0, weighted / np.where(totals > 0, totals, 1), uniform)


def protocol_paths(protocol) -> list[tuple[dict, str]]:
    """Every walk of the protocol with the label it yields."""
    return [(path, protocol.label_of_shape(path)) for path in protocol.paths()]


def verdict_paths(protocol) -> list[tuple[dict, str]]:
    """The ``"verdict"`` shape's walks: hallucinated or not, then the label within that side."""
    hallucinated = protocol.hallucination_labels
    return [({"verdict": "hallucinated", "hallucinated": label} if label in hallucinated
             else {"verdict": "not", "not": label}, label) for label in protocol.labels]


def judge_for(protocol, **options) -> JudgeModel:
    paths = verdict_paths(protocol) if options.get("strategy") == "verdict" else protocol_paths(protocol)
    return JudgeModel(tuple(protocol.labels), paths, **options)
