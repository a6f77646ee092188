"""INTERIM (branch wiring only, removed when branch `protocol` lands): a Protocol-like object over today's
CogniBench module, with the document in the published schema (annotator/protocols/protocol.schema.json), so
the wiring can be written against `protocol_for(project)` before the real object exists."""

from __future__ import annotations

from functools import lru_cache

from . import protocol as _walk
from .definitions import LABEL_DEFINITIONS, STEP_DEFINITIONS
from .vocabulary import (
    COGNITIVE_LABELS, ERROR_TYPE_LABELS, FACTUAL_LABELS, HALLUCINATED_LABELS, SEVERITY_LABELS, STEP_ANSWERS,
    YES_NO_KEYS, Label, Step,
)

ProtocolError = _walk.ProtocolError
_COLOURS = {"irrelevant": "#757575", "faithful": "#2e7d32", "invented": "#c62828", "misleading": "#ad1457",
            "speculative": "#b34a00", "reliable": "#1565c0", "unequivocal": "#00695c"}


def _document() -> dict:
    steps = []
    for step in Step:
        answers = []
        for number, value in enumerate(STEP_ANSWERS[step], start=1):
            answers.append({"value": value.value, "label": str(value.label), "key": str(number),
                            "yn": YES_NO_KEYS.get(value, "")})
        steps.append({"id": step.value, "question": str(step.label), "definition": STEP_DEFINITIONS[step],
                      "answers": answers})
    by_id = {s["id"]: s for s in steps}

    def visit(path):
        step = _walk.next_step(path)
        for answer in by_id[step]["answers"]:
            after = {**path, step.value: answer["value"]}
            following = _walk.next_step(after)
            if following is None:
                answer["yields"] = _walk.label_of(after).value
            else:
                answer["next"] = following.value
                visit(after)
    visit({})
    for step in by_id.values():
        for answer in step["answers"]:
            if (step["id"], answer["value"]) in (("faithfulness", "faithful"), ("grounded", "yes")):
                answer["evidence"] = True
    labels = [{"id": label.value, "name": str(label.label), "definition": LABEL_DEFINITIONS[label],
               "colour": _COLOURS[label.value], "key": str(n)} for n, label in enumerate(Label, start=1)]
    return {
        "id": "cognibench", "version": 1, "name": "CogniBench", "modes": ["sequential", "independent"],
        "start": "relevance", "steps": steps, "labels": labels,
        "groups": {
            "hallucination": sorted(HALLUCINATED_LABELS),
            "families": [{"id": "factual", "name": "Factual", "colour": "#37474f", "labels": sorted(FACTUAL_LABELS)},
                         {"id": "cognitive", "name": "Cognitive", "colour": "#6a1b9a", "labels": sorted(COGNITIVE_LABELS)}],
            "evaluation": {
                "views": [{"id": "factual", "name": "Factual", "positive": ["invented"], "scope": sorted(FACTUAL_LABELS)},
                          {"id": "cognitive", "name": "Cognitive", "positive": ["misleading", "speculative"],
                           "scope": sorted(COGNITIVE_LABELS)}],
                "macro": {"id": "overall", "name": "CogniBench overall (macro)", "views": ["factual", "cognitive"]},
            },
            "agreement_steps": [s.value for s in Step],
            "stage_two_steps": ["rational", "grounded", "unequivocal"],
            "severity": sorted(SEVERITY_LABELS),
            "error_type": sorted(ERROR_TYPE_LABELS),
        },
    }


class InterimProtocol:
    id = "cognibench"
    version = 1

    def __init__(self):
        self.document = _document()

    next_step = staticmethod(_walk.next_step)
    label_of = staticmethod(_walk.label_of)
    answer = staticmethod(_walk.answer)
    undo = staticmethod(_walk.undo)
    ordered = staticmethod(_walk.ordered)
    validate = staticmethod(_walk.validate)
    path_for_label = staticmethod(_walk.path_for_label)
    divergence = staticmethod(_walk.divergence)
    steps_of = staticmethod(_walk.steps_of)
    describe = staticmethod(_walk.describe)
    paths = staticmethod(_walk.paths)


@lru_cache(maxsize=1)
def default_protocol() -> InterimProtocol:
    return InterimProtocol()


def protocol_for(project) -> InterimProtocol:
    return default_protocol()
