"""Reading a protocol document (or its label mapping), from text or as data, within one set of limits.

Every route that takes a protocol document reads it here: the protocol page (text area, upload, preview), the
API's ``PUT .../protocol/``, ``manage.py protocol_set`` and a JSONL file's header line. So one setting bounds
them all (docs/protocols.md, "Limits"):

- ``PROTOCOL_MAX_CHARS``: the text (before it is parsed) and the document written as compact JSON (what is
  stored, and what every annotation screen embeds) may not be longer;
- ``PROTOCOL_MAX_DEPTH``: objects and lists may not nest deeper (the shipped documents nest 6 deep).

YAML is read without aliases or anchors: an alias repeats a value without writing it out, so a few hundred
bytes of nested aliases would expand to gigabytes (a "billion laughs"); a protocol document has no use for
them. A document read from YAML must also be JSON data (no dates, no non-text keys): it is stored as JSON.
A refusal is a ``ProtocolTextError``, a ``ProtocolDocumentError`` with one problem, so every route already
shows it the way it shows a document that does not hold.
"""

from __future__ import annotations

import json
import math

import yaml
from django.conf import settings

from ..domain.protocol.document import Protocol, ProtocolDocumentError, load_protocol
from ..json_input import nesting_exceeds
from ..domain.protocol.validation import cut, pointer, quoted

JSON_SCALARS = (str, int, float, bool, type(None))


class ProtocolTextError(ProtocolDocumentError):
    """A document refused before its content is checked: unreadable, too long, too deep, or with YAML aliases.
    ``reason`` reads after "the document" ("is not JSON: ...")."""

    def __init__(self, reason: str, where: str = "/"):
        self.reason, self.where = reason, where
        super().__init__([(where, f"the document {reason}")])


def protocol_limits() -> tuple[int, int]:
    """(PROTOCOL_MAX_CHARS, PROTOCOL_MAX_DEPTH), read at each call so that a changed setting applies at once."""
    return int(settings.PROTOCOL_MAX_CHARS), int(settings.PROTOCOL_MAX_DEPTH)


def format_of(name: str) -> str:
    """The format a file is read in by its name: YAML for *.yaml / *.yml, JSON otherwise."""
    return "yaml" if str(name).lower().endswith((".yaml", ".yml")) else "json"


def read_protocol_text(text: str, format: str = "json"):
    """The data of a document written as JSON or YAML (``format``), within the limits; raises ProtocolTextError."""
    max_chars, max_depth = protocol_limits()
    if len(text) > max_chars:
        raise ProtocolTextError(f"is {len(text):,} characters long; at most {max_chars:,} are accepted (PROTOCOL_MAX_CHARS)")
    data = _yaml(text, max_depth) if format == "yaml" else _json(text)
    check_protocol_bounds(data)
    return data


def check_protocol_bounds(document) -> None:
    """Refuse data that is nested too deep, is not JSON data, or is too long written as compact JSON (an API
    body arrives parsed: this is its check, and everyone's after parsing)."""
    max_chars, max_depth = protocol_limits()
    _check_shape(document, max_depth)
    try:
        written = len(json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
    except ValueError:
        raise ProtocolTextError("holds a number that is not finite (NaN or Infinity), which JSON cannot write") from None
    if written > max_chars:
        raise ProtocolTextError(f"is {written:,} characters long written as compact JSON; at most {max_chars:,} are "
                                "accepted (PROTOCOL_MAX_CHARS)")


def load_protocol_bounded(document) -> Protocol:
    """``load_protocol`` after the limits: what the write path and the JSONL header call."""
    check_protocol_bounds(document)
    return load_protocol(document)


def _json(text: str):
    if nesting_exceeds(text, protocol_limits()[1]):  # before the parser: never a RecursionError (json_input)
        raise ProtocolTextError(_too_deep(protocol_limits()[1]))
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise ProtocolTextError(f"is not JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
    except RecursionError:
        raise ProtocolTextError(_too_deep(protocol_limits()[1])) from None
    except ValueError as error:  # NaN / Infinity, or an integer past Python's digit limit
        raise ProtocolTextError(f"is not JSON: {cut(str(error), 200)}") from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _too_deep(max_depth: int, where: str = "") -> str:
    place = f" at {where}" if where else ""
    return f"nests objects and lists deeper than {max_depth}{place}; at most {max_depth} (PROTOCOL_MAX_DEPTH)"


def _check_shape(value, max_depth: int) -> None:
    """Depth first, never past ``max_depth`` (so never a RecursionError); the path of the first fault."""
    trail: list = []

    def visit(node, depth: int) -> None:
        if isinstance(node, (dict, list)):
            if depth >= max_depth:
                raise ProtocolTextError(_too_deep(max_depth, pointer(*trail)), pointer(*trail))
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in items:
                if isinstance(node, dict) and not isinstance(key, str):
                    raise ProtocolTextError(f"has a key that is not text ({quoted(key)}) at {pointer(*trail)}; "
                                            "JSON keys are text", pointer(*trail))
                trail.append(key)
                visit(child, depth + 1)
                trail.pop()
        elif not isinstance(node, JSON_SCALARS) or (isinstance(node, float) and not math.isfinite(node)):
            where = pointer(*trail)
            raise ProtocolTextError(f"holds a {type(node).__name__} at {where}, which is not JSON data (write it in "
                                    "quotes as text)", where)

    visit(value, 0)


class _PlainYamlLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing aliases and anchors and nesting past the depth limit while it composes
    (before anything is expanded or constructed)."""

    max_depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            kind = "an alias" if isinstance(event, yaml.AliasEvent) else "an anchor"
            raise ProtocolTextError(
                f"uses {kind} ({quoted(event.anchor)}, line {event.start_mark.line + 1}): YAML aliases and anchors are "
                "refused in a protocol document; write each value out")
        nests = isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent))
        self._depth = getattr(self, "_depth", 0) + nests
        if self._depth > self.max_depth:
            raise ProtocolTextError(_too_deep(self.max_depth, f"line {event.start_mark.line + 1}"))
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= nests


def _yaml(text: str, max_depth: int):
    loader = _PlainYamlLoader(text)
    loader.max_depth = max_depth
    try:
        return loader.get_single_data()
    except ProtocolTextError:
        raise
    except (yaml.YAMLError, ValueError, RecursionError) as error:  # ValueError: an integer past Python's digit limit
        raise ProtocolTextError(f"is not YAML: {cut(str(error), 200)}") from None
    finally:
        loader.dispose()
