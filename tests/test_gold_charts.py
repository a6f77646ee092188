"""Server-rendered SVG charts escape what they show and draw one mark per value."""

from annotator.reports import charts


def test_bar_chart_escapes_category_names_and_draws_each_value():
    svg = str(charts.bar_chart("Rates <by model>", ["<script>alert(1)</script>", "b"],
                               [("share", [0.5, None], "#000"), ("rate", [0.25, 0.75], "#fff")]))
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "Rates &lt;by model&gt;" in svg
    assert svg.count("<rect") == 3  # the None value leaves a gap


def test_heatmap_shows_every_count():
    svg = str(charts.heatmap("Confusion", ["a", "b"], ["a", "b"], [[5, 1], [0, 7]]))
    assert svg.count("<rect") == 4
    for value in ("5", "1", "0", "7"):
        assert f">{value}</text>" in svg


def test_line_chart_breaks_at_missing_values():
    svg = str(charts.line_chart("Weekly", ["w1", "w2", "w3", "w4"], [("alpha", [0.5, 0.6, None, 0.7], "#000")]))
    assert svg.count("<circle") == 3
    assert svg.count("<polyline") == 1  # w1-w2; w4 stands alone


def test_stacked_bars_give_shares():
    svg = str(charts.stacked_bars("Labels", [("All", [("x", 3, "#000"), ("y", 1, "#111")])]))
    assert "x: 3 (75.0%)" in svg and "y: 1 (25.0%)" in svg
