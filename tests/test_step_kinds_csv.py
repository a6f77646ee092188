"""CSV downloads and step kinds (issue 42): a multiple step's value (a list) is one cell, its answers joined by
"|", guarded against formulas like any text cell; a scale's point stays a bare number."""

import csv
import io

from annotator.views.common import csv_writer


def _row(*cells):
    out = io.StringIO()
    csv_writer(out).writerow(list(cells))
    return out.getvalue(), next(csv.reader(io.StringIO(out.getvalue())))


def test_a_list_is_one_cell_of_its_answers_joined_by_a_bar():
    raw, row = _row("d-1", ["fabricated", "wrong_citation"], 4, "The cited case does not exist.")
    assert row == ["d-1", "fabricated|wrong_citation", "4", "The cited case does not exist."]
    assert ',4,' in raw  # the scale's point is a number, not quoted text
    assert _row([])[1] == [""]
    assert _row(("one",))[1] == ["one"]


def test_a_joined_list_is_guarded_like_any_text_cell():
    """An item starting a formula, first or after the bar (a separator a spreadsheet may split on), is kept as
    text."""
    assert _row(["=cmd", "b"])[1] == ["'=cmd|b"]
    assert _row(["a", "@SUM(1)"])[1] == ["'a|@SUM(1)"]
    raw, _ = _row(["a", "+1"])
    for row in csv.reader(io.StringIO(raw), delimiter="|"):
        assert all(not cell.lstrip(" ")[:1] in "=+-@" or not cell for cell in row), raw
