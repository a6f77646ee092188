"""Adjudication queue and screen, gold history and lead overrides, annotation reopening."""

from django.contrib import messages
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from ..projects.protocols import protocol_for
from ..access import access_project_as_adjudicator, access_project_as_lead, is_blind_on, is_lead
from .forms import AdjudicationResolveForm, AdjudicationSettingsForm, GoldOverrideForm, ReopenForm
from ..models import Adjudication, Assignment, Sentence, Turn
from .selectors import adjudication_queue, adjudication_screen, dispute_for, gold_history, turn_assignments
from . import services as gold_services
from .services import GoldError, has_annotated
from ..projects.services import project_update_settings
from ..views.common import bad_request, polled, protocol_changed_answer


QUEUE_PAGE = 200  # oldest turns shown; deciding them brings the next ones up


def queue(request, slug):
    project = access_project_as_adjudicator(request.user, slug)
    queue_turns = adjudication_queue(project, request.user)
    lead = is_lead(request.user, project)
    context = {
        "project": project,
        "turns": list(queue_turns.filter(annotated_by_user=False)[:QUEUE_PAGE]),
        "waiting": queue_turns.filter(annotated_by_user=False).count(),
        "own_turns": queue_turns.filter(annotated_by_user=True).count(),
        "page_size": QUEUE_PAGE,
        "order": project.get_adjudication_order_display(),
        "settings_form": AdjudicationSettingsForm(initial={
            "adjudication_order": project.adjudication_order, "imported_gold": project.imported_gold,
            "drawn_turn_review": project.drawn_turn_review}) if lead else None,
    }
    return render(request, "gold/queue.html", context)


@require_POST
def queue_settings(request, slug):
    """A lead sets the queue's order and what imported gold is (then imported gold on disputed sentences stays
    or gives way as the setting says, for the turns derived from now on)."""
    project = access_project_as_lead(request.user, slug)
    form = AdjudicationSettingsForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("gold_queue", args=[slug]))
    project_update_settings(project, **form.cleaned_data)
    messages.success(request, "Adjudication settings saved.")
    return redirect("gold_queue", slug=slug)


@polled
@require_GET
def nav_badge(request):
    """The navigation's open-dispute badge, polled and fetched again when a dispute is decided on the page."""
    return render(request, "gold/partials/nav_badges.html")


def _turn(project, turn_id):
    return get_object_or_404(Turn.objects.select_related("dialogue"), pk=turn_id, dialogue__project=project)


def turn_screen(request, slug, turn_id):
    project = access_project_as_adjudicator(request.user, slug)
    turn = _turn(project, turn_id)
    if has_annotated(request.user, turn):
        # Nobody adjudicates a turn they annotated; nor do they see its disputes (blind while the slot is open).
        context = {"project": project, "turn": turn, "dialogue": turn.dialogue, "refused": True}
        return render(request, "gold/adjudicate.html", context, status=403)
    context = {"project": project, **adjudication_screen(project, turn, request.user)}
    context["refused"] = False
    # The project's protocol, walked in the page by static/js/adjudication.js.
    context["protocol_description"] = protocol_for(project).describe()
    # The next turn waiting in the queue, to move on once this one is done.
    context["next_turn"] = (
        adjudication_queue(project, request.user).filter(annotated_by_user=False).exclude(pk=turn.pk).first()
    )
    status = 403 if context["refused"] else 200
    return render(request, "gold/adjudicate.html", context, status=status)


def _adjudication(project, adjudication_id):
    return get_object_or_404(
        Adjudication.objects.select_related("sentence", "turn__dialogue"),
        pk=adjudication_id,
        turn__dialogue__project=project,
    )


ANNOTATED_REFUSAL = "You annotated this turn, so someone else must adjudicate it."


def _adjudication_for_judge(request, project, adjudication_id):
    """A dispute the user may decide, or a 403 answer: never one on a turn they annotated (its sides and
    the draft are not shown to them either, even in the error)."""
    adjudication = _adjudication(project, adjudication_id)
    if has_annotated(request.user, adjudication.turn):
        return adjudication, HttpResponseForbidden(ANNOTATED_REFUSAL, content_type="text/plain; charset=utf-8")
    return adjudication, None


def _render_dispute(request, project, adjudication, error=None, status=200):
    adjudication = _adjudication(project, adjudication.pk)
    dispute = dispute_for(adjudication, turn_assignments(adjudication.turn), is_lead(request.user, project))
    context = {"project": project, "dispute": dispute, "error": error, "reason": request.POST.get("reason", ""),
               "protocol": protocol_for(project)}
    return render(request, "gold/partials/dispute.html", context, status=status)


def _judge_post(request, slug, adjudication_id, form_class):
    """``(project, adjudication, bound form, None)``, or the answer that refuses the POST as the 4th item."""
    project = access_project_as_adjudicator(request.user, slug)
    adjudication, refused = _adjudication_for_judge(request, project, adjudication_id)
    if refused:
        return project, adjudication, None, refused
    protocol = protocol_for(project)
    form = form_class(request.POST, protocol=protocol)
    valid = form.is_valid()
    back_url = reverse("gold_turn", args=[slug, adjudication.turn_id])
    # A page that walked another protocol than the current one is refused first: its walk, read under this one,
    # could name a label the adjudicator did not choose.
    changed = protocol_changed_answer(request, form.cleaned_data.get("walked_protocol", ""), protocol, back_url)
    if changed:
        return project, adjudication, form, changed
    if not valid:
        return project, adjudication, form, bad_request(request, form, back_url=back_url)
    return project, adjudication, form, None


@require_POST
def resolve(request, slug, adjudication_id):
    """Save the decision on one dispute: a side, or the adjudicator's own walk of the protocol, with a reason."""
    project, adjudication, form, refused = _judge_post(request, slug, adjudication_id, AdjudicationResolveForm)
    if refused:
        return refused
    decision = form.cleaned_data["decision"]
    kwargs = {"texts": form.cleaned_data["texts"]} if form.cleaned_data.get("texts") else {}
    if "side" in decision:
        kwargs["side"] = decision["side"]
    elif "path" in decision:
        kwargs["path"] = decision["path"]  # walked in the page (static/js/adjudication.js), sent whole
    try:
        if not kwargs.keys() - {"texts"}:
            raise GoldError("Pick a side or answer the questions first.")
        gold_services.adjudication_resolve(adjudication, request.user, reason=form.cleaned_data["reason"], **kwargs)
    except GoldError as error:
        if not request.htmx:
            messages.error(request, str(error))
            return redirect("gold_turn", slug=slug, turn_id=adjudication.turn_id)
        return _render_dispute(request, project, adjudication, error=str(error))
    if not request.htmx:
        messages.success(request, "Decision saved.")
        return redirect("gold_turn", slug=slug, turn_id=adjudication.turn_id)
    response = _render_dispute(request, project, adjudication)
    response["HX-Trigger"] = "dispute-resolved"
    return response


def sentence_gold(request, slug, sentence_id):
    """A sentence's gold with its history; leads may override it or reopen an annotation from here."""
    project = access_project_as_adjudicator(request.user, slug)
    sentence = get_object_or_404(
        Sentence.objects.select_related("turn__dialogue"), pk=sentence_id, turn__dialogue__project=project
    )
    if is_blind_on(request.user, sentence.turn_id):
        raise Http404("No such sentence")  # its gold and the others' answers: not while the user holds a slot on it
    lead = is_lead(request.user, project)
    error = None
    if request.method == "POST":
        if not lead:
            access_project_as_lead(request.user, slug)  # 404 for a non-lead
        form = GoldOverrideForm(request.POST, protocol=protocol_for(project))
        if not form.is_valid():
            return bad_request(request, form, back_url=reverse("gold_sentence", args=[slug, sentence.pk]))
        try:
            gold_services.gold_override(sentence, request.user, form.cleaned_data["label"], form.cleaned_data["reason"])
        except GoldError as exc:
            error = str(exc)
        else:
            messages.success(request, "Gold label overridden.")
            return redirect("gold_sentence", slug=slug, sentence_id=sentence.pk)
    annotations = sentence.annotations.filter(
        assignment__is_qualification=False
    ).select_related("assignment__annotator").order_by("assignment_id")
    context = {
        "project": project,
        "sentence": sentence,
        "turn": sentence.turn,
        "is_lead": lead,
        "annotations": annotations,
        "error": error,
        "posted": request.POST if request.method == "POST" else {},
        **gold_history(sentence),
    }
    return render(request, "gold/sentence_gold.html", context, status=422 if error else 200)


@require_POST
def reopen(request, slug, assignment_id):
    """A lead sends a submitted annotation back to its annotator (gold from it is cleared)."""
    project = access_project_as_lead(request.user, slug)
    assignment = get_object_or_404(Assignment, pk=assignment_id, project=project)
    form = ReopenForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("project_detail", args=[slug]))
    try:
        gold_services.annotation_reopen(assignment, request.user, form.cleaned_data["reason"])
    except GoldError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Reopened {assignment.annotator}'s annotation; its gold will be derived again on submission.")
    target = form.cleaned_data["next"]
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        target = reverse("project_detail", args=[slug])
    return redirect(target)
