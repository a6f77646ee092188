"""The finer views: triplet and severity panels of the annotation screen, triplet disputes, claims reports.

Thin views: fetch through ``annotator.access``, call a service, render a
partial. The panels' writes go through the workspace's write frame, so the
assignment version they bump is returned (``X-Assignment-Version``) for the
screen to carry on without a conflict.
"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from ..access import access_project_as_adjudicator, access_project_as_lead, access_turn_not_blind
from .forms import PANEL_FORMS, TURN_TRIPLET_FORMS, DisputeResolveForm
from ..models import Assignment, ClaimTriplet, Sentence, TripletAdjudication
from . import selectors as claims_selectors
from ..work.panel_actions import panel_act
from ..work.selectors import screen_state
from . import services as claims_services
from ..work.write import AnnotationError
from ..domain.vocabulary import Severity, TripletLabel
from ..views.common import assignment_for, bad_request, blind_refusal
from ..domain.protocol.groups import reading
from ..domain.protocol.wording import label_names
from ..projects.protocols import protocol_for

TRIPLET_ACTIONS = {"triplet_label", "triplet_add", "triplet_edit", "triplet_delete"}
SENTENCE_ACTIONS = {"severity", "error_type"}
WORKSPACE_PANEL = "workspace/partials/panel.html"


@require_GET
def triplet_panel(request, assignment_id):
    """The triplet panel alone (htmx refresh, e.g. after a conflict)."""
    assignment = assignment_for(request, assignment_id)
    return _render_triplets(request, assignment)


def _render_triplets(request, assignment, message="", status=200):
    context = {
        "assignment": assignment, "project": assignment.project, "enabled": assignment.project.enable_triplets,
        "closed": assignment.status not in (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS),
        "message": message, "message_is_error": status >= 400,
        **(claims_selectors.triplet_panel(assignment, request.user) if assignment.project.enable_triplets else {}),
    }
    response = render(request, "claims/partials/triplet_panel.html", context, status=status)
    response["X-Assignment-Version"] = str(assignment.version)
    return response


@require_POST
def act(request, assignment_id, action):
    """One change from a claims panel. Triplet actions answer with the triplet panel, sentence ones with the decision panel."""
    return panel_act(request, assignment_id, action, forms=PANEL_FORMS, needs_sentence=SENTENCE_ACTIONS.__contains__,
                     find_sentence=_turn_sentence, perform=_perform, render_panel=_render_panel)


def _turn_sentence(assignment, sentence_id):
    return get_object_or_404(Sentence, pk=sentence_id, turn_id=assignment.turn_id)


def _perform(request, assignment, sentence, action, form):
    """The service of one claims-panel action: ``(outcome, message)``."""
    data = form.cleaned_data
    common = {"actor": request.user, **form.common()}
    if action == "triplet_label":
        return claims_services.triplet_label_set(assignment, data["triplet"], data["label"], **common), ""
    if action == "triplet_add":
        return claims_services.assignment_triplet_add(
            assignment, head=data["head"], relation=data["relation"], tail=data["tail"],
            sentence=data["sentence"], **common), "Triplet added."
    if action == "triplet_edit":
        return claims_services.assignment_triplet_edit(
            assignment, data["triplet"], head=data["head"], relation=data["relation"], tail=data["tail"],
            sentence=data["sentence"], **common), "Triplet saved."
    if action == "triplet_delete":
        return claims_services.assignment_triplet_delete(assignment, data["triplet"], **common), "Triplet deleted."
    if action == "severity":
        return claims_services.annotation_set_severity(
            assignment, sentence, data["severity"], data["justification"], **common), "Severity saved."
    return claims_services.annotation_set_error_type(assignment, sentence, data["error_type"], **common), "Error type saved."


def _render_panel(request, assignment, action, sentence, outcome, status, message):
    """The triplet panel after a triplet action; the decision panel of the sentence after a sentence action."""
    if action in TRIPLET_ACTIONS:
        return _render_triplets(request, assignment, message, status)
    state = screen_state(assignment, sentence_id=sentence.pk)
    context = {**state, "oob": True, "message": message, "message_is_error": status >= 400,
               "acted_row": state["active"]}
    response = render(request, WORKSPACE_PANEL, context, status=status)
    response["X-Assignment-Version"] = str(assignment.version)
    return response


# --------------------------------------------------------------------------- triplet disputes


@require_GET
def disputes(request, slug):
    project = access_project_as_adjudicator(request.user, slug)
    show = "resolved" if request.GET.get("show") == "resolved" else "open"
    status = TripletAdjudication.Status.RESOLVED if show == "resolved" else TripletAdjudication.Status.OPEN
    return render(request, "claims/disputes.html", {
        "project": project, "show": show,
        "disputes": claims_selectors.triplet_disputes(project, request.user, status),
    })


@require_POST
def dispute_resolve(request, slug, adjudication_id):
    project = access_project_as_adjudicator(request.user, slug)
    adjudication = get_object_or_404(TripletAdjudication, pk=adjudication_id, turn__dialogue__project=project)
    back = f"{reverse('claims_disputes', args=[project.slug])}#dispute-{adjudication.pk}"
    form = DisputeResolveForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=back)
    try:
        claims_services.triplet_adjudication_resolve(
            adjudication, request.user, label=form.cleaned_data["label"], reason=form.cleaned_data["reason"])
        messages.success(request, f"Triplet {adjudication.triplet} decided.")
    except AnnotationError as error:
        messages.error(request, str(error))
    return redirect(back)


# --------------------------------------------------------------------------- lead: triplets of a turn


@require_GET
def turn_triplets(request, slug, turn_id):
    project = access_project_as_lead(request.user, slug)
    turn = access_turn_not_blind(request.user, project, turn_id)
    return render(request, "claims/turn_triplets.html", {
        "project": project, "turn": turn,
        "triplets": ClaimTriplet.objects.filter(turn=turn).select_related("sentence", "gold")
        .prefetch_related("annotations"),
        "sentences": turn.sentences.order_by("index"),
        "label_choices": TripletLabel.choices,
    })


@require_POST
def turn_triplets_change(request, slug, turn_id):
    """A lead adds, edits, deletes a triplet of the turn or sets its gold label (``action``)."""
    project = access_project_as_lead(request.user, slug)
    turn = access_turn_not_blind(request.user, project, turn_id)
    back = reverse("claims_turn_triplets", args=[project.slug, turn.pk])
    action = request.POST.get("action", "")
    if action not in TURN_TRIPLET_FORMS:
        return bad_request(request, "Unknown action: add, edit, delete or override.", back_url=back)
    form = TURN_TRIPLET_FORMS[action](request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=back)
    data = form.cleaned_data
    try:
        if action == "add":
            claims_services.triplet_create(turn, head=data["head"], relation=data["relation"], tail=data["tail"],
                                           actor=request.user, sentence=data["sentence"])
            messages.success(request, "Triplet added.")
        else:
            triplet = get_object_or_404(ClaimTriplet, pk=data["triplet"], turn=turn)
            if action == "delete":
                claims_services.triplet_delete(triplet, actor=request.user)
                messages.success(request, "Triplet deleted.")
            elif action == "edit":
                claims_services.triplet_update(triplet, head=data["head"], relation=data["relation"],
                                               tail=data["tail"], actor=request.user, sentence=data["sentence"])
                messages.success(request, "Triplet saved.")
            else:
                claims_services.triplet_gold_override(triplet, request.user, label=data["label"],
                                                      reason=data["reason"])
                messages.success(request, "Gold label set.")
    except AnnotationError as error:
        messages.error(request, str(error))
    return redirect(back)


# --------------------------------------------------------------------------- reports


def _threshold(request, project):
    """The severity filter of the reports: the project's threshold by default, 'all' or 1-5 from the query."""
    value = request.GET.get("severity", "project")
    if value == "all":
        return None, "all"
    if value in {str(number) for number in Severity.values}:
        return int(value), value
    return project.severity_threshold, "project"


@require_GET
def reports(request, slug):
    project = access_project_as_adjudicator(request.user, slug)
    refused = blind_refusal(request, project)  # gold and annotations of turns the user is blind on are counted
    if refused:
        return refused
    threshold, choice = _threshold(request, project)
    rows = claims_selectors.hallucination_rows(project)
    context = {
        "project": project,
        "threshold": threshold,
        "choice": choice,
        "severity_choices": [{"value": s.value, "label": s.label} for s in Severity],
        "hallucinations": claims_selectors.hallucination_report(project, threshold, rows),
        "hallucinations_all": claims_selectors.hallucination_report(project, None, rows) if threshold else None,
        "triplets": claims_selectors.triplet_report(project),
        "error_types": claims_selectors.error_type_report(project),
        "evidence": claims_selectors.evidence_report(project),
        "prelabel_severity": claims_selectors.prelabel_severity_report(project),
        "severities": list(Severity),
        "names": _label_names(reading(protocol_for(project))),
    }
    return render(request, "claims/reports.html", context)


def _label_names(read) -> dict:
    """The names of the labels each report counts, from the project's document."""
    return {"hallucinated": label_names(read, read.hallucinated), "supported": label_names(read, read.supported_labels),
            "error_type": label_names(read, read.error_type_labels)}

