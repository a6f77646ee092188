"""Reading a JSON document one record at a time, and refusing values no database stores.

CogniBench's ``dialogues.json`` and RefChecker's files are single JSON documents (a list of
records); ``labels.json`` is one object. Read whole, a 105 MB ``dialogues.json`` took 570 MB of
memory (the text, then every record as Python objects at once). ``records_of`` hands out one
top-level element at a time instead, decoded by the standard library's own parser from a sliding
window of the file, so memory is one chunk plus one record, whatever the size of the file.

Why not ijson: its C backend turned a lone surrogate (``"\\ud800 x"``) into ``"?x"`` without a
word, and 20,000 nested ``[`` took 969 MB of memory (50,000: ``MemoryError``) — hostile uploads
are exactly what an importer must survive. The standard parser refuses or keeps such values as
the rest of the application expects, and raises ``RecursionError`` on deep nesting, which is
named here.
"""

from __future__ import annotations

import codecs
import json
import math
from pathlib import Path

from annotator.corpus.imports.importers import ImportFormatError

# One record (a top-level element) longer than this is refused before it is decoded whole.
MAX_RECORD_CHARS = 16_000_000
# Deeper than this a record is refused: real records nest 6 or 7 levels; deeper ones end in
# RecursionError in the parser, in the checks or when the row is written.
MAX_DEPTH = 64
CHUNK_CHARS = 1 << 20
_WHITESPACE = " \t\n\r"


_DECODER = json.JSONDecoder()


class _Window:
    """The file's text, decoded as it is read; ``text[pos:]`` is what is left to parse."""

    def __init__(self, handle, filename: str, progress=None, offset: int = 0, total: int = 0):
        self.handle, self.filename = handle, filename
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.text, self.pos, self.eof = "", 0, False
        self.progress, self.offset, self.total = progress, offset, total

    def more(self, at_least: int = CHUNK_CHARS) -> None:
        raw = self.handle.read(max(at_least, CHUNK_CHARS))
        try:
            chunk = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            at = self.handle.tell() - len(raw) + exc.start
            raise ImportFormatError(self.filename, "(file)", "(file)",
                                    f"not valid JSON: not UTF-8 text ({exc.reason} at byte {at})") from None
        self.eof = not raw
        self.text = self.text[self.pos:] + chunk
        self.pos = 0
        if self.progress is not None and self.total:
            self.progress(self.offset + self.handle.tell(), self.total)

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end of the file)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos] if self.pos < len(self.text) else ""
            self.more()

    def value(self, record: str):
        """Decode the JSON value that starts here; ``record`` names it in errors."""
        while True:
            pending = len(self.text) - self.pos
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                # Cut by the end of the window (the parser ran out of text), or wrong where it stopped?
                cut = exc.pos >= len(self.text) - 6 or exc.msg.startswith("Unterminated string")
                if self.eof or not cut:
                    raise ImportFormatError(self.filename, record, "(record)",
                                            f"not valid JSON: {exc.msg} (character {exc.pos - self.pos} of the record)"
                                            ) from None
                if pending > MAX_RECORD_CHARS:
                    raise self.too_long(record) from None
                self.more(pending)  # double the window: a long record is re-read a few times, not once per chunk
                continue
            except RecursionError:
                raise ImportFormatError(self.filename, record, "(record)",
                                        f"nested too deeply (at most {MAX_DEPTH} levels)") from None
            if end == len(self.text) and not self.eof:
                self.more(pending)  # a number may go on in the next chunk
                continue
            if end - self.pos > MAX_RECORD_CHARS:
                raise self.too_long(record)
            raw = self.text[self.pos:end]
            self.pos = end
            return value, raw

    def too_long(self, record: str) -> ImportFormatError:
        return ImportFormatError(self.filename, record, "(record)",
                                 f"longer than {MAX_RECORD_CHARS:,} characters; one record is expected to be far smaller")


def records_of(path: Path, container: type, *, progress=None, offset: int = 0, total: int = 0,
               filename: str | None = None):
    """Yield ``(index, element, raw)`` of a JSON list, or ``(key, value, raw)`` of a JSON object, one at a time.

    ``container`` (list or dict) is what the file's top level must be; ``raw`` is the element's
    text (for cheap checks before a walk); ``filename`` names the file in errors (default: its
    name). ``progress(done_bytes, total_bytes)`` is called as the file is read.
    """
    path = Path(path)
    filename = filename or path.name
    opening, closing = ("[", "]") if container is list else ("{", "}")
    with open(path, "rb") as handle:
        window = _Window(handle, filename, progress, offset, total or path.stat().st_size)
        first = window.peek()
        if first != opening:
            if first in '[{"-0123456789tfn':
                problem = f"must be a JSON {container.__name__}"
                raise ImportFormatError(filename, "(file)", "(top level)", problem)
            found = repr(first) if first else "an empty file"
            raise ImportFormatError(filename, "(file)", "(file)", f"not valid JSON: starts with {found}")
        window.pos += 1
        index = 0
        while True:
            char = window.peek()
            if char == closing:
                window.pos += 1
                break
            if index:
                if char != ",":
                    raise ImportFormatError(filename, f"#{index}", "(record)",
                                            f"not valid JSON: expected ',' or {closing!r}, found {char or 'the end'!r}")
                window.pos += 1
                window.peek()
            if container is list:
                value, raw = window.value(f"#{index}")
                yield index, value, raw
            else:
                key, _ = window.value(f"#{index}")
                if not isinstance(key, str):
                    raise ImportFormatError(filename, f"#{index}", "(key)", "not valid JSON: a key must be a string")
                if window.peek() != ":":
                    raise ImportFormatError(filename, f"id {key}", "(record)", "not valid JSON: expected ':'")
                window.pos += 1
                window.peek()
                value, raw = window.value(f"id {key}")
                yield key, value, raw
            index += 1
        if window.peek():
            raise ImportFormatError(filename, "(file)", "(file)", "not valid JSON: extra data after the top level")


def refuse_deep(value, filename: str, record, raw: str | bytes | None = None) -> None:
    """Raise ImportFormatError if ``value`` nests deeper than MAX_DEPTH (walked without recursion).

    ``raw``, the text ``value`` was parsed from, skips the walk when it cannot nest that deep.
    """
    if raw is not None:
        opening = (b"[", b"{") if isinstance(raw, bytes) else ("[", "{")
        if raw.count(opening[0]) + raw.count(opening[1]) <= MAX_DEPTH:
            return
    stack = [(value, 0, ())]
    while stack:
        item, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            field_name = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path[:3]).lstrip(".")
            raise ImportFormatError(filename, record, (field_name + "...") if field_name else "(record)",
                                    f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((child, depth + 1, path + (key,)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, depth + 1, path + (position,)) for position, child in enumerate(item))


def refuse_not_a_number(value, filename: str, record, raw: str) -> None:
    """Raise ImportFormatError naming the field that holds NaN or (-)Infinity.

    They are not JSON, yet Python's parser accepts them; PostgreSQL's jsonb refuses them, and an id
    of NaN became the text "nan". The walk runs only when ``raw`` spells one of them.
    """
    if "NaN" not in raw and "Infinity" not in raw:
        return
    stack = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            field_name = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")
            raise ImportFormatError(filename, record, field_name or "(value)",
                                    f"is {raw_constant(item)}, which is not a JSON number")
        if isinstance(item, dict):
            stack.extend((child, path + (key,)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, path + (position,)) for position, child in enumerate(item))


def raw_constant(number: float) -> str:
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
