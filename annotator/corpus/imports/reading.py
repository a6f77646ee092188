"""Reading import files: their records, parsed as they are consumed, and their fingerprint.

The formats themselves are parsed in ``annotator.corpus.imports.importers``; this picks the
parser of an import kind and checks how many files it takes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from annotator.corpus.imports.importers import ImportSummary
from annotator.models import ImportBatch
from annotator.corpus.imports.records import Progress


def parse_files(kind: str, paths: list[Path], summary: ImportSummary, progress: Progress | None = None,
                names: list[str] | None = None, protocol=None, default_language: str = ""):
    """The records of the files, as an iterator (parsing happens as it is consumed).

    ``names`` are the files' original names: an upload is stored under an unguessable one, and
    messages, RefChecker's dialogue ids and its dataset and model come from the name.
    ``default_language`` (the project's) is the language of records that name none.
    """
    names = names if names and len(names) == len(paths) else [p.name for p in paths]
    if kind == ImportBatch.Kind.COGNIBENCH:
        from annotator.corpus.imports.importers import cognibench

        if not 1 <= len(paths) <= 2:
            raise ValueError("a CogniBench import takes DIALOGUES.json and optionally LABELS.json")
        return cognibench.parse(paths[0], paths[1] if len(paths) > 1 else None, summary, progress, names=names,
                               default_language=default_language, protocol=protocol)
    if kind == ImportBatch.Kind.REFCHECKER:
        from annotator.corpus.imports.importers import refchecker

        return refchecker.parse(paths, summary, progress, names=names, default_language=default_language)
    if kind == ImportBatch.Kind.JSONL:
        from annotator.corpus.imports.importers import jsonl

        if len(paths) != 1:
            raise ValueError("a JSONL import takes one file")
        return jsonl.parse(paths[0], summary, progress, name=names[0], protocol=protocol,
                           default_language=default_language)
    raise ValueError(f"unknown import kind {kind!r}")


def file_sha256(paths: list[Path | str]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()
