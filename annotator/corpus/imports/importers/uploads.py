"""What an uploaded import file must be before it is stored: the kind an import reads, and not too large.

Every upload route (the project page's form, the admin's ImportBatch form, the API's
``POST imports/``) checks its files here, so that a file no import can read — an HTML or SVG
page, a binary, a 2 GB file — is refused at once with a message, and never stored.
The check is by extension *and* by content: the first bytes must be UTF-8 text that starts as
the format does (``[`` for a JSON list, ``{`` for labels.json and for a JSON Lines record).
"""

from __future__ import annotations

import codecs
from pathlib import Path

from django.conf import settings

# Kind -> (extension of the main file, what its text starts with, described).
MAIN_FILE = {
    "cognibench": (".json", "[", "a JSON list of records (CogniBench dialogues.json)"),
    "refchecker": (".json", "[", "a JSON list of records (RefChecker *_answers.json)"),
    "jsonl": (".jsonl", "{", "JSON Lines, one object per line (the project's .jsonl format)"),
}
# The format to choose for a file of each extension, said when the chosen one reads another.
FORMAT_FOR_EXTENSION = {".json": 'CogniBench ("cognibench", a dialogues.json) or RefChecker ("refchecker", an '
                                 '*_answers.json)',
                        ".jsonl": 'Project JSONL ("jsonl")'}
# CogniBench's optional labels.json.
SECOND_FILE = (".json", "{", "a JSON object of labels by record id (CogniBench labels.json)")
HEAD_BYTES = 64 * 1024


class UploadRefused(ValueError):
    """An upload that no import can read; ``field`` is the form field it came in."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def upload_limit_text(limit: int | None = None) -> str:
    limit = settings.IMPORT_MAX_UPLOAD_BYTES if limit is None else limit
    return f"{limit / 1_000_000:g} MB"


def uploads_problems(kind: str, upload, second_upload=None) -> dict[str, str]:
    """Field -> message for each file that is not what a ``kind`` import reads (empty: all is well)."""
    if kind not in MAIN_FILE:
        return {"kind": f"Unknown import kind {kind!r}."}
    problems = {}
    for field, file, expected in (("upload", upload, MAIN_FILE[kind]), ("second_upload", second_upload, SECOND_FILE)):
        if field == "upload" and not file:
            problems[field] = "Choose the file to import."
        elif field == "second_upload" and file and kind != "cognibench":
            problems[field] = "Only a CogniBench import takes a second file (labels.json)."
        elif file:
            try:
                file_check(file, field, *expected)
            except UploadRefused as exc:
                problems[field] = str(exc)
    return problems


def file_check(upload, field: str, extension: str, first_char: str, described: str) -> None:
    """One file: size, extension, then its first bytes (read, then the file is rewound)."""
    name = Path(upload.name or "").name
    limit = settings.IMPORT_MAX_UPLOAD_BYTES
    if upload.size is not None and upload.size > limit:
        raise UploadRefused(field, f"{name} is {upload.size / 1_000_000:.1f} MB; an import file may be at most "
                                   f"{upload_limit_text(limit)} (IMPORT_MAX_UPLOAD_BYTES).")
    suffix = Path(name).suffix.lower()
    if suffix != extension:
        fitting = FORMAT_FOR_EXTENSION.get(suffix) if field == "upload" else None
        raise UploadRefused(field, f"{name}: the format chosen reads {described}, in a {extension} file. "
                                   + (f"For a {suffix} file choose the format {fitting}." if fitting else
                                      f"Only {extension} files are accepted."))
    upload.seek(0)
    head = upload.read(HEAD_BYTES)
    upload.seek(0)
    try:
        text = codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=len(head) < HEAD_BYTES)
    except UnicodeDecodeError:
        raise UploadRefused(field, f"{name} is not UTF-8 text; this import reads {described}.") from None
    start = text.lstrip()[:1]
    if not start:
        raise UploadRefused(field, f"{name} is empty." if len(head) < HEAD_BYTES else
                            f"{name} starts with {HEAD_BYTES // 1024} KB of blank space; this import reads {described}.")
    if start != first_char:
        raise UploadRefused(field, f"{name} does not start as {described} does (with {first_char!r}); "
                                   f"it starts with {start!r}.")
