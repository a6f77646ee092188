"""Agreement of a step by its kind against the reference packages (no database): a scale's ordinal and interval α
equal ``krippendorff.alpha``, a multiple step's MASI α equals NLTK's ``AnnotationTask(distance=masi_distance)``."""

import math

import krippendorff
import numpy as np
import pytest
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import masi_distance

from annotator.domain import agreement_kinds as kinds
from annotator.domain.protocol.document import load_shipped

ANSWERS = ("fabricated", "misattributed", "citation", "outdated", "holding")


def units_from_reliability_data(data):
    """Krippendorff's coders × units table (nan: missing) as one list of values per unit."""
    return [[int(coder[u]) for coder in data if not math.isnan(coder[u])] for u in range(len(data[0]))]


def triples(units):
    """The units as NLTK's (coder, item, label) triples, sets as frozensets (MASI needs sets)."""
    return [(f"c{c}", f"u{u:04d}", frozenset(value)) for u, values in enumerate(units) for c, value in enumerate(values)]


def random_sets(rng, n_units, coders, gaps=0.0, answers=ANSWERS, max_size=3):
    units = []
    for _ in range(n_units):
        values = []
        for _ in range(coders):
            if rng.random() < gaps:
                continue
            size = int(rng.integers(1, max_size + 1))
            values.append(sorted(rng.choice(answers, size=size, replace=False).tolist()))
        units.append(values)
    return units


# --------------------------------------------------------------------------- scale: krippendorff


@pytest.mark.parametrize("level", kinds.SCALE_LEVELS)
@pytest.mark.parametrize("seed, coders, gaps, lowest, highest", [
    (1, 2, 0.0, 1, 5), (2, 3, 0.2, 1, 5), (3, 4, 0.3, 0, 8), (4, 2, 0.1, -2, 2), (5, 5, 0.4, 1, 9),
])
def test_scale_alpha_equals_the_krippendorff_package_on_random_data(level, seed, coders, gaps, lowest, highest):
    rng = np.random.default_rng(seed)
    data = rng.integers(lowest, highest + 1, size=(coders, 150)).astype(float)
    # Correlated coders, so α is far from 0 and a wrong distance shows.
    data[1:] = np.where(rng.random(data[1:].shape) < 0.6, data[0], data[1:])
    data[rng.random(data.shape) < gaps] = np.nan
    ours = kinds.scale_agreement(units_from_reliability_data(data.tolist()), lowest, highest, level)
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level,
                                value_domain=list(range(lowest, highest + 1)))
    assert ours.alpha == pytest.approx(theirs, abs=1e-12)
    assert ours.metric == f"{level} α" and ours.kind == "scale"


def test_scale_ordinal_and_interval_differ_and_follow_the_published_example():
    # Krippendorff (2011), section E: 4 observers × 12 units, 1-5 with gaps: ordinal 0.815, interval 0.849.
    nan = math.nan
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    units = units_from_reliability_data(data)
    assert round(kinds.scale_agreement(units, 1, 5).alpha, 3) == 0.815
    assert round(kinds.scale_agreement(units, 1, 5, "interval").alpha, 3) == 0.849
    # Unit 12 has one value: not pairable; the other eleven are.
    assert kinds.scale_agreement(units, 1, 5).units == 11


def test_scale_counts_exact_agreement_and_refuses_an_unknown_level():
    result = kinds.scale_agreement([[1, 1], [2, 3], [5, 5], [4]], 1, 5)
    assert result.percent == pytest.approx(2 / 3)
    assert (result.units, result.answered) == (3, 4)
    with pytest.raises(ValueError):
        kinds.scale_agreement([[1, 2]], 1, 5, "ratio")


def test_scale_alpha_is_undefined_without_variation_or_pairs():
    assert kinds.scale_agreement([[3, 3], [3, 3]], 1, 5).alpha is None
    assert kinds.scale_agreement([[3], [4]], 1, 5).alpha is None
    assert kinds.scale_agreement([], 1, 5).alpha is None


# --------------------------------------------------------------------------- multiple: NLTK's MASI


def test_masi_alpha_equals_nltk_on_a_hand_made_dataset():
    units = [
        [["fabricated"], ["fabricated"]],
        [["fabricated", "citation"], ["citation"]],
        [["outdated"], ["holding"]],
        [["misattributed", "citation"], ["misattributed", "citation"]],
        [["holding", "outdated"], ["outdated", "fabricated"]],
        [["citation"], ["citation", "holding", "fabricated"]],
    ]
    expected = AnnotationTask(data=triples(units), distance=masi_distance).alpha()
    result = kinds.multiple_agreement(units, ANSWERS)
    assert result.alpha == pytest.approx(expected, abs=1e-12)
    assert result.metric == "MASI α" and result.kind == "multiple"
    assert result.percent == pytest.approx(2 / 6)  # two units give equal sets


@pytest.mark.parametrize("seed, n_units, coders, gaps", [
    (11, 60, 2, 0.0), (12, 120, 3, 0.0), (13, 200, 3, 0.25), (14, 80, 5, 0.4), (15, 300, 2, 0.1),
])
def test_masi_alpha_equals_nltk_on_random_datasets(seed, n_units, coders, gaps):
    rng = np.random.default_rng(seed)
    units = random_sets(rng, n_units, coders, gaps)
    # Some agreement, so α is not near 0: the second coder copies the first on half the units.
    for values in units:
        if len(values) >= 2 and rng.random() < 0.5:
            values[1] = values[0]
    expected = AnnotationTask(data=[t for t in triples(units)], distance=masi_distance).alpha()
    assert kinds.multiple_agreement(units, ANSWERS).alpha == pytest.approx(expected, abs=1e-12)


def test_masi_alpha_ignores_the_order_of_the_chosen_answers():
    forward = [[["fabricated", "citation"], ["citation"]], [["outdated"], ["outdated", "holding"]], [["holding"], ["fabricated"]]]
    backward = [[list(reversed(v)) for v in values] for values in forward]
    assert kinds.multiple_agreement(forward, ANSWERS).alpha == kinds.multiple_agreement(backward, ANSWERS).alpha


def test_per_answer_alpha_is_the_binary_alpha_of_each_answer():
    units = [[["fabricated"], ["fabricated", "citation"]], [["citation"], ["citation"]],
             [["outdated", "fabricated"], ["fabricated"]], [["holding"], ["outdated"]], [["citation"], ["fabricated"]]]
    result = kinds.multiple_agreement(units, ANSWERS)
    per_answer = dict(result.per_answer)
    assert list(per_answer) == list(ANSWERS)
    for answer in ANSWERS:
        data = [[float(answer in values[c]) for values in units] for c in range(2)]
        if len({v for row in data for v in row}) < 2:
            assert per_answer[answer] is None  # nobody chose it (or everybody did): no variation
            continue
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert per_answer[answer] == pytest.approx(expected, abs=1e-12)
    assert per_answer["misattributed"] is None


def test_multiple_with_no_answers_at_all_is_undefined_not_an_error():
    result = kinds.multiple_agreement([[], []], ANSWERS)
    assert (result.alpha, result.units, result.answered) == (None, 0, 0)


# --------------------------------------------------------------------------- text and choice


def test_text_is_counted_not_scored():
    result = kinds.text_agreement([["the holding is misread", "wrong court"], ["x"], []])
    assert (result.alpha, result.percent, result.units, result.answered) == (None, None, 1, 2)
    assert result.metric == "counted only"


def test_choice_is_the_nominal_alpha_of_today():
    # Krippendorff (2011), section C: two observers, nominal: 0.692.
    ben = list("aabbdcccedda")
    gerry = list("babbbcccedd") + ["d"]
    result = kinds.choice_agreement([[b, g] for b, g in zip(ben, gerry)], "abcde")
    assert round(result.alpha, 3) == 0.692 and result.metric == "nominal α"


# --------------------------------------------------------------------------- the registry


HALLU = load_shipped("halludetect")


def test_the_registry_measures_every_kind_of_the_halludetect_protocol_and_names_its_metric():
    assert set(kinds.MEASURES) == set(kinds.KINDS)
    severity = HALLU.step("severity")
    scale = kinds.step_agreement(severity, [[1, 2], [5, 5], [3, 4]])
    assert scale.metric == "ordinal α" and scale.alpha is not None
    assert scale.alpha == pytest.approx(krippendorff.alpha(reliability_data=[[1, 5, 3], [2, 5, 4]],
                                                           level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]))
    assert kinds.step_agreement(severity, [[1, 2], [5, 5]], level="interval").metric == "interval α"
    units = [[["wrong_citation"], ["wrong_citation", "misread_holding"]], [["outdated_law"], ["fabricated"]]]
    multiple = kinds.step_agreement(HALLU.step("error_types"), units)
    assert multiple.metric == "MASI α" and [a for a, _ in multiple.per_answer] == list(HALLU.step("error_types").values)
    assert multiple.alpha == pytest.approx(AnnotationTask(data=triples(units), distance=masi_distance).alpha())
    assert kinds.step_agreement(HALLU.step("justification"), [["a", "b"]]).metric == "counted only"
    assert kinds.step_agreement(HALLU.step("supported"), [["yes", "no"], ["no", "no"]]).metric == "nominal α"
    assert kinds.metric_of("multiple") == "MASI α + per-answer α"
    assert kinds.metric_of("scale", "interval") == "interval α"


def test_path_units_take_the_step_from_each_annotators_path():
    paths = [[{"supported": "no", "severity": 4}, {"supported": "no", "severity": 5}],
             [{"supported": "yes"}, {"supported": "no", "severity": 2}]]
    assert kinds.path_units(paths, "severity") == [[4, 5], [2]]


def test_values_of_another_kind_or_another_version_are_left_out_not_an_error():
    # A list, a text or a bool where a scale's point is expected (a walk of another version): not a rating.
    result = kinds.scale_agreement([[1, 2], [[1], "x", True, 3], [4, 5], [7, 2]], 1, 5)
    assert (result.units, result.answered) == (2, 4)
    assert result.alpha == kinds.scale_agreement([[1, 2], [3], [4, 5], [2]], 1, 5).alpha
    multiple = kinds.multiple_agreement([[["fabricated"], "fabricated", 3], [["holding"], ["holding"]]], ANSWERS)
    assert multiple.units == 1
