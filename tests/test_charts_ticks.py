"""Chart axes at round values (issue 17: the reports page read -6.2 %, 20.3 %, 46.9 %)."""

import re

import pytest

from annotator.reports.charts import bar_chart, line_chart, nice_ticks


@pytest.mark.parametrize("low, high, expected", [
    (-0.062, 0.469, [-0.2, 0.0, 0.2, 0.4, 0.6]),
    (-0.062, 1.0, [-0.25, 0.0, 0.25, 0.5, 0.75, 1.0]),
    (0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    (0.0, 37.0, [0, 10, 20, 30, 40]),
    (0.62, 0.97, [0.6, 0.7, 0.8, 0.9, 1.0]),
])
def test_ticks_are_round_and_cover_the_values(low, high, expected):
    assert nice_ticks(low, high) == pytest.approx(expected)


def test_the_charts_label_their_axes_at_round_values():
    bars = str(bar_chart("Agreement", ["Label", "Relevance"], [("alpha", [-0.062, 0.469], "#000")], y_min=None))
    labels = re.findall(r'text-anchor="end">([^<]+)<', bars)
    assert labels == ["-25.0%", "0.0%", "25.0%", "50.0%", "75.0%", "100.0%"]
    lines = str(line_chart("By week", ["W1", "W2"], [("alpha", [0.62, 0.97], "#000")], y_min=None))
    assert re.findall(r'text-anchor="end">([^<]+)<', lines) == ["0.000", "0.200", "0.400", "0.600", "0.800", "1.000"]
