"""Background saving of the annotation page: a batch of finished sentences in one JSON POST.

The page (static/js/annotation_outbox.js) keeps the annotator's answers in an outbox in localStorage and
sends them here, in order, one change per sentence, several at once when several are waiting. The view only
wires: ``sync_serializers.validated_batch`` (a ``BatchSerializer`` built once) validates the body (anything malformed is a 400 naming the change
and the field, never a 500), ``batch_save.annotation_save_batch`` saves it (in one transaction, once: a batch
sent again is recognised by its request ids).

Answers: 200 ``{"version", "chained", "saved": [{"request_id", "sentence", "label"[, "evidence"]}]}``:
``version`` is where the batch's own changes led from the version it carried, nothing else written in between
or since, so the page moves its queued changes made on the batch's version to ``version`` (``chained`` is
always true; pages loaded before it was read it). ``evidence`` (the spans with their ids) comes back for the
changes that sent evidence. A batch entirely applied before (its answer was lost) is answered so only while
its last change is still the slot's version; once anything moved the version (another tab, a lead's split,
merge, reset, reopen, release, a change of the protocol before anything was labelled) it is a 409, like a batch
made on a stale copy: ``{"error", "version"}``, nothing written. 422 ``{"error", "sentence"}`` when a change is refused (a submitted turn).
"""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.views.decorators.http import require_POST
from rest_framework.serializers import ValidationError

from ..access import access_assignment, role_in
from ..json_input import JSONInputError, UnstorableTextError, json_loads_limited
from .batch_save import ChangedSince, ChangeRefused, annotation_save_batch
from .page import reference_offset_to_browser
from .sync_serializers import first_error, validated_batch
from .write import VersionConflict

MAX_BODY = 1_000_000
CHANGED_SINCE = ("This tab's changes were saved earlier, but since then the turn was changed in another tab or window "
                 "(or its units or the project's protocol by a project lead); the changes still kept here were not "
                 "written. Reload to see what is saved.")
STALE = ("This turn was changed in another tab or window (or its units or the project's protocol by a project lead); "
         "nothing of this tab's unsaved work was written.")


@require_POST
def sync(request, assignment_id):
    assignment = access_assignment(request.user, assignment_id)
    if role_in(request.user, assignment.project) is None:
        raise Http404("No such assignment")
    if len(request.body) > MAX_BODY:
        return JsonResponse({"error": "The batch is too large."}, status=400)
    try:
        data = json_loads_limited(request.body)
    except UnstorableTextError as refused:  # a lone surrogate: named as the serializer names a field (change 1: note: …)
        return JsonResponse({"error": first_error(_nested(refused.path, f"The text {refused.problem}."))}, status=400)
    except JSONInputError as refused:  # not JSON, not UTF-8, nested too deep, an integer of too many digits
        return JsonResponse({"error": str(refused)}, status=400)
    try:
        version, changes = validated_batch(assignment, data)
    except ValidationError as error:
        return JsonResponse({"error": first_error(error.detail)}, status=400)
    try:
        outcomes = annotation_save_batch(assignment, changes, version=version, actor=request.user)
    except ChangedSince as conflict:
        return JsonResponse({"error": CHANGED_SINCE, "version": conflict.current_version}, status=409)
    except VersionConflict as conflict:
        return JsonResponse({"error": STALE, "version": conflict.current_version}, status=409)
    except ChangeRefused as error:
        return JsonResponse({"error": str(error), "sentence": error.sentence.pk}, status=422)
    reference = assignment.turn.dialogue.reference
    saved = [_saved(change, outcome, reference) for change, outcome in zip(changes, outcomes)]
    return JsonResponse({"version": outcomes[-1].assignment.version, "chained": True, "saved": saved})


def _nested(path: list, message: str):
    """``message`` at ``path`` as DRF nests its errors (``{"changes": {0: {"note": [message]}}}``)."""
    errors = [message]
    for step in reversed(path):
        errors = {step: errors}
    return errors


def _saved(change, outcome, reference: str) -> dict:
    annotation = outcome.annotation
    saved = {"request_id": change.request_id, "sentence": change.sentence.pk,
             "label": annotation.label if annotation is not None else ""}
    if change.evidence is not None:  # the spans' ids, which the page keeps to remove one later
        spans = annotation.evidence.order_by("start", "id") if annotation is not None and annotation.pk else []
        saved["evidence"] = [{"id": s.pk, "start": reference_offset_to_browser(reference, s.start),
                              "end": reference_offset_to_browser(reference, s.end), "text": s.text} for s in spans]
    return saved
