"""The values of a protocol's non-choice steps (multiple, scale, text: docs/protocols.md) in an imported path.

A gold's path is checked whole, as a walk that yields its label (``gold_from_label``). Answers and adjudications
made in another project are kept as they are written (docs/jsonl-format.md), so their choice answers are not
walked; but a kind value is checked against its step, so that a file never carries a value its own header
refuses (a list where a scale's integer is asked, a point outside the scale, a text longer than the step takes),
and the reports, gold and pre-labeler never read one.
"""

from __future__ import annotations

from annotator.domain.protocol.document import Protocol, ProtocolError
from annotator.domain.protocol.kinds import parse_value


def kind_value_problem(protocol: Protocol, path) -> tuple[str, str] | None:
    """(step id, problem) of the first value of ``path`` that its non-choice step refuses; None when every one
    holds (or ``path`` is not an object: the caller's type checks say so). A protocol without kinds costs
    nothing: it has no such step."""
    if not isinstance(path, dict):
        return None
    for step_id in protocol.kind_steps():
        if step_id not in path:
            continue
        value = path[step_id]
        try:
            stored = parse_value(protocol.step(step_id), value)
        except ProtocolError as problem:
            return step_id, str(problem)
        if type(stored) is not type(value) or stored != value:
            # Kept as written and exported as written: only the one stored form (a multiple step's answers in the
            # step's order) compares equal to the same answer given here.
            return step_id, f"step {step_id!r} stores its answer as {stored!r}, not {value!r}"  # as the walk says
    return None
