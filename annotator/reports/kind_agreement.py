"""Agreement of a protocol's multiple, scale and text steps (issue 42), read from the annotators' walks.

The label and the choice steps are measured from the labels alone (reports.agreement: a label says which answer
its path gave at each choice step). A multiple, scale or text step's value is only in the walk, so these steps
are measured from the submitted walks of the sentences, by ``domain.agreement_kinds`` (ordinal α for a scale,
MASI α and one binary α per answer for a multiple step, a count for text). Nothing is read when the protocol has
no such step: every project before issue 42 costs what it did.

Walks made under an older version of the project's protocol are left out here (the mapping between versions
carries labels, not the values of a step that may have changed or gone).
"""

from __future__ import annotations

from collections import defaultdict

from ..domain import agreement_kinds
from ..models import Assignment, SentenceAnnotation

CHUNK = 2000


def _values_by_step(project, steps, batch_id=None, carry=None) -> dict[str, dict[int, list]]:
    """step -> sentence -> the values the sentence's annotators gave there (one per annotator who answered it)."""
    annotations = SentenceAnnotation.objects.filter(
        assignment__project=project, assignment__status=Assignment.Status.SUBMITTED,
        assignment__is_qualification=False, sentence__turn__is_qualification=False,
    )
    if batch_id is not None:
        annotations = annotations.filter(sentence__turn__dialogue__batch_id=batch_id)
    values: dict[str, dict[int, list]] = {step: defaultdict(list) for step in steps}
    rows = annotations.values_list("sentence_id", "assignment__protocol_version_id", "path").iterator(chunk_size=CHUNK)
    for sentence_id, version_id, path in rows:
        if not isinstance(path, dict) or (carry is not None and carry.is_older(version_id)):
            continue
        for step in steps:
            if step in path:
                values[step][sentence_id].append(path[step])
    return values


def kind_step_rows(project, protocol, batch_id=None, carry=None, level: str | None = None) -> list[dict]:
    """One report row per multiple, scale and text step of ``protocol`` (in protocol order), and after a multiple
    step one row per answer (its binary α), with the kind and the metric used."""
    from ..domain import agreement  # it loads NumPy: only when a report is computed (issue 49)

    steps = tuple(protocol.kind_steps())
    if not steps:
        return []
    values = _values_by_step(project, steps, batch_id, carry)
    rows = []
    for number, step_id in enumerate(protocol.steps, start=1):
        if step_id not in steps:
            continue
        step = protocol.step(step_id)
        measured = agreement_kinds.step_agreement(step, list(values[step_id].values()), level)
        title = f"Step {number} · {step.question}"
        # One unit is no measure of agreement (as for the choice steps): n/a, not a 0 or 1 that looks like a finding.
        few = measured.units < agreement.MIN_UNITS
        rows.append({
            "variable": step_id, "title": title, "scope": "sentences two or more annotators answered it on",
            "kind": measured.kind, "metric": agreement_kinds.metric_of(measured.kind, level),
            "alpha": None if few else measured.alpha, "percent": None if few else measured.percent,
            "units": measured.units, "answered": measured.answered, "kappa": None, "left_out": 0,
        })
        names = {answer.value: answer.label for answer in getattr(step, "answers", ())}
        for answer, alpha in measured.per_answer:
            rows.append({
                "variable": f"{step_id}:{answer}", "title": f"{title} · answer “{names.get(answer, answer)}”",
                "scope": "sentences two or more annotators answered the step on", "kind": "multiple",
                "metric": "binary α (per answer)", "alpha": None if few else alpha, "percent": None,
                "units": measured.units, "answered": measured.answered, "kappa": None, "left_out": 0,
            })
    return rows


def with_kind_steps(choice_rows: list[dict], project, protocol, batch_id=None, carry=None,
                    scale_level: str = "ordinal") -> list[dict]:
    """The label's and choice steps' rows with the kind steps' rows among them, every step in protocol order."""
    kind_rows = kind_step_rows(project, protocol, batch_id, carry, scale_level)
    if not kind_rows:
        return choice_rows
    order = {step: number for number, step in enumerate(protocol.steps)}
    position = lambda row: (row["variable"] != "label", order.get(row["variable"].split(":")[0], len(order)))  # noqa: E731
    return sorted(choice_rows + kind_rows, key=position)  # stable: a step's per-answer rows stay after it
