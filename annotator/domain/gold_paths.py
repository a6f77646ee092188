"""What a gold's path holds (issue 46): the answers that were decided, each on one walk that yields the gold's label.

A gold label comes with its walk, but not every answer of that walk is always decided, so a gold's path may
leave steps out (docs/protocols.md, *Gold's path*):

- annotators who agree on the label and on every multiple and scale step but wrote different texts leave the
  text step out: text never decides gold, so none of their texts is the gold text (``gold_kinds.agreed_path``;
  their texts stay in their answers, and an adjudicator who decides the sentence writes or picks one);
- a label named rather than walked (an adjudicator or a lead names it) has its one walk's choice answers (its
  shape), or none when several walks yield it;
- a walk given under an older protocol version keeps, under the current one, every answer the current version
  still takes on a walk to the carried label (``carried_walk``): a scale turned into a choice loses its point
  (no answer of the choice, and nobody chose one), the other answers stay.

One definition covers every gold, and the JSONL import checks it (``gold_path_problem``): each step of the path
is a step of the protocol answered with a value it takes, and one walk that yields the label passes through every
one of them with those answers. A complete walk is such a path; so is ``{}``.
"""

from __future__ import annotations

from collections.abc import Mapping

from .protocol.cache import ProtocolCache
from .protocol.kinds import holds, parse_value
from .protocol.parts import ProtocolError
from .protocol.tree import walk_all

# protocol checksum -> every walk: (its shape, the label it yields, the steps it asks)
_WALKS: ProtocolCache[tuple] = ProtocolCache()


def _walks_to(protocol, label: str) -> list[tuple[dict, tuple[str, ...]]]:
    """(shape, steps asked) of every walk of ``protocol`` that yields ``label``."""
    every = _WALKS.get_or_make(protocol.checksum, lambda: tuple(
        walk_all(protocol.start, {step: protocol.step(step) for step in protocol.steps})))
    return [(shape, asked) for shape, yielded, asked in every if yielded == label]


def _on_walk(shape: Mapping, asked: tuple[str, ...], step: str, value) -> bool:
    """Whether the walk (``shape``, ``asked``) answers ``step`` with ``value`` (a step of another kind than choice:
    whatever it takes, which the caller checked)."""
    return step in asked and (step not in shape or shape[step] == value)


def gold_path_problem(protocol, label: str, path) -> str | None:
    """Why ``path`` is not a gold path of ``label`` under ``protocol`` (module docstring), or None when it is."""
    if not isinstance(path, Mapping):
        return "must be an object of step: answer"
    for step, value in path.items():
        try:
            found = protocol.step(step)
            stored = parse_value(found, value)  # raises, naming what the step takes
        except ProtocolError as problem:
            return str(problem)
        if not holds(found, value):
            return f"step {step!r} stores its answer as {stored!r}, not {value!r}"
    reached = protocol.label_of(path)
    if reached is not None and reached != label:
        return f"the path yields {reached!r}, not the label {label!r}"
    if reached == label and _is_walk(protocol, path):  # a complete walk, the common case: no search
        return None
    walks = _walks_to(protocol, label)
    if any(all(_on_walk(shape, asked, step, value) for step, value in path.items()) for shape, asked in walks):
        return None
    for step in protocol.steps_of(path):
        if not any(_on_walk(shape, asked, step, path[step]) for shape, asked in walks):
            return f"no walk that yields {label!r} answers step {step!r} with {path[step]!r}"
    return f"no one walk that yields {label!r} gives all of these answers"


def carried_walk(protocol, label: str, path) -> dict:
    """The gold path of ``label`` under ``protocol`` that keeps every answer of ``path`` (a walk given under
    another version of the protocol) it can: the answers the protocol still takes, on the walk to ``label`` that
    keeps the most of them, completed by that walk's choice answers. Where several walks keep as many, only what
    they all share stays (a choice nobody made is not made here)."""
    if isinstance(path, Mapping) and path and protocol.label_of(path) == label and _is_walk(protocol, path):
        return protocol.ordered(dict(path))  # the current tree reads it as that label: all of it carries
    kept = {}
    for step, value in (path.items() if isinstance(path, Mapping) else ()):
        try:
            if holds(protocol.step(step), value):
                kept[step] = value
        except ProtocolError:  # a step the protocol no longer has
            continue
    best, found = -1, []
    for shape, asked in _walks_to(protocol, label):
        walk = {**{step: value for step, value in kept.items() if step in asked}, **shape}
        used = sum(1 for step, value in kept.items() if step in walk and _same(walk[step], value))
        if used > best:
            best, found = used, [walk]
        elif used == best:
            found.append(walk)
    if not found:
        return {}
    shared = {step: value for step, value in found[0].items()
              if all(step in other and _same(other[step], value) for other in found[1:])}
    return protocol.ordered(shared)


def _is_walk(protocol, path: Mapping) -> bool:
    try:
        protocol.validate(path)
    except ProtocolError:
        return False
    return True


def _same(first, second) -> bool:
    return type(first) is type(second) and first == second
