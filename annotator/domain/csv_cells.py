"""CSV cells a spreadsheet reads as data, never as a formula: the one guard of every CSV download (the reports,
the faithfulness report, the gold export), pure (standard library only)."""

import csv
import re

# What a spreadsheet may read as the start of a formula, and the separators it may split a CSV line on
# (a comma, or a semicolon, tab or bar depending on the locale and the import dialog): a trigger right after
# any of them starts a cell of its own when the line is split there. A spreadsheet skips the line breaks,
# spaces and control characters a cell starts with (issue 38, item 10: "\n=1+1" ran as a formula), so the
# trigger is the first character after them; a tab or carriage return is a trigger of its own.
FORMULA_STARTS = "=+-@"
SPREADSHEET_SEPARATORS = ",;\t|"
_FORMULA_AFTER_SEPARATOR = re.compile(
    rf"(?:^|[{re.escape(SPREADSHEET_SEPARATORS)}])"
    rf"(?:[\s\x00-\x1f\x7f]*[{re.escape(FORMULA_STARTS)}]|[ ]*[\t\r])"
)


def csv_cell(value):
    """A CSV cell: text that a spreadsheet could run as a formula, at its start or after any separator a
    spreadsheet may split on, gets a leading apostrophe; `csv_writer` quotes every text cell, so the cell
    stays one cell whatever the separator (names and notes come from imported data). A list is one cell of
    its items joined by "|"."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        # A multiple step's answers (a path value that is a list) are one cell: its answers joined by "|" in the
        # step's order (answer values are identifiers, so none holds a "|"); guarded below like any text.
        value = "|".join("" if item is None else str(item) for item in value)
    if isinstance(value, str) and _FORMULA_AFTER_SEPARATOR.search(value):
        return "'" + value
    return value


class _GuardedWriter:
    def __init__(self, stream):
        self._writer = csv.writer(stream, quoting=csv.QUOTE_NONNUMERIC)

    def writerow(self, row):
        return self._writer.writerow([csv_cell(value) for value in row])


def csv_writer(stream):
    """The one way to write CSV for a download: every cell through `csv_cell`, every text cell quoted (a
    spreadsheet splitting on `;` or `|` keeps a quoted cell whole), numbers left bare."""
    return _GuardedWriter(stream)
