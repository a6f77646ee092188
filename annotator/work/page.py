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

from django.urls import reverse

from .. import extensions
from ..domain import protocol
from ..domain.evidence import to_browser_offset
from ..domain.languages import UNSPACED_RANGES, text_attributes, text_language
from .services import evidence_required
from ..domain.vocabulary import Label, ProtocolMode
from .selectors import _PROJECT_EXAMPLES


def reference_offset_to_browser(reference: str, offset: int) -> int:
    """The inverse of ``browser_offset_to_reference``: a browser counts UTF-16 units and reads CR LF as one character."""
    return to_browser_offset(reference, offset)


def annotation_page_data(assignment, state: dict) -> dict:
    """The page's data for the screen state ``state`` (from ``screen_state``)."""
    project = assignment.project
    reference = state["dialogue"].reference
    examples: dict[str, dict[str, list]] = {}
    if project.protocol_mode != ProtocolMode.INDEPENDENT:
        for example, _ in _PROJECT_EXAMPLES.fetch_all([project.pk]):
            side = "positive" if example.is_positive else "negative"
            examples.setdefault(example.step, {"positive": [], "negative": []})[side].append(
                {"text": example.text, "explanation": example.explanation})
    prelabels = _prelabels(project, assignment.turn)
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
        "protocol": protocol.describe(node_extras=lambda path: {"evidence": evidence_required(path)}),
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


def _prelabels(project, turn) -> dict[int, dict]:
    """The pre-labeler's label of each sentence (latest finished job), only when the project shows them.

    The pre-labeler app builds on this one and registers the reading (see annotator/extensions.py)."""
    if not project.show_prelabels:
        return {}
    return {
        prediction.sentence_id: {"label": prediction.label, "display": Label(prediction.label).label}
        for prediction in extensions.prelabels_for_annotator(project, turn) if prediction.label
    }
