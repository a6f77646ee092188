"""Serialising a project's gold: the project's JSONL, CogniBench's labels.json and a CSV for spreadsheets.

Each exporter is a generator of text pieces, so the command writes them to a
file and the view streams them to the browser without holding the export in
memory. Every route writes them through ``encoded_pieces``: a stored value that is
not text (a lone surrogate kept before such text was refused) stops the export
loudly, naming its line, where the stream used to end there as if complete.
"""

import json

from annotator.corpus.exports.exporters.cognibench import cognibench_pieces
from annotator.corpus.exports.exporters.csv_gold import gold_csv_pieces
from annotator.corpus.exports.exporters.jsonl import jsonl_lines
from annotator.corpus.imports.importers.cognibench import labels_are_cognibench
from annotator.domain.storable import surrogate_problem, unstorable_path
from annotator.projects.protocols import protocol_for

FORMATS = {"jsonl": jsonl_lines, "cognibench": cognibench_pieces, "csv": gold_csv_pieces}
FILENAMES = {"jsonl": "{slug}-gold.jsonl", "cognibench": "{slug}-labels.json", "csv": "{slug}-gold.csv"}
CONTENT_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "cognibench": "application/json; charset=utf-8",
                 "csv": "text/csv; charset=utf-8"}


def format_refusal(project, fmt: str) -> str | None:
    """Why ``fmt`` cannot hold this project's gold, or None: CogniBench's labels.json spells CogniBench's labels as
    its criteria lists, so a project on another protocol exports JSONL (which carries its protocol)."""
    if fmt == "cognibench":
        protocol = protocol_for(project)
        if not labels_are_cognibench(protocol):
            return (f"CogniBench's labels.json holds CogniBench's labels only, and this project follows "
                    f"{protocol.name!r}: export JSONL, which carries the project's protocol")
    return None


def export_pieces(project, fmt: str, min_severity=None, progress=None, csv_options: dict | None = None):
    """The pieces of an export; ``min_severity`` (1-5, or "project" for the project's threshold) marks
    every hallucinated sentence's gold ``severe`` when rated at least that (HalluDetect's filter, JSONL only).
    ``csv_options`` (the CSV's ``bom``, ``annotators``: csv_gold) apply to the CSV only.

    Raises ValueError with a message for the person who asked for it.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(sorted(FORMATS))}")
    if refusal := format_refusal(project, fmt):
        raise ValueError(refusal)
    if fmt == "csv" and csv_options and min_severity in (None, ""):
        return gold_csv_pieces(project, progress=progress, **csv_options)
    if min_severity in (None, ""):
        return FORMATS[fmt](project, progress=progress)
    if fmt != "jsonl":
        raise ValueError("the severity filter applies to the jsonl format")
    if min_severity == "project":
        min_severity = project.severity_threshold
    elif not str(min_severity).isdigit() or not 1 <= int(min_severity) <= 5:
        raise ValueError(f"the minimum severity must be 1 to 5 or 'project', not {min_severity!r}")
    return FORMATS[fmt](project, progress=progress, min_severity=int(min_severity))


class ExportUnencodable(ValueError):
    """A stored value the export cannot write as UTF-8; the message names its line (and, in JSONL, its turn)."""

    def __init__(self, line: int, text: str):
        where = _record_of(text)
        super().__init__(f"line {line:,} of the export{where} holds a lone surrogate (\\ud800-\\udfff), stored before "
                         "such text was refused, which UTF-8 cannot write: the export stopped there rather than leave "
                         "that record out")


def encoded_pieces(pieces):
    """The export's pieces as UTF-8; ``ExportUnencodable`` at the first that cannot be written."""
    line = 1
    for piece in pieces:
        try:
            data = piece.encode("utf-8")
        except UnicodeEncodeError as error:
            start = piece.rfind("\n", 0, error.start) + 1
            end = piece.find("\n", error.start)
            raise ExportUnencodable(line + piece.count("\n", 0, error.start),
                                    piece[start:end if end >= 0 else len(piece)]) from None
        line += piece.count("\n")
        yield data


def streamed_pieces(pieces):
    """``encoded_pieces`` for a download already under way (its status sent): a refusal ends the file with a line
    saying so, then aborts the response (the server logs it; a client reading chunks sees it cut off)."""
    try:
        yield from encoded_pieces(pieces)
    except ExportUnencodable as refused:
        yield f"\nEXPORT FAILED: {refused}\n".encode()
        raise


def _record_of(line: str) -> str:
    """Where a JSONL line's value is, ``(dialogue 'd1', turn 0: sentences.1.annotations.0.path.justification)``;
    nothing for a line of another format."""
    try:
        record = json.loads(line)
        found = unstorable_path(record, surrogate_problem)
        field = ".".join(str(step) for step in found[0]) if found else "?"
        return f" (dialogue {record['dialogue']['id']!r}, turn {record['turn']['index']}: {field})"
    except (ValueError, TypeError, KeyError):
        return ""
