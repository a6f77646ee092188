"""The annotation workspace: an annotator's queue, the annotation screen, the lead's assignment list.

Views are thin: fetch through ``annotator.access`` (another annotator's
assignment is a 404), call a service, render the page or, for htmx requests,
the named partial. Every write is a POST (CSRF-checked by Django's middleware).
"""

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from ..access import access_assignment, access_project, access_project_as_lead, role_in
from ..models import Assignment, Membership
from ..selectors.projects import project_progress
from ..selectors.workspace import browser_offset_to_reference, lead_assignments, queue_for, screen_state, turn_sentence
from ..services import annotation as annotation_services
from ..services.assignment import (
    AssignmentError,
    assignment_next,
    assignment_reassign,
    assignment_release,
    assignment_release_stale,
)
from ..services.qualification import Status as QualificationStatus
from ..services.qualification import qualification_may_work, qualification_state
from ..vocabulary import Role

PANEL_TEMPLATE = "workspace/partials/panel.html"


# --- annotator queue ------------------------------------------------------------------------------

@require_GET
def queue(request, slug):
    project = access_project(request.user, slug)
    context = {"project": project, "progress": project_progress(project), **queue_for(project, request.user)}
    return render(request, "workspace/queue.html", context)


@require_POST
def next_item(request, slug):
    """Start / Continue: the annotator's unfinished assignment, or a newly claimed slot."""
    project = access_project(request.user, slug)
    assignment = assignment_next(project, request.user)
    if assignment is None and not qualification_may_work(project, request.user):
        messages.error(request, "Your qualification attempt did not reach the pass mark; a project lead can allow a retry.")
        return redirect("qa:qualification_score", slug=project.slug)
    if assignment is None:
        messages.info(request, "There is no turn left for you in this project. Thank you!")
        return redirect("workspace_queue", slug=project.slug)
    return redirect("annotate", assignment_id=assignment.pk)


# --- the annotation screen ------------------------------------------------------------------------

def _assignment_for(request, assignment_id) -> Assignment:
    assignment = access_assignment(request.user, assignment_id)
    if role_in(request.user, assignment.project) is None:
        raise Http404("No such assignment")
    return assignment


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@require_GET
def annotate(request, assignment_id):
    """The annotation screen; with htmx and ``?sentence=``, only the decision panel of that sentence."""
    assignment = _assignment_for(request, assignment_id)
    state = screen_state(assignment, sentence_id=_int_or_none(request.GET.get("sentence")))
    if request.htmx:
        return render(request, PANEL_TEMPLATE, {**state, "oob": True, "refresh_reference": True})
    return render(request, "workspace/annotate.html", state)


ACTIONS = {"answer", "pick", "undo", "note", "evidence_add", "evidence_remove", "submit", "time"}


@require_POST
def act(request, assignment_id, action):
    """One change to the annotator's assignment; answers with the decision panel (htmx) or a redirect."""
    if action not in ACTIONS:
        raise Http404("No such action")
    assignment = _assignment_for(request, assignment_id)
    data = request.POST
    sentence = None
    sentence_id = _int_or_none(data.get("sentence"))
    if action != "submit":
        sentence = turn_sentence(assignment, sentence_id)
        if sentence is None:
            raise Http404("No such sentence in this turn")
    if action == "time":
        annotation_services.annotation_record_time(assignment, sentence, data.get("seconds"))
        return HttpResponse(status=204)
    common = {
        "actor": request.user,
        "request_id": data.get("request_id", ""),
        "expected_version": _int_or_none(data.get("version")),
    }
    if action != "submit":
        common["seconds"] = data.get("seconds", 0)
    status, message, advance_from, acted = 200, "", None, sentence
    try:
        if action == "answer":
            outcome = annotation_services.annotation_answer_step(
                assignment, sentence, data.get("step", ""), data.get("value", ""), **common)
        elif action == "pick":
            outcome = annotation_services.annotation_pick_label(assignment, sentence, data.get("label", ""), **common)
        elif action == "undo":
            outcome = annotation_services.annotation_undo(assignment, sentence, **common)
        elif action == "note":
            outcome = annotation_services.annotation_set_note(assignment, sentence, data.get("note", ""), **common)
            message = "Note saved."
        elif action == "evidence_add":
            reference = assignment.turn.dialogue.reference
            start = browser_offset_to_reference(reference, _int_or_none(data.get("start")) or 0)
            end = browser_offset_to_reference(reference, _int_or_none(data.get("end")) or 0)
            outcome = annotation_services.annotation_evidence_add(assignment, sentence, start, end, **common)
        elif action == "evidence_remove":
            outcome = annotation_services.annotation_evidence_remove(
                assignment, sentence, _int_or_none(data.get("evidence")), **common)
        else:
            outcome = annotation_services.assignment_submit(assignment, **common)
            messages.success(request, f"Turn submitted ({assignment.turn}). Thank you!")
            target = reverse("workspace_queue", args=[assignment.project.slug])
            if assignment.is_qualification and qualification_state(assignment.project, request.user).status in (
                    QualificationStatus.PASSED, QualificationStatus.FAILED):
                target = reverse("qa:qualification_score", args=[assignment.project.slug])  # the attempt was scored
            return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
        assignment = _keep_loaded(outcome.assignment, assignment)
        event = outcome.event
        if event is not None and event.action in ("answer", "pick") and event.new and event.new.get("label") \
                and not (event.old or {}).get("label"):
            advance_from = sentence.pk
    except annotation_services.VersionConflict as conflict:
        status, message = 409, str(conflict)
        assignment = _assignment_for(request, assignment_id)
    except annotation_services.AnnotationError as error:
        status, message = 422, str(error)
        assignment = _assignment_for(request, assignment_id)
    if not request.htmx:
        if message:
            (messages.error if status >= 400 else messages.info)(request, message)
        url = reverse("annotate", args=[assignment.pk])
        return redirect(f"{url}?sentence={sentence.pk}" if sentence else url)
    state = screen_state(assignment, sentence_id=sentence.pk if sentence else None, advance_from=advance_from)
    acted_row = next((row for row in state["rows"] if acted and row.sentence.pk == acted.pk), None)
    # The reference is sent again only when its highlights change: evidence added or removed,
    # or the panel moved on from a sentence with evidence to another one.
    active = state["active"]
    moved = active is not None and acted_row is not None and active is not acted_row
    refresh_reference = action.startswith("evidence") or status == 409 or (
        moved and bool(acted_row.evidence or active.evidence))
    context = {**state, "oob": True, "message": message, "message_is_error": status >= 400, "acted_row": acted_row,
               "refresh_reference": refresh_reference}
    return render(request, PANEL_TEMPLATE, context, status=status)


def _keep_loaded(fresh: Assignment, loaded: Assignment) -> Assignment:
    """The saved assignment with the project, turn and dialogue already fetched for this request."""
    fresh.project = loaded.project
    fresh.turn = loaded.turn
    return fresh


# --- lead: who holds what -------------------------------------------------------------------------

STALE_CHOICES = {"4": timedelta(hours=4), "24": timedelta(hours=24), "72": timedelta(hours=72)}


@require_GET
def lead_assignments_page(request, slug):
    project = access_project_as_lead(request.user, slug)
    show = "all" if request.GET.get("show") == "all" else "open"
    stale_key = request.GET.get("stale", "24") if request.GET.get("stale") in STALE_CHOICES else "24"
    context = {
        "project": project,
        "show": show,
        "stale_key": stale_key,
        "stale_choices": STALE_CHOICES,
        "annotators": Membership.objects.filter(project=project, role=Role.ANNOTATOR).select_related("user").order_by("user__username"),
        **lead_assignments(project, show=show, stale_after=STALE_CHOICES[stale_key]),
    }
    return render(request, "workspace/lead.html", context)


@require_POST
def lead_release(request, slug, assignment_id):
    project = access_project_as_lead(request.user, slug)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project=project)
    try:
        assignment_release(assignment, actor=request.user, reason=request.POST.get("reason", "released by a lead"))
        messages.success(request, f"Released {assignment.annotator.get_username()}'s slot on {assignment.turn}.")
    except AssignmentError as error:
        messages.error(request, str(error))
    return redirect("workspace_lead", slug=project.slug)


@require_POST
def lead_reassign(request, slug, assignment_id):
    project = access_project_as_lead(request.user, slug)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project=project)
    target = get_object_or_404(
        get_user_model(), pk=_int_or_none(request.POST.get("annotator")),
        memberships__project=project, memberships__role=Role.ANNOTATOR,
    )
    try:
        assignment_reassign(assignment, target, actor=request.user)
        messages.success(request, f"Reassigned {assignment.turn} to {target.get_username()}.")
    except AssignmentError as error:
        messages.error(request, str(error))
    return redirect("workspace_lead", slug=project.slug)


@require_POST
def lead_release_stale(request, slug):
    project = access_project_as_lead(request.user, slug)
    key = request.POST.get("stale", "24")
    idle = STALE_CHOICES.get(key, STALE_CHOICES["24"])
    count = assignment_release_stale(project, actor=request.user, max_idle=idle)
    messages.success(request, f"Released {count} assignment(s) idle for more than {idle}.")
    return redirect("workspace_lead", slug=project.slug)
