"""JSON read from a request, within limits: every JSON body or field of a request is read here (but the text of a
protocol document, read with the protocol's own limits).

Python's ``json`` refuses what the app cannot read in ways that are not ``JSONDecodeError``: an array nested
100,000 deep raises ``RecursionError`` (it reached views as a 500), and an integer of more than 4,300 digits a
``ValueError`` (Python's limit on converting digits, ``sys.get_int_max_str_digits``). Both are the client's
mistake, so both are a ``JSONInputError``, as is data nested deeper than ``JSON_MAX_DEPTH`` (no body of the app
nests past a dozen levels). The API reads its bodies through ``api.parsers.LimitedJSONParser`` (DRF's default
parser), the pages' JSON routes (the annotation page's ``/a/<id>/sync/``, the walks sent by forms) call
``json_loads_limited`` themselves; each answers 400 with its own error body.

A string or key holding a lone surrogate (the escape ``"\\ud800"`` not part of a pair) is an
``UnstorableTextError`` naming where it is: no database or UTF-8 file holds it (``annotator.domain.storable``),
and read past here it was stored on SQLite, then took down every page and export that read it back.
"""

from __future__ import annotations

import json
import re

from django.conf import settings

from .domain.storable import SURROGATE_ESCAPE, surrogate_problem, unstorable_path

MAX_MESSAGE = 200  # characters of the parser's own message quoted back to the client


class JSONInputError(ValueError):
    """Why a body is not JSON the app reads; the message is meant for the client."""


class UnstorableTextError(JSONInputError):
    """A string or key of the body holds a lone surrogate; ``path`` is where (keys and list positions)."""

    def __init__(self, path: list, problem: str):
        self.path, self.problem = path, problem
        where = ".".join(str(step) for step in path)
        super().__init__(f"{where}: {problem}." if where else f"The body {problem}.")


def json_max_depth() -> int:
    """``JSON_MAX_DEPTH``, read at each call so that a changed setting applies at once."""
    return int(settings.JSON_MAX_DEPTH)


def json_loads_limited(text: str | bytes, *, refuse_surrogates: bool = True):
    """The data of ``text`` (bytes are read as UTF-8); raises ``JSONInputError`` for anything the app cannot read.
    The caller bounds the length (the API's parser, the sync view's ``MAX_BODY``, a form field's ``max_length``).

    ``NaN`` and ``Infinity`` are refused, as DRF's strict JSON does: they are not JSON. A lone surrogate is an
    ``UnstorableTextError`` unless ``refuse_surrogates`` is false (a protocol document: its validation names
    every problem by its JSON pointer)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JSONInputError(f"The body is not UTF-8 text ({error.reason} at byte {error.start}).") from None
    depth = json_max_depth()
    if nesting_exceeds(text, depth):
        raise JSONInputError(_too_deep(depth))
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise JSONInputError(f"The body is not JSON: {error.msg} (line {error.lineno}, column {error.colno}).") from None
    except RecursionError:
        raise JSONInputError(_too_deep(depth)) from None
    except ValueError as error:  # an integer past Python's digit limit, NaN or Infinity
        raise JSONInputError(f"The body is not JSON the server reads: {str(error)[:MAX_MESSAGE]}.") from None
    if _deeper_than(data, depth):
        raise JSONInputError(_too_deep(depth))
    if refuse_surrogates and SURROGATE_ESCAPE.search(text):  # the walk only when the text holds such an escape
        found = unstorable_path(data, surrogate_problem)
        if found is not None:
            raise UnstorableTextError(*found)
    return data


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_exceeds(text: str, max_depth: int) -> bool:
    """Whether ``text`` opens more than ``max_depth`` objects or lists inside each other, read before parsing:
    Python's json reaches its recursion limit on an array ~1,000 deep, and a RecursionError caught in a request
    left CPython 3.11's recursion bookkeeping off (a later ``ast.parse`` in the process failed with "AST
    constructor recursion depth mismatch"). Strings are left out; malformed text is the parser's to refuse."""
    depth = 0
    for bracket in _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth = depth + 1 if bracket in "[{" else depth - 1
        if depth > max_depth:
            return True
    return False


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _too_deep(depth: int) -> str:
    return f"The body nests objects and lists more than {depth} deep (JSON_MAX_DEPTH)."


def _deeper_than(data, depth: int) -> bool:
    """Whether objects and lists nest more than ``depth`` levels (``[]`` is one); walked with a stack, never
    with recursion."""
    stack = [(data, 1)] if isinstance(data, (dict, list)) else []
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if level > depth:
            return True
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return False
