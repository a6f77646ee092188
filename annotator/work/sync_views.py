"""Background saving of the annotation page: a batch of finished sentences in one JSON POST.

The page (static/js/workspace.js) keeps the annotator's answers in an outbox in
localStorage and sends them here, in order, one change per sentence, several
at once when several are waiting. The body is validated strictly (anything
malformed is a 400 with a message, never a 500); each change is written by
``services.sentence_save.annotation_save_sentence`` in one transaction for the
whole batch, so a batch is applied completely or not at all. A retried batch is
recognised by its request ids and applied once.

Answers: 200 ``{"version", "chained", "saved": [{"request_id", "sentence", "label", "evidence"}]}``:
``version`` is where the batch's own changes led from the version it carried,
nothing else written in between or since, so the page moves its queued changes
made on the batch's version to ``version`` (``chained`` is always true; pages
loaded before it was read it). A batch entirely applied before (its answer was
lost) is answered so only while its last change is still the slot's version
(its ``save`` event records the version it reached); once anything moved the
version (another tab, a lead's split, merge, reset, reopen, release) it is a 409:
a change never rides on a write it has not seen, nor onto units it has not seen.
409 ``{"error", "version"}`` when another tab or window changed the turn (nothing
written); 422 ``{"error", "sentence"}`` when a change is refused (a submitted turn).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from django.db import transaction
from django.http import Http404, JsonResponse
from django.views.decorators.http import require_POST

from ..domain import protocol
from ..access import access_assignment, role_in
from ..models import AnnotationEvent, Sentence
from .page import reference_offset_to_browser
from .selectors import browser_offset_to_reference
from .write import AnnotationError, VersionConflict
from .sentence_save import STEP_ACTIONS, StepTaken, annotation_save_sentence

MAX_CHANGES = 100
MAX_STEPS = 200
MAX_SPANS = 100
MAX_BODY = 1_000_000
REQUEST_ID = re.compile(r"^[A-Za-z0-9_-]{8,40}$")
CHANGE_KEYS = {"request_id", "sentence", "steps", "path", "note", "evidence", "seconds"}


class Malformed(ValueError):
    """The body is not a batch of changes as the page sends them."""


@require_POST
def sync(request, assignment_id):
    assignment = access_assignment(request.user, assignment_id)
    if role_in(request.user, assignment.project) is None:
        raise Http404("No such assignment")
    try:
        version, changes = _parse(request.body, assignment)
    except Malformed as error:
        return JsonResponse({"error": str(error)}, status=400)
    saved, current, expected, reached = [], assignment, version, None
    try:
        with transaction.atomic():
            for change in changes:
                if expected is None and not _seen(current, change["request_id"]):
                    # A batch sent again after its answer was lost: the changes before this one were applied
                    # then. This one is new, and made on the page's copy: only valid if nothing was written since.
                    if current.version != reached:
                        raise VersionConflict(current.version)
                    expected = current.version
                outcome = annotation_save_sentence(current, actor=request.user, expected_version=expected, **change)
                outcome.assignment.project, outcome.assignment.turn = assignment.project, assignment.turn
                current = outcome.assignment
                # After a replay, the next change is looked up by its request id (no version to compare).
                expected = None if outcome.replayed else current.version
                reached = version_reached(outcome)
                saved.append(_saved(change, outcome, assignment.turn.dialogue.reference))
            if current.version != reached:
                # Every change was applied before (the answer was lost), and the slot's version moved on since:
                # another tab, a lead's split, merge, reset, reopen or release. What the page still queues was made
                # on units or answers it has not seen.
                raise ChangedSince(current.version)
    except ChangedSince as conflict:
        return JsonResponse({"error": "This tab's changes were saved earlier, but the turn was changed since (in "
                                      "another tab or window, or its units by a project lead); the changes still "
                                      "kept here were not written. Reload to see what is saved.",
                             "version": conflict.current_version}, status=409)
    except VersionConflict as conflict:
        return JsonResponse({"error": "This turn was changed in another tab or window; nothing of this tab's "
                                      "unsaved work was written.", "version": conflict.current_version}, status=409)
    except AnnotationError as error:
        return JsonResponse({"error": str(error), "sentence": change["sentence"].pk}, status=422)
    # ``chained``: kept for pages loaded before it was always true (a 200 now always continues from ``version``).
    return JsonResponse({"version": current.version, "chained": True, "saved": saved})


class ChangedSince(VersionConflict):
    """A batch applied before whose slot was written since: the page's queued changes were made on an old copy."""


def version_reached(outcome) -> int | None:
    """The version the change of ``outcome`` led to: now, or when it was first applied (its ``save`` event says)."""
    if not outcome.replayed:
        return outcome.assignment.version
    new = outcome.event.new if outcome.event is not None else None
    # A save recorded before versions were kept in its event cannot prove its chain: treated as changed since.
    return new.get("version") if isinstance(new, dict) else None


def _seen(assignment, request_id: str) -> bool:
    return AnnotationEvent.objects.filter(assignment_id=assignment.pk, request_id=request_id).exists()


def _saved(change: dict, outcome, reference: str) -> dict:
    annotation = outcome.annotation
    spans = list(annotation.evidence.order_by("start", "id")) if annotation is not None and annotation.pk else []
    return {
        "request_id": change["request_id"],
        "sentence": change["sentence"].pk,
        "label": annotation.label if annotation is not None else "",
        "evidence": [{"id": s.pk, "start": reference_offset_to_browser(reference, s.start),
                      "end": reference_offset_to_browser(reference, s.end), "text": s.text} for s in spans],
    }


# --- strict validation of the body ----------------------------------------------------------------

def _parse(body: bytes, assignment) -> tuple[int, list[dict]]:
    if len(body) > MAX_BODY:
        raise Malformed("The batch is too large.")
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise Malformed("The body is not JSON.") from None
    if not isinstance(data, dict) or set(data) != {"version", "changes"}:
        raise Malformed("Expected an object with exactly 'version' and 'changes'.")
    version = _integer(data["version"], "version")
    changes = data["changes"]
    if not isinstance(changes, list) or not 1 <= len(changes) <= MAX_CHANGES:
        raise Malformed(f"'changes' must be a list of 1 to {MAX_CHANGES} changes.")
    ids = [_integer(c.get("sentence"), "sentence") if isinstance(c, dict) else None for c in changes]
    sentences = Sentence.objects.filter(turn_id=assignment.turn_id, pk__in=[i for i in ids if i is not None]).in_bulk()
    reference = assignment.turn.dialogue.reference
    parsed, seen = [], set()
    for position, change in enumerate(changes, start=1):
        where = f"change {position}"
        if not isinstance(change, dict) or not set(change) <= CHANGE_KEYS or not {"request_id", "sentence"} <= set(change):
            raise Malformed(f"{where}: expected an object with request_id, sentence and only {sorted(CHANGE_KEYS)}.")
        request_id = change["request_id"]
        if not isinstance(request_id, str) or not REQUEST_ID.match(request_id) or request_id in seen:
            raise Malformed(f"{where}: request_id must be 8-40 letters, digits, '-' or '_', unique in the batch.")
        seen.add(request_id)
        sentence = sentences.get(ids[position - 1])
        if sentence is None:
            raise Malformed(f"{where}: sentence {change['sentence']} is not part of this turn.")
        parsed.append({
            "request_id": request_id,
            "sentence": sentence,
            "steps": _steps(change.get("steps", []), where),
            "path": _path(change.get("path"), where),
            "note": _optional_text(change.get("note"), f"{where}: note"),
            "evidence": _evidence(change.get("evidence"), reference, where),
            "seconds": _seconds(change.get("seconds", 0), where),
        })
    return version, parsed


def _integer(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise Malformed(f"'{name}' must be a non-negative integer.")
    return value


def _steps(steps, where: str) -> list[StepTaken]:
    if not isinstance(steps, list) or len(steps) > MAX_STEPS:
        raise Malformed(f"{where}: 'steps' must be a list of at most {MAX_STEPS} steps.")
    taken = []
    for step in steps:
        if not isinstance(step, dict) or not set(step) <= {"action", "step", "value", "at"} \
                or step.get("action") not in STEP_ACTIONS:
            raise Malformed(f"{where}: each step is an object with action ({', '.join(STEP_ACTIONS)}), step, value, at.")
        name, value, at = step.get("step", ""), step.get("value", ""), step.get("at")
        if not isinstance(name, str) or not isinstance(value, str) or len(name) > 40 or len(value) > 40:
            raise Malformed(f"{where}: a step's 'step' and 'value' are short strings.")
        if at is not None and (isinstance(at, bool) or not isinstance(at, (int, float)) or not 0 <= at < 1e14):
            raise Malformed(f"{where}: a step's 'at' is a time in milliseconds since 1970.")
        moment = datetime.fromtimestamp(at / 1000, tz=timezone.utc) if at is not None else None
        taken.append(StepTaken(step["action"], name, value, moment))
    return taken


def _path(path, where: str) -> dict | None:
    if path is None:
        return None
    if not isinstance(path, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in path.items()):
        raise Malformed(f"{where}: 'path' maps steps to answers (strings).")
    try:
        protocol.validate(path)
    except protocol.ProtocolError as error:
        raise Malformed(f"{where}: {error}") from None
    return path


def _optional_text(value, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise Malformed(f"{where} must be a string or null.")
    return value


def _evidence(spans, reference: str, where: str) -> list[tuple[int, int]] | None:
    if spans is None:
        return None
    if not isinstance(spans, list) or len(spans) > MAX_SPANS:
        raise Malformed(f"{where}: 'evidence' must be a list of at most {MAX_SPANS} spans.")
    found = []
    for span in spans:
        if not isinstance(span, dict) or set(span) - {"start", "end", "id", "text"} or not {"start", "end"} <= set(span):
            raise Malformed(f"{where}: each evidence span is an object with start and end.")
        start, end = _integer(span["start"], "start"), _integer(span["end"], "end")
        found.append((browser_offset_to_reference(reference, start), browser_offset_to_reference(reference, end)))
    return found


def _seconds(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise Malformed(f"{where}: 'seconds' must be a non-negative number.")
    return float(value)
