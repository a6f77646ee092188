"""The shape of a protocol's tree, read from its steps: the order steps are asked in, every way through it.

Only a choice step branches (one way per answer); a multiple, scale or text step leads to one place whatever
its answer (``Step.next`` or ``Step.yields``), so the ways through a tree are as many as its choice answers
allow, and a way is named by its *shape*: the choice answers it takes.
"""

from __future__ import annotations

from collections.abc import Callable

from .parts import CHOICE, Step

Shape = dict[str, str]


def walk_all(start: str, steps: dict[str, Step]) -> list[tuple[Shape, str, tuple[str, ...]]]:
    """Every way through the tree from ``start``: (its shape, the label it ends on, the steps asked)."""
    found: list[tuple[Shape, str, tuple[str, ...]]] = []

    def walk(step: str, path: Shape, asked: tuple[str, ...]) -> None:
        current = steps[step]
        if current.kind != CHOICE:
            if current.next is None:
                found.append((path, current.yields, (*asked, step)))
            else:
                walk(current.next, path, (*asked, step))
            return
        for answer in current.answers:
            extended = {**path, step: answer.value}
            if answer.next is None:
                found.append((extended, answer.yields, (*asked, step)))
            else:
                walk(answer.next, extended, (*asked, step))

    walk(start, {}, ())
    return found


def tree_node(steps: dict[str, Step], start: str, node_extras: Callable[[Shape], dict] | None) -> dict:
    """``describe()``'s tree from ``start``: a choice step's node has, per answer, the node that follows
    (``then``); a step of another kind leads to one node whatever its answer (``after``); a path's end is
    ``{"label": ...}``. ``node_extras(shape)`` adds its keys to each node."""

    def node(step: str | None, label: str | None, path: Shape) -> dict:
        extras = node_extras(path) if node_extras else {}
        if step is None:
            return {"label": label, **extras}
        current = steps[step]
        if current.kind != CHOICE:  # ``path`` stays the shape: the kind's value decides nothing
            return {"step": step, "kind": current.kind, **extras, "after": node(current.next, current.yields, path)}
        return {"step": step, **extras,
                "then": {a.value: node(a.next, a.yields, {**path, step: a.value}) for a in current.answers}}

    return node(start, None, {})


def topological(start: str, steps: dict[str, Step], listed: list[str]) -> tuple[str, ...]:
    """The steps in the order they can be asked: each after every step that leads to it, ties in document order."""
    indegree = {sid: 0 for sid in listed}
    for step in steps.values():
        for target in _leads_to(step):
            indegree[target] += 1
    rank = {sid: n for n, sid in enumerate(listed)}
    ready = sorted((sid for sid in listed if indegree[sid] == 0), key=lambda sid: (sid != start, rank[sid]))
    order: list[str] = []
    while ready:
        current = ready.pop(0)
        order.append(current)
        for target in _leads_to(steps[current]):
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
                ready.sort(key=lambda sid: rank[sid])
    return tuple(order)


def _leads_to(step: Step) -> list[str]:
    """The steps that follow ``step`` (one per answer that leads on; a step of another kind leads to one)."""
    if step.kind != CHOICE:
        return [step.next] if step.next is not None else []
    return [answer.next for answer in step.answers if answer.next is not None]
