"""Text a database and a UTF-8 file can hold: the one rule of every route that takes text.

Two kinds of character are not such text. A NUL (``\\u0000``): PostgreSQL's text and jsonb cannot hold one. A lone
surrogate (a code point U+D800–U+DFFF not part of a pair, which JSON carries as an escape such as ``"\\ud800"``):
it is not Unicode text at all, so it cannot be written as UTF-8. SQLite kept one inside a JSON column (as its
escape) and every page, API answer and export that read it back failed to encode it (500s, an export of its header
only); PostgreSQL refused it with a driver error. The importers, the JSON bodies of the API and of the pages
(``annotator.json_input``), the protocol document's validation and a text step's value refuse both with this
module's words; ``readable`` shows a value stored before these checks with U+FFFD in place of a lone surrogate.
"""

from __future__ import annotations

import re

NUL_PROBLEM = "contains a NUL character (\\u0000), which the database cannot store"
SURROGATE_PROBLEM = "contains a lone surrogate (\\ud800-\\udfff), which is not text the database can store"

_SURROGATE = re.compile("[\ud800-\udfff]")
# JSON carries NUL and lone surrogates only as escapes: a walk of parsed data is needed only when its text holds one.
UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (Python keeps a pair read from ``"\\ud83d\\ude00"`` as one character)."""
    return _SURROGATE.search(text) is not None


def surrogate_problem(text: str) -> str | None:
    return SURROGATE_PROBLEM if has_surrogate(text) else None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored (``NUL_PROBLEM``, ``SURROGATE_PROBLEM``), or None."""
    if "\x00" in text:
        return NUL_PROBLEM
    return surrogate_problem(text)


def unstorable_path(value, problem_of=text_problem) -> tuple[list, str] | None:
    """(path, problem) of the first string or key of ``value`` (JSON data) that ``problem_of`` refuses, in document
    order, else None. A key at fault ends the path, written with its bad characters escaped (it is shown back).

    Walked with a stack, not recursion: JSON data may nest deeper than Python's recursion limit."""
    stack = [([], value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            if problem := problem_of(node):
                return path, problem
        elif isinstance(node, dict):
            for key in node:
                if isinstance(key, str) and (problem := problem_of(key)):
                    return [*path, shown(key)], problem
            stack.extend(([*path, key], item) for key, item in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(([*path, index], item) for index, item in reversed(list(enumerate(node))))
    return None


def shown(text: str) -> str:
    """``text`` with its lone surrogates written as their escapes (``\\ud800``): what a response may quote."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def readable(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (the replacement character): a value stored before surrogates
    were refused, as a page or an export can write it."""
    return _SURROGATE.sub("\ufffd", text)


def readable_data(value):
    """JSON data with every string and key ``readable``; ``value`` itself when nothing needed replacing."""
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, dict):
        return {readable(key) if isinstance(key, str) else key: readable_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [readable_data(item) for item in value]
    return value
