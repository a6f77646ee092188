"""The data the annotation page walks in the browser (embedded with ``json_script``).

The browser keeps the annotator's answers in the page and saves them in the
background (static/js/workspace.js); it needs, once, everything the decision
panel shows: the protocol as data (``protocol.describe``, never a second copy
of the rules), the project's guideline examples per step, and the annotator's
own saved state of every sentence of the turn. Blind like ``screen_state``:
only the requesting annotator's assignment is read, and pre-labels only when
the project shows them to annotators.
"""

from __future__ import annotations

import json

from django.core.serializers.json import DjangoJSONEncoder
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from .. import extensions
from ..domain.evidence import to_browser_offset
from ..domain.languages import UNSPACED_RANGES, text_attributes, text_language
from ..domain.protocol.cache import ProtocolCache
from ..domain.protocol.groups import reading
from ..projects.protocols import protocol_for_assignment
from .services import evidence_required
from ..domain.vocabulary import ProtocolMode
from .selectors import project_examples


def reference_offset_to_browser(reference: str, offset: int) -> int:
    """The inverse of ``browser_offset_to_reference``: a browser counts UTF-16 units and reads CR LF as one character."""
    return to_browser_offset(reference, offset)


def annotation_page_script(assignment, state: dict) -> str:
    """The page's data as ``json_script`` writes it (``<script id="annotation-data" type="application/json">``):
    ``protocol`` (the project's protocol as data, serialized once per protocol document: it is most of the
    data, and the same on every screen of the project) and ``annotation_page_data``."""
    rest = json.dumps(annotation_page_data(assignment, state), cls=DjangoJSONEncoder)
    text = '{"protocol": ' + _description_json(assignment) + ", " + rest[1:]
    return format_html('<script id="annotation-data" type="application/json">{}</script>',
                       mark_safe(text.translate(_SCRIPT_ESCAPES)))


# What json_script escapes, so that no text of the data can end the script element.
_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def annotation_page_data(assignment, state: dict) -> dict:
    """The page's data for the screen state ``state`` (from ``screen_state``), but the protocol."""
    project = assignment.project
    reference = state["dialogue"].reference
    examples: dict[str, dict[str, list]] = {}
    if project.protocol_mode != ProtocolMode.INDEPENDENT:
        for example in project_examples(project):
            side = "positive" if example.is_positive else "negative"
            examples.setdefault(example.step, {"positive": [], "negative": []})[side].append(
                {"text": example.text, "explanation": example.explanation})
    prelabels = _prelabels(project, assignment)
    sentences = []
    for row in state["rows"]:
        annotation = row.annotation
        sentences.append({
            "id": row.sentence.pk,
            "number": row.number,
            "text": row.sentence.text,
            "path": row.path,
            "label": row.label,
            "note": annotation.note if annotation else "",
            "evidence": [
                {"id": span.pk, "start": reference_offset_to_browser(reference, span.start),
                 "end": reference_offset_to_browser(reference, span.end), "text": span.text}
                for span in row.evidence
            ],
            **({"prelabel": prelabels[row.sentence.pk]} if row.sentence.pk in prelabels else {}),
        })
    active = state.get("active")
    return {
        "examples": examples,
        "mode": project.protocol_mode,
        "version": assignment.version,
        "closed": bool(state["closed"]),
        # No reference, no text to mark: evidence cannot be required (submit_problems says the same).
        "require_evidence": project.require_evidence and bool(reference.strip()),
        "extras": bool(project.enable_severity or project.enable_error_types),
        "assignment": assignment.pk,
        "active": active.sentence.pk if active else None,
        "sentences": sentences,
        # Characters of scripts written without spaces (Chinese, Japanese): evidence snaps to each of them
        # alone, where a drag inside a word of a spaced script takes the whole word (domain/languages.py).
        "unspaced": [list(pair) for pair in UNSPACED_RANGES],
        # lang and dir of the texts the page draws itself (the active sentence, evidence quotes).
        "text_attributes": text_attributes(text_language(state["dialogue"].language, project.default_language)),
        "urls": {
            "sync": reverse("annotate_sync", args=[assignment.pk]),
            "submit": reverse("annotate_act", args=[assignment.pk, "submit"]),
            "panel": reverse("annotate", args=[assignment.pk]),
        },
    }


_DESCRIPTIONS: ProtocolCache[str] = ProtocolCache()  # by protocol document (its checksum), bounded


def _description_json(assignment) -> str:
    """The project's protocol as data (``describe``), each node marked with whether its answers need evidence;
    as JSON, written once per protocol document (both are read from the document alone)."""
    protocol = protocol_for_assignment(assignment)

    def describe() -> str:
        described = protocol.describe(node_extras=lambda path: {"evidence": evidence_required(protocol, path)})
        return json.dumps(described, cls=DjangoJSONEncoder)

    return _DESCRIPTIONS.get_or_make(protocol.checksum, describe)


def _prelabels(project, assignment) -> dict[int, dict]:
    """The pre-labeler's label of each sentence (latest finished job), only when the project shows them.

    The pre-labeler app builds on this one and registers the reading (see annotator/extensions.py)."""
    if not project.show_prelabels:
        return {}
    read = reading(protocol_for_assignment(assignment))
    return {
        prediction.sentence_id: {"label": prediction.label, "display": read.label_name(prediction.label)}
        for prediction in extensions.prelabels_for_annotator(project, assignment.turn) if prediction.label
    }
