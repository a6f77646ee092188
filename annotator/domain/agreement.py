"""Inter-annotator agreement, as plain functions over numpy arrays.

Nothing here touches the database: selectors aggregate the annotations and
hand this module arrays; the unit tests feed it published worked examples.

The central structure is a *value-counts matrix* ``C`` of shape (units, values):
``C[u, v]`` is how many coders gave value ``v`` to unit ``u``, over a fixed
value domain (the seven labels, or the two answers of one protocol step).
Missing values are simply absent counts, so a unit one annotator skipped has a
row sum of 1 and is not pairable.

Krippendorff's alpha is the ``krippendorff`` package's: its distance metrics
(nominal, ordinal, interval, ratio) and random-coincidence matrix. Only the
observed coincidence matrix is computed here, as one matrix product
``(C / (m - 1))ᵀ C - diag(...)``: the package's own ``alpha`` builds a
units × values × values array for it, which for 234,000 sentences over seven
labels peaks near 280 MB; the product gives the same matrix in O(units × values)
memory. The tests check both give the same alpha, and the published values.

Per-step agreement needs no paths: a final label determines the decision path
that reached it (the protocol's tree), so the value counts of a step are the
label counts times a 0/1 matrix mapping each label to that step's answer (or to
nothing, when the label's path never asked the step). Each step is therefore
measured over the sentences on which both annotators were asked it, whatever
the number of its answers. A label that two paths reach with different answers
to a step says nothing certain of that step: it counts as not asked there.

Everything about the protocol comes from its document (``Scheme``, built once
per protocol from ``protocol.groups.reading``): the labels, the steps agreement
is measured on and their answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .protocol.groups import reading

LEVELS = ("nominal", "ordinal", "interval", "ratio")


# --------------------------------------------------------------------------- building value counts


def value_counts(units: np.ndarray, values: np.ndarray, n_values: int, n_units: int | None = None) -> np.ndarray:
    """Value-counts matrix from one rating per element: unit index and value index (-1 = missing)."""
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    keep = values >= 0
    units, values = units[keep], values[keep]
    if n_units is None:
        n_units = int(units.max()) + 1 if units.size else 0
    flat = np.bincount(units * n_values + values, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values).astype(np.int32)


def value_counts_from_reliability_data(data, domain: Sequence) -> np.ndarray:
    """Value counts from Krippendorff's coders × units table; ``nan`` or None mark a missing value."""
    index = {value: i for i, value in enumerate(domain)}
    rows = []
    for coder in data:
        row = []
        for value in coder:
            if value is None or (isinstance(value, float) and np.isnan(value)):
                row.append(-1)
            else:
                row.append(index[value])
        rows.append(row)
    codes = np.asarray(rows, dtype=np.int64)
    n_coders, n_units = codes.shape
    units = np.tile(np.arange(n_units), n_coders)
    return value_counts(units, codes.reshape(-1), len(domain), n_units)


def value_counts_from_pairs(pairs: Iterable[tuple[int, int, int]], n_values: int) -> np.ndarray:
    """Value counts of two-coder units given as (value of coder a, value of coder b, number of units)."""
    rows = np.asarray(list(pairs), dtype=np.int64).reshape(-1, 3)
    if not len(rows):
        return np.zeros((0, n_values), dtype=np.int32)
    counts = rows[:, 2]
    n_units = int(counts.sum())
    first = np.repeat(rows[:, 0], counts)
    second = np.repeat(rows[:, 1], counts)
    units = np.arange(n_units)
    return value_counts(np.concatenate([units, units]), np.concatenate([first, second]), n_values, n_units)


def distinct_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a value-counts matrix and how many units each stands for.

    Rows are packed into one integer each (base: largest count + 1), so this is a
    one-dimensional ``np.unique``; the measures take the result with ``weights=``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if not len(counts):
        return counts, np.zeros(0, dtype=np.int64)
    base = int(counts.max()) + 1
    if base ** counts.shape[1] >= 2**62:
        rows, weights = np.unique(counts, axis=0, return_counts=True)
        return rows, weights
    keys = counts @ (base ** np.arange(counts.shape[1], dtype=np.int64))
    _, first, weights = np.unique(keys, return_index=True, return_counts=True)
    return counts[first], weights


# --------------------------------------------------------------------------- measures


def _weights(counts: np.ndarray, weights) -> np.ndarray:
    return np.ones(len(counts)) if weights is None else np.asarray(weights, dtype=np.float64)


def coincidences(counts: np.ndarray, weights=None) -> np.ndarray:
    """Krippendorff's observed coincidence matrix o (values × values), without a units × values × values array.

    ``weights`` says how many units each row of ``counts`` stands for (default
    one each): identical units need not be repeated, so a project's thousands
    of sentences reduce to the few dozen distinct value-count rows they form.
    """
    counts = np.asarray(counts, dtype=np.float64)
    coders = counts.sum(axis=1)
    per_unit = _weights(counts, weights) / (np.maximum(coders, 2) - 1)
    weighted = counts * per_unit[:, np.newaxis]
    return weighted.T @ counts - np.diag(weighted.sum(axis=0))


def alpha(counts: np.ndarray, level: str = "nominal", domain: Sequence | None = None, weights=None) -> float | None:
    """Krippendorff's alpha of a value-counts matrix; None when it is undefined.

    Undefined means no unit has two values to compare, or every pairable value
    is the same one (no variation, so the expected disagreement is zero).
    ``domain`` gives the numeric values of the columns for the ordinal,
    interval and ratio metrics (default 0, 1, 2, ...), in order.
    """
    counts = np.asarray(counts)
    n_values = counts.shape[1]
    if level not in LEVELS and not callable(level):
        raise ValueError(f"level of measurement must be one of {', '.join(LEVELS)}, not {level!r}")
    domain_array = np.arange(n_values) if domain is None else np.asarray(domain)
    if len(domain_array) != n_values:
        raise ValueError("the value domain must have one value per column of the counts")
    if n_values < 2 or not len(counts) or not pairable_units(counts, weights):
        return None
    observed = coincidences(counts, weights)
    n_v = observed.sum(axis=0)
    if np.count_nonzero(n_v) < 2:
        return None
    # Imported here: this module is reached from the API's and reports' views at start-up, and a web worker that
    # never measures agreement has no use for it (issue 49).
    from krippendorff import krippendorff as _kd

    expected = _kd._random_coincidences(n_v)
    distances = _kd._distances(domain_array, _kd._distance_metric(level), n_v)
    expected_disagreement = (expected * distances).sum()
    if expected_disagreement == 0:
        return None
    return float(1 - (observed * distances).sum() / expected_disagreement)


def percent_agreement(counts: np.ndarray, weights=None) -> float | None:
    """Share of agreeing coder pairs, averaged over pairable units (the CogniBench paper's IAA).

    With two coders this is the share of units both gave the same value.
    """
    counts = np.asarray(counts, dtype=np.float64)
    unit_weights = _weights(counts, weights)
    coders = counts.sum(axis=1)
    pairable = (coders >= 2) & (unit_weights > 0)
    if not pairable.any():
        return None
    counts, coders, unit_weights = counts[pairable], coders[pairable], unit_weights[pairable]
    agreeing = (counts * (counts - 1)).sum(axis=1)
    return float(((agreeing / (coders * (coders - 1))) * unit_weights).sum() / unit_weights.sum())


def pairable_units(counts: np.ndarray, weights=None) -> int:
    counts = np.asarray(counts)
    if not len(counts):
        return 0
    return int(round(_weights(counts, weights)[counts.sum(axis=1) >= 2].sum()))


def cohen_kappa(confusion) -> float | None:
    """Cohen's kappa of a square table (rows: coder A's values, columns: coder B's)."""
    table = np.asarray(confusion, dtype=np.float64)
    total = table.sum()
    if total == 0:
        return None
    observed = np.trace(table) / total
    expected = float((table.sum(axis=1) * table.sum(axis=0)).sum() / total**2)
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def confusion_matrix(first: np.ndarray, second: np.ndarray, n_values: int) -> np.ndarray:
    """Table of (value given by A, value given by B) counts; -1 entries (missing) are left out."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    keep = (first >= 0) & (second >= 0)
    flat = np.bincount(first[keep] * n_values + second[keep], minlength=n_values * n_values)
    return flat.reshape(n_values, n_values)


def accuracy(confusion_against_gold) -> float | None:
    """Share of the diagonal of a (annotator label × gold label) table."""
    table = np.asarray(confusion_against_gold)
    total = table.sum()
    return float(np.trace(table) / total) if total else None


# --------------------------------------------------------------------------- protocol steps


@dataclass(frozen=True, eq=False)
class Scheme:
    """What agreement needs of a protocol: its labels, and for each measured step its answers and the 0/1
    matrix (labels × answers) saying which answer each label's path gives (a row of zeros: not asked)."""

    labels: tuple[str, ...]
    steps: tuple[str, ...]
    domains: dict
    matrices: dict
    # step -> 0/1 per label: the label is reached by several paths that do not give one answer there (or do not
    # all reach the step), so its sentences have no answer at the step and are left out of it (and counted).
    unknown: dict = None

    @property
    def label_index(self) -> dict:
        return {label: i for i, label in enumerate(self.labels)}

    @property
    def variables(self) -> tuple[str, ...]:
        return ("label",) + self.steps


_SCHEMES: dict = {}


def scheme_of(protocol) -> Scheme:
    """The agreement scheme of a protocol, built once per protocol reading."""
    read = reading(protocol)
    found = _SCHEMES.get(id(read))
    if found is None or found[0] is not read:
        found = _SCHEMES[id(read)] = (read, _scheme(read, protocol))
    return found[1]


def _scheme(read, protocol) -> Scheme:
    domains, matrices, unknown = {}, {}, {}
    # Only choice steps follow from the label; a multiple, scale or text step is measured from the walks
    # (agreement_kinds, reports.kind_agreement).
    steps = tuple(step for step in read.agreement_steps if step not in protocol.kind_steps())
    for step in steps:
        answers = read.step_answers[step]
        matrix = np.zeros((len(read.labels), len(answers)), dtype=np.int32)
        unknown[step] = np.zeros(len(read.labels), dtype=np.int64)
        for i, label in enumerate(read.labels):
            given = {path.get(step) for path in read.label_paths.get(label, ())}
            if len(given) == 1 and None not in given:
                matrix[i, answers.index(given.pop())] = 1
            elif len(given) > 1:
                unknown[step][i] = 1
        domains[step], matrices[step] = answers, matrix
    return Scheme(labels=read.labels, steps=steps, domains=domains, matrices=matrices,
                  unknown=unknown)


def left_out_of_step(counts: np.ndarray, weights: np.ndarray, step: str, scheme: Scheme) -> int:
    """The units (sentences) a step leaves out because some rater's label is reached by several paths that
    answer the step differently: the label says which way the rater ended, not which answer they gave there."""
    if not len(counts) or scheme.unknown is None:
        return 0
    counts = np.asarray(counts)
    unknown = counts @ scheme.unknown[step]
    known = (counts @ scheme.matrices[step]).sum(axis=1)
    # Only units the step would have compared: two raters or more would have answered it.
    left_out = (unknown > 0) & (known + unknown >= 2)
    return int(round(float(np.asarray(weights)[left_out].sum())))


def step_counts(label_counts: np.ndarray, step: str, scheme: Scheme) -> np.ndarray:
    """Value counts of one protocol step's answers, derived from label value counts."""
    return np.asarray(label_counts) @ scheme.matrices[step]


@dataclass(frozen=True)
class Measures:
    """Agreement of one variable: alpha, percent agreement, and the number of pairable units."""

    alpha: float | None
    percent: float | None
    units: int

    def as_dict(self):
        return {"alpha": self.alpha, "percent": self.percent, "units": self.units}


def measures(counts: np.ndarray, level: str = "nominal", domain: Sequence | None = None, weights=None) -> Measures:
    return Measures(
        alpha(counts, level, domain, weights), percent_agreement(counts, weights), pairable_units(counts, weights)
    )


def label_and_step_measures(label_counts: np.ndarray, scheme: Scheme) -> dict[str, Measures]:
    """Agreement over the final labels ("label") and over each measured protocol step, in protocol order."""
    result = {"label": measures(label_counts)}
    for step in scheme.steps:
        result[step] = measures(step_counts(label_counts, step, scheme))
    return result


# --------------------------------------------------------------------------- from database aggregates


def step_table(label_table: np.ndarray, step: str, scheme: Scheme) -> np.ndarray:
    """A (label × label) pair table turned into the (answer × answer) table of one step."""
    matrix = scheme.matrices[step]
    return matrix.T @ np.asarray(label_table) @ matrix


def pooled_kappa(tables: Iterable[np.ndarray]) -> float | None:
    """Mean of the Cohen's kappas of several annotator pairs, weighted by the units each pair shares."""
    total, weighted = 0, 0.0
    for table in tables:
        kappa = cohen_kappa(table)
        units = int(np.asarray(table).sum())
        if kappa is not None:
            weighted += kappa * units
            total += units
    return weighted / total if total else None


MIN_UNITS = 2  # the fewest pairable units on which an agreement figure is reported


def variable_measures(
    scheme: Scheme, two_coder_tables: dict, multi_counts: np.ndarray | None = None,
    multi_pair_tables: dict | None = None,
) -> dict[str, dict]:
    """Alpha, percent agreement and pairwise kappa over the labels and each protocol step.

    ``two_coder_tables`` maps an annotator pair to its (label × label) table over
    the sentences exactly those two judged; ``multi_counts`` holds the label
    value counts of sentences judged by three or more, and ``multi_pair_tables``
    the pair tables from those sentences (they only feed kappa).
    """
    n_labels = len(scheme.labels)
    pooled = np.zeros((n_labels, n_labels), dtype=np.int64)
    for table in two_coder_tables.values():
        pooled += np.asarray(table, dtype=np.int64)
    # One row per distinct two-coder unit (label a + label b), weighted by how many there are.
    cells = list(zip(*np.nonzero(pooled)))
    counts = np.zeros((len(cells), n_labels), dtype=np.int64)
    weights = np.zeros(len(cells))
    for row, (a, b) in enumerate(cells):
        counts[row, a] += 1
        counts[row, b] += 1
        weights[row] = pooled[a, b]
    if multi_counts is not None and len(multi_counts):
        counts = np.vstack([counts, np.asarray(multi_counts, dtype=np.int64)])
        weights = np.concatenate([weights, np.ones(len(multi_counts))])
    pair_tables = {}
    for source in (two_coder_tables, multi_pair_tables or {}):
        for pair, table in source.items():
            pair_tables[pair] = pair_tables.get(pair, 0) + np.asarray(table, dtype=np.int64)
    result = {}
    for variable in scheme.variables:
        if variable == "label":
            variable_counts, tables = counts, list(pair_tables.values())
        else:
            variable_counts = step_counts(counts, variable, scheme)
            tables = [step_table(t, variable, scheme) for t in pair_tables.values()]
        m = measures(variable_counts, weights=weights)
        kappa = pooled_kappa(tables)
        if m.units < MIN_UNITS:
            # One unit is no measure of agreement: shown as n/a, not as a 0.000 or 1.000 that looks like a finding.
            m, kappa = Measures(None, None, m.units), None
        result[variable] = {**m.as_dict(), "kappa": kappa,
                            "left_out": 0 if variable == "label" else left_out_of_step(counts, weights, variable, scheme)}
    return result
