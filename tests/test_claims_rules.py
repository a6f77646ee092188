"""Pure rules of the finer views: RefChecker verdicts, HalluDetect figures, Face4RAG types, evidence overlap."""

import pytest

from annotator.domain import claims, evidence
from annotator.domain.vocabulary import DEFAULT_ERROR_TYPES, Label, TripletLabel
from annotator.domain.protocol.groups import reading
from annotator.domain.protocol.document import default_protocol

COGNIBENCH = reading(default_protocol())

E, N, C, B = (TripletLabel.ENTAILMENT.value, TripletLabel.NEUTRAL.value,
              TripletLabel.CONTRADICTION.value, TripletLabel.BAD_TRIPLET.value)


@pytest.mark.parametrize("labels, verdict", [
    ([E, E, E], E),
    ([E, N, E], N),
    ([E, N, C], C),
    ([C], C),
    ([B, E], E),
    ([B, B], None),
    ([], None),
])
def test_strict_rule_contradiction_wins_then_neutral(labels, verdict):
    assert claims.response_verdict(labels) == verdict


def test_tally_per_group_shares_and_strict_verdicts():
    rows = [
        ("model-a", 1, E), ("model-a", 1, E), ("model-a", 1, C),  # contradictory response
        ("model-a", 2, E), ("model-a", 2, B),                     # entailed, one bad triplet
        ("model-b", 3, N), ("model-b", 3, E),                     # neutral
        ("model-b", 4, B),                                        # only a bad triplet: no verdict
        ("model-b", 5, ""),                                       # unlabelled triplet: ignored
    ]
    tallies = claims.tally_triplets(rows)
    a, b = tallies["model-a"], tallies["model-b"]
    assert (a.responses, a.triplets, a.bad) == (2, 4, 1)
    assert a.share(E) == 0.75 and a.share(C) == 0.25 and a.share(N) == 0
    assert a.contradictory_share == 0.5 and a.verdict_share(E) == 0.5
    assert (b.responses, b.triplets, b.bad) == (1, 2, 1)
    assert b.verdict_share(N) == 1.0 and b.contradictory_share == 0.0
    assert [r["label"] for r in a.rows()] == [E, N, C]
    assert list(tallies) == ["model-a", "model-b"]


def test_parse_triplet_label_accepts_values_and_names():
    assert claims.parse_triplet_label("entailment") == TripletLabel.ENTAILMENT
    assert claims.parse_triplet_label(" Bad triplet ") == TripletLabel.BAD_TRIPLET
    assert claims.parse_triplet_label("bad") == TripletLabel.BAD_TRIPLET
    with pytest.raises(claims.ClaimsRuleError):
        claims.parse_triplet_label("supported")


def test_clean_triplet_trims_and_requires_every_part():
    assert claims.clean_triplet("  Amazon ", "flows\nthrough", "Brazil") == ("Amazon", "flows through", "Brazil")
    with pytest.raises(claims.ClaimsRuleError, match="relation"):
        claims.clean_triplet("Amazon", "  ", "Brazil")


def test_severity_only_for_hallucinated_labels_and_in_range():
    assert claims.check_severity(COGNIBENCH, Label.INVENTED, "4", " made up ") == (4, "made up")
    assert claims.check_severity(COGNIBENCH, Label.SPECULATIVE, 1) == (1, "")
    assert claims.check_severity(COGNIBENCH, Label.FAITHFUL, None) == (None, "")
    with pytest.raises(claims.ClaimsRuleError, match="Only invented"):
        claims.check_severity(COGNIBENCH, Label.FAITHFUL, 3)
    for bad in (0, 6, "x"):
        with pytest.raises(claims.ClaimsRuleError, match="1 to 5"):
            claims.check_severity(COGNIBENCH, Label.INVENTED, bad)


def test_severity_threshold_keeps_rated_hallucinations_at_or_above_it():
    assert claims.counts_as_hallucination(COGNIBENCH, Label.INVENTED, None)
    assert not claims.counts_as_hallucination(COGNIBENCH, Label.RELIABLE, 5)
    assert claims.counts_as_hallucination(COGNIBENCH, Label.MISLEADING, 4, threshold=4)
    assert not claims.counts_as_hallucination(COGNIBENCH, Label.MISLEADING, 3, threshold=4)
    assert not claims.counts_as_hallucination(COGNIBENCH, Label.MISLEADING, None, threshold=4)
    assert claims.effective_severity(COGNIBENCH, Label.FAITHFUL, 5) is None  # stale severity after a relabel


def test_hpt_and_token_accuracy_per_group_with_and_without_threshold():
    rows = [
        # group, turn, label, severity, words
        ("m1", 1, Label.FAITHFUL, None, 6),
        ("m1", 1, Label.INVENTED, 5, 4),
        ("m1", 2, Label.SPECULATIVE, 2, 5),
        ("m1", 2, Label.RELIABLE, 3, 5),   # severity on a non-hallucination is ignored
        ("m2", 3, Label.MISLEADING, None, 10),
    ]
    all_ = claims.tally_hallucinations(COGNIBENCH, rows)
    m1 = all_["m1"]
    assert (m1.turns, m1.sentences, m1.hallucinations, m1.words) == (2, 4, 2, 20)
    assert m1.per_turn == 1.0
    assert m1.token_accuracy == pytest.approx(11 / 20)
    assert m1.severity_counts == {5: 1, 2: 1} and m1.unrated == 0
    assert m1.mean_severity == 3.5
    assert all_["m2"].token_accuracy == 0.0 and all_["m2"].unrated == 1

    kept = claims.tally_hallucinations(COGNIBENCH, rows, threshold=4)
    assert kept["m1"].hallucinations == 1 and kept["m1"].per_turn == 0.5
    assert kept["m1"].token_accuracy == pytest.approx(16 / 20)
    assert kept["m2"].hallucinations == 0 and kept["m2"].token_accuracy == 1.0


def test_error_type_checked_against_project_list_and_label():
    allowed = list(DEFAULT_ERROR_TYPES)
    assert claims.check_error_type(COGNIBENCH, Label.INVENTED, " conflation ", allowed) == "conflation"
    assert claims.check_error_type(COGNIBENCH, Label.FAITHFUL, "", allowed) == ""
    with pytest.raises(claims.ClaimsRuleError, match="not one of"):
        claims.check_error_type(COGNIBENCH, Label.INVENTED, "typo", allowed)
    with pytest.raises(claims.ClaimsRuleError, match="Only invented or misleading"):
        claims.check_error_type(COGNIBENCH, Label.SPECULATIVE, "conflation", allowed)


def test_error_type_distribution_counts_untyped_and_retired_types():
    rows = [
        ("m1", Label.INVENTED, "conflation"),
        ("m1", Label.MISLEADING, "conflation"),
        ("m1", Label.INVENTED, "causal confusion"),
        ("m1", Label.INVENTED, ""),
        ("m1", Label.FAITHFUL, "conflation"),  # not eligible
        ("m2", Label.MISLEADING, "old type"),
    ]
    dist = claims.error_type_distribution(COGNIBENCH, rows, ["conflation", "causal confusion"])
    m1 = dist["m1"]
    assert (m1["eligible"], m1["typed"], m1["untyped"]) == (4, 3, 1)
    assert m1["rows"][0] == {"error_type": "conflation", "count": 2, "share": pytest.approx(2 / 3)}
    assert [r["error_type"] for r in dist["m2"]["rows"]] == ["conflation", "causal confusion", "old type"]
    assert dist["m2"]["rows"][2]["share"] == 1.0


# --------------------------------------------------------------------------- evidence overlap


def test_normalise_merges_overlapping_and_adjacent_spans():
    assert evidence.normalise([(10, 20), (0, 5), (5, 8), (15, 25), (30, 30)]) == [(0, 8), (10, 25)]
    assert evidence.covered([(0, 10), (5, 15)]) == 15


def test_identical_evidence_agrees_fully_however_it_was_cut():
    result = evidence.overlap([(0, 10), (10, 20)], [(0, 20)])
    assert result.jaccard == 1.0 and result.f1 == 1.0


def test_partial_overlap_jaccard_and_f1():
    # A = [0, 10), B = [5, 20): both 5, union 20.
    result = evidence.overlap([(0, 10)], [(5, 20)])
    assert (result.first, result.second, result.both) == (10, 15, 5)
    assert result.jaccard == 0.25
    assert result.f1 == pytest.approx(2 * 5 / 25)
    assert result.recall == 0.5 and result.precision == pytest.approx(5 / 15)


def test_intersection_over_many_spans():
    a = [(0, 4), (10, 14), (20, 24)]
    b = [(2, 12), (22, 30)]
    # overlaps: [2,4)=2, [10,12)=2, [22,24)=2
    assert evidence.intersection(a, b) == 6
    assert evidence.intersection(b, a) == 6


def test_no_evidence_is_undefined_one_sided_is_zero():
    assert evidence.overlap([], []).jaccard is None
    one_sided = evidence.overlap([(0, 5)], [])
    assert one_sided.jaccard == 0.0 and one_sided.f1 == 0.0


def test_summary_means_and_pooled():
    summary = evidence.summarise([
        ([(0, 10)], [(0, 10)]),     # 1.0
        ([(0, 10)], [(5, 20)]),     # 0.25
        ([(0, 4)], []),             # 0.0, one-sided
        ([], []),                   # not a unit
    ])
    assert summary.units == 3 and summary.both_gave == 2
    assert summary.mean_jaccard == pytest.approx(1.25 / 3)
    # pooled: first 24, second 25, both 15 -> union 34
    assert summary.pooled_jaccard == pytest.approx(15 / 34)
    assert summary.pooled_f1 == pytest.approx(30 / 49)
    empty = evidence.summarise([])
    assert empty.units == 0 and empty.mean_jaccard is None and empty.pooled_f1 is None
