"""The annotation workspace: an annotator's queue, the annotation screen, the lead's assignment list.

Views are thin: fetch through ``annotator.access`` (another annotator's
assignment is a 404), call a service, render the page or, for htmx requests,
the named partial. Every write is a POST (CSRF-checked by Django's middleware).
"""

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from ..access import access_project, access_project_as_lead, may_annotate, turn_name
from .forms import ACTION_FORMS, ReassignForm, ReleaseForm, ReleaseStaleForm, SentenceQueryForm
from ..models import Assignment, Membership
from .page import annotation_page_script
from .panel_actions import panel_act
from ..projects.selectors import project_progress
from .selectors import browser_offset_to_reference, lead_assignments, queue_for, screen_state, turn_sentence
from . import services as annotation_services
from .assignment import SLOTS_REFUSED_MESSAGE, AssignmentError, SlotsRefused, assignment_next, assignment_reassign, assignment_release, assignment_release_stale
from ..qa.qualification import Status as QualificationStatus
from ..qa.qualification import qualification_may_work, qualification_state
from ..domain.vocabulary import Role
from ..views.common import assignment_for, bad_request

PANEL_TEMPLATE = "workspace/partials/panel.html"


# --- annotator queue ------------------------------------------------------------------------------

@require_GET
def queue(request, slug):
    project = access_project(request.user, slug)
    context = {"project": project, "progress": project_progress(project), **queue_for(project, request.user)}
    if not may_annotate(request.user, project):
        # An adjudicator where the project keeps them out of annotation: only a slot already held goes on.
        context["has_more_work"] = bool(context["unfinished"])
        if not context["unfinished"]:
            messages.info(request, SLOTS_REFUSED_MESSAGE)
    return render(request, "workspace/queue.html", context)


@require_POST
def next_item(request, slug):
    """Start / Continue: the annotator's unfinished assignment, or a newly claimed slot."""
    return redirect(_work_goes_on(request, access_project(request.user, slug)))


def _work_goes_on(request, project) -> str:
    """Where Start / Continue leads: the screen of the user's unfinished or newly claimed slot; else the queue
    (or the qualification's score) with a message saying why."""
    try:
        assignment = assignment_next(project, request.user)
    except SlotsRefused as refused:
        messages.error(request, str(refused))
        return reverse("workspace_queue", args=[project.slug])
    if assignment is None and not qualification_may_work(project, request.user):
        messages.error(request, "Your qualification attempt did not reach the pass mark; a project lead can allow a retry.")
        return reverse("qa:qualification_score", args=[project.slug])
    if assignment is None:
        messages.info(request, "There is no turn left for you in this project. Thank you!")
        return reverse("workspace_queue", args=[project.slug])
    return reverse("annotate", args=[assignment.pk])


# --- the annotation screen ------------------------------------------------------------------------

@require_GET
def annotate(request, assignment_id):
    """The annotation screen; with htmx and ``?sentence=``, only the decision panel of that sentence."""
    assignment = assignment_for(request, assignment_id)
    query = SentenceQueryForm(request.GET)
    if not query.is_valid():
        return bad_request(request, query, back_url=reverse("annotate", args=[assignment.pk]))
    state = screen_state(assignment, sentence_id=query.cleaned_data["sentence"])
    if request.htmx:
        return render(request, PANEL_TEMPLATE, {**state, "oob": True, "refresh_reference": True})
    return render(request, "workspace/annotate.html", {**state, "page_script": annotation_page_script(assignment, state)})


@require_POST
def act(request, assignment_id, action):
    """One change to the annotator's assignment; answers with the decision panel (htmx) or a redirect."""
    return panel_act(request, assignment_id, action, forms=ACTION_FORMS, needs_sentence=lambda name: name != "submit",
                     find_sentence=turn_sentence, perform=_perform, render_panel=_render_panel)


def _perform(request, assignment, sentence, action, form):
    """The service of one decision-panel action: ``(outcome, message)``, or the answer itself."""
    data = form.cleaned_data
    if action == "time":
        annotation_services.annotation_record_time(assignment, sentence, data["seconds"])
        return HttpResponse(status=204)
    common = {"actor": request.user, **form.common()}
    message = ""
    if action == "answer":
        outcome = annotation_services.annotation_answer_step(assignment, sentence, data["step"], data["value"], **common)
    elif action == "pick":
        outcome = annotation_services.annotation_pick_label(assignment, sentence, data["label"], **common)
    elif action == "undo":
        outcome = annotation_services.annotation_undo(assignment, sentence, **common)
    elif action == "note":
        outcome = annotation_services.annotation_set_note(assignment, sentence, data["note"], **common)
        message = "Note saved."
    elif action == "evidence_add":
        reference = assignment.turn.dialogue.reference
        start = browser_offset_to_reference(reference, data["start"])
        end = browser_offset_to_reference(reference, data["end"])
        outcome = annotation_services.annotation_evidence_add(assignment, sentence, start, end, **common)
    elif action == "evidence_remove":
        outcome = annotation_services.annotation_evidence_remove(assignment, sentence, data["evidence"], **common)
    else:
        annotation_services.assignment_submit(assignment, **common)
        project = assignment.project
        messages.success(request, f"Turn submitted ({turn_name(request.user, assignment.turn, project)}). Thank you!")
        if assignment.is_qualification:
            # Back to the queue, whose notice says where the attempt stands, or to the score once it was scored.
            scored = qualification_state(project, request.user).status in (QualificationStatus.PASSED,
                                                                           QualificationStatus.FAILED)
            target = reverse("qa:qualification_score" if scored else "workspace_queue", args=[project.slug])
        elif data["then"] == form.QUEUE or not may_annotate(request.user, project):
            target = reverse("workspace_queue", args=[project.slug])
        else:  # straight on to the next turn, as Start would (the submit is saved whatever happens here)
            target = _work_goes_on(request, project)
        return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
    return outcome, message


def _render_panel(request, assignment, action, sentence, outcome, status, message):
    """The decision panel after an action on ``sentence`` (with ``message``, an error when ``status`` >= 400).

    A sentence that has just received its label passes the panel on to the next one without a label."""
    acted = sentence
    event = outcome.event if outcome is not None else None
    advance_from = None
    if event is not None and event.action in ("answer", "pick") and event.new and event.new.get("label") \
            and not (event.old or {}).get("label"):
        advance_from = sentence.pk
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
    form = ReleaseForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("workspace_lead", args=[project.slug]))
    try:
        assignment_release(assignment, actor=request.user, reason=form.cleaned_data["reason"] or "released by a lead")
        messages.success(request, f"Released {assignment.annotator.get_username()}'s slot on {turn_name(request.user, assignment.turn, project)}.")
    except AssignmentError as error:
        messages.error(request, str(error))
    return redirect("workspace_lead", slug=project.slug)


@require_POST
def lead_reassign(request, slug, assignment_id):
    project = access_project_as_lead(request.user, slug)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project=project)
    form = ReassignForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("workspace_lead", args=[project.slug]))
    target = get_object_or_404(
        get_user_model(), pk=form.cleaned_data["annotator"],
        memberships__project=project, memberships__role=Role.ANNOTATOR,
    )
    try:
        assignment_reassign(assignment, target, actor=request.user)
        messages.success(request, f"Reassigned {turn_name(request.user, assignment.turn, project)} to {target.get_username()}.")
    except AssignmentError as error:
        messages.error(request, str(error))
    return redirect("workspace_lead", slug=project.slug)


@require_POST
def lead_release_stale(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = ReleaseStaleForm(request.POST, stale_choices=STALE_CHOICES)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("workspace_lead", args=[project.slug]))
    idle = STALE_CHOICES[form.cleaned_data["stale"] or "24"]
    count = assignment_release_stale(project, actor=request.user, max_idle=idle)
    messages.success(request, f"Released {count} assignment(s) idle for more than {idle}.")
    return redirect("workspace_lead", slug=project.slug)
