"""Every problem of a protocol document, each named by its path in the document.

Two passes. The JSON Schema (``annotator/protocols/protocol.schema.json``, published in docs/protocols.md)
checks the shape: required fields, types, identifiers, keys, two to nine answers per choice or multiple step,
the fields each step kind requires. Only a document of the right shape gets the second pass, which checks the
meaning: each step's kind its own (``protocol.kinds``: a scale's range, a multiple step's bounds, no branch from a
step that is not a choice), every step and label referenced exists, the
tree has no cycle, every step is asked and every label reached by some path, no key means two things on one
screen, groups name known labels, every evaluation view has a positive label, and in independent mode every
label is reached by exactly one path. A path is a JSON pointer into the document (``/steps/2/answers/1/next``).

The problems are listed, never raised one at a time: a lead fixing a document sees all of them at once, up
to ``MAX_PROBLEMS`` (then one line says how many more), each message cut to ``MAX_MESSAGE`` characters and a
value it quotes to ``MAX_QUOTE``: a refusal stays a few kilobytes whatever the document.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections import Counter
from functools import lru_cache
from pathlib import Path

import jsonschema

from ..storable import shown, text_problem
from .kinds import CHOICE, KINDS, kind_of

SCHEMA_PATH = Path(__file__).resolve().parent.parent.parent / "protocols" / "protocol.schema.json"
MAX_PATHS = 2000  # complete paths of the tree: the page embeds one node per path prefix

# Keys the annotation screen already gives a meaning (static/js/workspace.js); a label key may not reuse them.
SCREEN_KEYS = {
    "j": "moves to the next sentence", "k": "moves to the previous sentence", "s": "submits the turn",
    "u": "takes the last answer back", "e": "attaches evidence", "c": "opens the note",
    "y": "answers yes in sequential mode", "n": "answers no in sequential mode",
}

MAX_PROBLEMS = 50  # problems listed in one refusal; the rest are counted
MAX_MESSAGE = 300  # characters of one problem's message (and of its path)
MAX_QUOTE = 80  # characters of a value a message quotes

Problem = tuple[str, str]

_QUOTE = reprlib.Repr()
_QUOTE.maxlevel, _QUOTE.maxlist, _QUOTE.maxdict = 2, 3, 3
_QUOTE.maxstring = _QUOTE.maxother = _QUOTE.maxlong = 40


def quoted(value) -> str:
    """``repr(value)``, cut short whatever its size (reprlib never walks the whole value)."""
    return cut(_QUOTE.repr(value), MAX_QUOTE)


def cut(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def bounded(problems: list[Problem]) -> list[Problem]:
    """At most MAX_PROBLEMS problems, each cut to MAX_MESSAGE characters, then one line counting the rest."""
    kept = [(cut(where), cut(message)) for where, message in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        kept.append(("/", f"and {len(problems) - MAX_PROBLEMS:,} more problem(s), not listed"))
    return kept


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def _validator():
    whole_strings = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _whole_string_pattern})
    return whole_strings(schema())


def _whole_string_pattern(validator, pattern, instance, _schema):
    """The schema's patterns are ECMA-262's, where ``$`` ends the string; Python's ``$`` also matches before a
    final newline, so ``"faithful\\n"`` would pass next to ``"faithful"``. Here a pattern matches whole strings."""
    if validator.is_type(instance, "string") and not re.search(_anchored(pattern), instance):
        yield jsonschema.ValidationError(f"{quoted(instance)} does not match {pattern!r}")


@lru_cache(maxsize=64)
def _anchored(pattern: str) -> str:
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern


def pointer(*parts) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts) or "/"


def problems_of(document) -> list[Problem]:
    """Every problem of ``document``, in document order; empty when it holds."""
    if not isinstance(document, dict):
        return [("/", "a protocol document is a JSON object")]
    unstorable = _unstorable_problems(document)
    if unstorable:  # a NUL (PostgreSQL's jsonb cannot hold one), a lone surrogate (no UTF-8): before anything reads it
        return unstorable
    shape = _shape_problems(document)
    return bounded(shape if shape else _meaning_problems(document))


def _shape_problems(document: dict) -> list[Problem]:
    found = []
    for error in _validator().iter_errors(document):
        where = pointer(*error.absolute_path)
        if error.validator == "oneOf" and error.absolute_path and "value" in error.instance:
            message = "an answer needs exactly one of 'next' (the step that follows) or 'yields' (the label it ends on)"
        elif error.validator in ("minItems", "maxItems") and isinstance(error.instance, list):
            bound = "at least" if error.validator == "minItems" else "at most"
            last = error.absolute_path[-1] if error.absolute_path else ""
            what = last.replace("_", " ") if isinstance(last, str) and last else "items"
            message = f"has {len(error.instance)} {what}; {bound} {error.validator_value}"
        elif error.validator == "minLength":
            message = "must not be empty"
        elif error.validator == "pattern":
            message = f"{quoted(error.instance)} does not match {error.validator_value} ({_PATTERN_HINTS.get(error.validator_value, 'see docs/protocols.md')})"
        elif error.validator == "maxLength" and isinstance(error.instance, str):
            message = f"has {len(error.instance):,} characters; at most {error.validator_value:,}"
        elif error.validator in _QUOTING:  # jsonschema's own message repeats the whole value: quote it cut
            message = _QUOTING[error.validator].format(quoted(error.instance), quoted(error.validator_value))
        else:
            message = error.message
        found.append((where, message))
    return sorted(set(found), key=lambda problem: _sort_key(problem[0]))


_QUOTING = {"type": "{} is not of type {}", "enum": "{} is not one of {}", "const": "{} is not {}",
            "uniqueItems": "{} has non-unique elements"}

_PATTERN_HINTS = {
    "^[a-z][a-z0-9_]{0,19}$": "an identifier: a lower-case letter, then letters, digits or _; at most 20",
    "^[1-9]$": "an answer's key is one digit, 1 to 9",
    "^[1-9a-z]$": "a label's key is one digit 1-9 or one lower-case letter",
    "^#[0-9a-fA-F]{6}$": "a colour is #rrggbb",
}


def _sort_key(where: str):
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in where.split("/")]


def _meaning_problems(document: dict) -> list[Problem]:
    found: list[Problem] = []
    steps = document["steps"]
    labels = document["labels"]
    step_index = _unique_ids(steps, "steps", "step", found)
    label_index = _unique_ids(labels, "labels", "label", found)
    if document["start"] not in step_index:
        found.append(("/start", f"unknown step {document['start']!r}"))
    edges = _check_answers(steps, step_index, label_index, found)
    _check_label_keys(document, labels, found)
    acyclic = _check_cycles(document, steps, step_index, edges, found)
    if acyclic and document["start"] in step_index:
        _check_reach(document, steps, labels, step_index, edges, found)
    _check_groups(document.get("groups") or {}, step_index, label_index, found)
    return found


def _unique_ids(items: list, where: str, kind: str, found: list) -> dict[str, int]:
    index: dict[str, int] = {}
    for position, item in enumerate(items):
        if item["id"] in index:
            found.append((pointer(where, position, "id"),
                          f"{kind} id {item['id']!r} is already used by {pointer(where, index[item['id']])}"))
        else:
            index[item["id"]] = position
    return index


def _check_answers(steps, step_index, label_index, found) -> dict[str, list[tuple[str, str]]]:
    """Per step, where it leads (the pointer of the ``next`` in the document, the step id); refuses unknown targets
    and shared keys, and lets each step's kind (``protocol.kinds``) name its own problems."""
    edges: dict[str, list[tuple[str, str]]] = {}
    for i, step in enumerate(steps):
        kind = kind_of(step)
        found.extend(KINDS[kind].validate_step(step, pointer("steps", i)))
        seen_values: dict[str, int] = {}
        seen_keys: dict[str, int] = {}
        seen_yn: dict[str, int] = {}
        for k, answer in enumerate(step.get("answers", ())):
            here = ("steps", i, "answers", k)
            if answer["value"] in seen_values:
                found.append((pointer(*here, "value"), f"answer {answer['value']!r} is already an answer of step {step['id']!r}"))
            seen_values.setdefault(answer["value"], k)
            key = answer.get("key", str(k + 1))
            if key in seen_keys:
                other = step["answers"][seen_keys[key]]["value"]
                found.append((pointer(*here, "key"), f"key {key!r} already answers {other!r} in step {step['id']!r}: two answers on one key"))
            seen_keys.setdefault(key, k)
            yn = answer.get("yn", "")
            if yn and yn in seen_yn:
                other = step["answers"][seen_yn[yn]]["value"]
                found.append((pointer(*here, "yn"), f"key {yn!r} already answers {other!r} in step {step['id']!r}: two answers on one key"))
            if yn:
                seen_yn.setdefault(yn, k)
            if kind == CHOICE:  # another kind's answers do not lead on (its validate_step refuses next/yields)
                _check_target(answer, here, step["id"], step_index, label_index, edges, found)
        if kind != CHOICE:
            _check_target(step, ("steps", i), step["id"], step_index, label_index, edges, found)
    return edges


def _check_target(item: dict, here: tuple, step_id: str, step_index, label_index, edges, found) -> None:
    """The ``next`` or ``yields`` of an answer (a choice step's) or of a step (another kind's)."""
    if "next" in item:
        if item["next"] not in step_index:
            found.append((pointer(*here, "next"), f"unknown step {item['next']!r}"))
        else:
            edges.setdefault(step_id, []).append((pointer(*here, "next"), item["next"]))
    elif "yields" in item and item["yields"] not in label_index:
        found.append((pointer(*here, "yields"), f"unknown label {item['yields']!r}"))


def _check_label_keys(document, labels, found) -> None:
    independent = "independent" in document.get("modes", ["sequential", "independent"])
    seen: dict[str, int] = {}
    for position, label in enumerate(labels):
        key = label.get("key") or (str(position + 1) if position < 9 else "")
        where = pointer("labels", position, "key")
        if not key:
            if independent:
                found.append((pointer("labels", position), f"label {label['id']!r} needs a key in independent mode (only the first nine get 1-9 by default)"))
            continue
        if key in SCREEN_KEYS:
            found.append((where, f"key {key!r} {SCREEN_KEYS[key]} on the annotation screen: a label cannot use it"))
        elif key in seen:
            found.append((where, f"key {key!r} already picks label {labels[seen[key]]['id']!r}: two labels on one key"))
        seen.setdefault(key, position)


def _check_cycles(document, steps, step_index, edges, found) -> bool:
    """Refuse every answer that leads back to a step on the way to it; True when there is none."""
    state: dict[str, int] = {}  # 1: on the current walk, 2: done
    trail: list[str] = []
    acyclic = True

    def visit(step_id: str) -> None:
        nonlocal acyclic
        state[step_id] = 1
        trail.append(step_id)
        for where, target in edges.get(step_id, ()):
            if state.get(target) == 1:
                acyclic = False
                loop = trail[trail.index(target):] + [target]
                found.append((where,
                              "a cycle: " + " → ".join(loop) + " (a step cannot follow itself)"))
            elif target not in state:
                visit(target)
        trail.pop()
        state[step_id] = 2

    for step in steps:
        if step["id"] not in state and step_index.get(step["id"]) is not None:
            visit(step["id"])
    return acyclic


def label_path_counts(start: str, steps_by_id: dict, limit: int = MAX_PATHS + 1) -> tuple[Counter, set[str]]:
    """How many complete paths end on each label, and the steps asked on some path (the tree must be acyclic).

    A path counts the choice answers only (its *shape*): a multiple, scale or text step leads to one place."""
    memo: dict[str, Counter] = {}

    def counts(step_id: str) -> Counter:
        if step_id not in memo:
            total: Counter = Counter()
            step = steps_by_id[step_id]
            for answer in (step["answers"] if kind_of(step) == CHOICE else (step,)):
                if "next" in answer:
                    if answer["next"] in steps_by_id:  # an unknown step is refused by _check_answers
                        total.update(counts(answer["next"]))
                elif "yields" in answer:  # neither: refused by the step's kind
                    total[answer["yields"]] += 1
            memo[step_id] = Counter({label: min(n, limit) for label, n in total.items()})
        return memo[step_id]

    return counts(start), set(memo)


def _check_reach(document, steps, labels, step_index, edges, found) -> None:
    steps_by_id = {step["id"]: step for step in steps}
    per_label, asked = label_path_counts(document["start"], steps_by_id)
    for position, step in enumerate(steps):
        if step["id"] not in asked and step_index[step["id"]] == position:
            found.append((pointer("steps", position), f"step {step['id']!r} is never asked: no path from {document['start']!r} leads to it"))
    independent = "independent" in document.get("modes", ["sequential", "independent"])
    for position, label in enumerate(labels):
        reached = per_label.get(label["id"], 0)
        if not reached:
            found.append((pointer("labels", position), f"label {label['id']!r} is reached by no path"))
        elif reached > 1 and independent:
            found.append((pointer("labels", position),
                          f"label {label['id']!r} is reached by {reached} paths; independent mode needs exactly one "
                          "(give each path its own label, or drop 'independent' from modes)"))
    total = sum(per_label.values())
    if total > MAX_PATHS:
        found.append(("/steps", f"the tree has more than {MAX_PATHS} complete paths; at most {MAX_PATHS}"))


def _check_groups(groups: dict, step_index, label_index, found) -> None:
    def labels_known(names, *where) -> None:
        for position, name in enumerate(names):
            if name not in label_index:
                found.append((pointer("groups", *where, position), f"unknown label {name!r}"))

    def steps_known(names, *where) -> None:
        for position, name in enumerate(names):
            if name not in step_index:
                found.append((pointer("groups", *where, position), f"unknown step {name!r}"))

    for name in ("hallucination", "severity", "error_type"):
        labels_known(groups.get(name, []), name)
    steps_known(groups.get("agreement_steps", []), "agreement_steps")
    steps_known(groups.get("stage_two_steps", []), "stage_two_steps")
    family_of: dict[str, str] = {}
    family_ids: set[str] = set()
    for f, family in enumerate(groups.get("families", [])):
        if family["id"] in family_ids:
            found.append((pointer("groups", "families", f, "id"), f"family id {family['id']!r} is used twice"))
        family_ids.add(family["id"])
        labels_known(family["labels"], "families", f, "labels")
        for position, label in enumerate(family["labels"]):
            if label in family_of:
                found.append((pointer("groups", "families", f, "labels", position),
                              f"label {label!r} is already in family {family_of[label]!r}"))
            family_of.setdefault(label, family["id"])
    evaluation = groups.get("evaluation", {})
    view_ids: set[str] = set()
    for v, view in enumerate(evaluation.get("views", [])):
        if view["id"] in view_ids:
            found.append((pointer("groups", "evaluation", "views", v, "id"), f"view id {view['id']!r} is used twice"))
        view_ids.add(view["id"])
        labels_known(view["positive"], "evaluation", "views", v, "positive")
        if not view["positive"]:
            found.append((pointer("groups", "evaluation", "views", v, "positive"),
                          f"view {view['id']!r} has no positive label: nothing to detect"))
        if "scope" in view:
            labels_known(view["scope"], "evaluation", "views", v, "scope")
            for position, label in enumerate(view["positive"]):
                if label not in view["scope"]:
                    found.append((pointer("groups", "evaluation", "views", v, "positive", position),
                                  f"positive label {label!r} is outside the view's scope"))
    macro = evaluation.get("macro")
    if macro:
        for position, name in enumerate(macro["views"]):
            if name not in view_ids:
                found.append((pointer("groups", "evaluation", "macro", "views", position), f"unknown view {name!r}"))


def _unstorable_problems(document: dict) -> list[Problem]:
    """Every key and string of ``document`` holding a NUL character (``\\u0000``) or a lone surrogate, by its path
    (``annotator.domain.storable``: text a database and a UTF-8 file can hold).

    Walked with a stack, not recursion: the document may nest deeper than Python's recursion limit."""
    found, stack = [], [((), document)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, str):
            if problem := text_problem(value):
                found.append((_shown_pointer(parts), problem))
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and (problem := text_problem(key)):
                    found.append((_shown_pointer(parts), f"the key {key!r} {problem}"))
                stack.append(((*parts, key), item))
        elif isinstance(value, list):
            stack.extend(((*parts, index), item) for index, item in enumerate(value))
    return sorted(set(found), key=lambda problem: _sort_key(problem[0]))


def _shown_pointer(parts) -> str:
    """The pointer with a key's bad characters escaped: it is shown back (a lone surrogate cannot be written)."""
    return pointer(*(shown(part) if isinstance(part, str) else part for part in parts))
