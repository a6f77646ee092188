"""Pages about a turn's units: an annotator flags one (annotation screen), a lead splits, merges or dismisses
(the lead's turn page, the project's list of flagged turns). Thin: access getter, form, service, template."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotator.access import access_project_as_lead, access_turn_not_blind, blind_turn_ids
from annotator.models import Sentence, UnitFlag
from annotator.views.common import assignment_for, back_to_screen, bad_request
from annotator.corpus.units import selectors
from annotator.corpus.units.forms import FlagDismissForm, UnitFlagForm, UnitMergeForm, UnitSplitForm
from annotator.corpus.units.services import DependentsRefused, UnitError, unit_flag_dismiss, unit_flag_save, unit_merge, unit_split

PAGE_SIZE = 50


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@require_POST
def unit_flag(request, assignment_id):
    """An annotator flags a unit of their turn; the screen (static/js/unit_flags.js) marks it at once."""
    assignment = assignment_for(request, assignment_id)
    form = UnitFlagForm(request.POST)
    back = reverse("annotate", args=[assignment.pk])
    if not form.is_valid():
        return bad_request(request, form, back_url=back)
    sentence = get_object_or_404(Sentence, pk=form.cleaned_data["sentence"], turn_id=assignment.turn_id)
    try:
        flag = unit_flag_save(assignment, sentence, kind=form.cleaned_data["kind"], note=form.cleaned_data["note"],
                              user=request.user)
    except UnitError as error:
        if request.htmx or _wants_json(request):
            return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
        return back_to_screen(request, assignment, sentence, 400, str(error))
    if _wants_json(request):
        return JsonResponse({"sentence": sentence.pk, "kind": flag.kind, "kind_display": flag.get_kind_display(),
                             "note": flag.note, "status": flag.status, "status_display": flag.get_status_display(),
                             "resolution": flag.resolution})
    return back_to_screen(request, assignment, sentence, 200,
                          f"Unit flagged ({flag.get_kind_display().lower()}); the project leads see it on the turn.")


def _turn_url(project, turn, anchor="units"):
    return reverse("turn_detail", args=[project.slug, turn.pk]) + f"#{anchor}"


def _change(request, slug, turn_id, form_class, apply, noun):
    project = access_project_as_lead(request.user, slug)
    turn = access_turn_not_blind(request.user, project, turn_id)
    back = _turn_url(project, turn)
    form = form_class(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=back)
    data = form.cleaned_data
    try:
        change = apply(turn, data)
    except DependentsRefused as refused:
        unit = Sentence.objects.filter(pk=data["sentence"], turn=turn).first()
        context = {"project": project, "turn": turn, "unit": unit, "noun": noun, "message": str(refused),
                   "dependents": refused.dependents.blocking + refused.dependents.unsubmitted, "data": data,
                   "offset": data.get("offset"),
                   "action_url": request.path}
        return render(request, "units/confirm_reset.html", context, status=409)
    except UnitError as error:
        return bad_request(request, str(error), back_url=back)
    gone, new = len(change.before), len(change.after)
    messages.success(request, f"{noun.capitalize()} done: the turn has {new} units (it had {gone})"
                              + (f"; {len(change.reset)} record(s) removed, kept in the audit." if change.reset else "."))
    return redirect(back)


@require_POST
def unit_split_view(request, slug, turn_id):
    return _change(request, slug, turn_id, UnitSplitForm, lambda turn, data: unit_split(
        turn, data["sentence"], data["offset"], actor=request.user, reset=data["reset"], reason=data["reason"]),
        "split")


@require_POST
def unit_merge_view(request, slug, turn_id):
    return _change(request, slug, turn_id, UnitMergeForm, lambda turn, data: unit_merge(
        turn, data["sentence"], actor=request.user, reset=data["reset"], reason=data["reason"]), "merge")


@require_POST
def flag_dismiss(request, slug, pk):
    project = access_project_as_lead(request.user, slug)
    form = FlagDismissForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("unit_flag_list", args=[project.slug]))
    flag = get_object_or_404(UnitFlag.objects.exclude(turn_id__in=blind_turn_ids(request.user, project)),
                             pk=pk, turn__dialogue__project=project)
    try:
        unit_flag_dismiss(flag, lead=request.user, resolution=form.cleaned_data["resolution"])
    except UnitError as error:
        return bad_request(request, str(error), back_url=_turn_url(project, flag.turn))
    messages.success(request, f"Flag on unit {flag.sentence_index + 1} dismissed.")
    return redirect(_turn_url(project, flag.turn))


@require_safe
def flag_list(request, slug):
    """The project's turns with open flags, most flagged first, each linked to its turn page."""
    project = access_project_as_lead(request.user, slug)
    turns = selectors.turns_with_open_flags(request.user, project)
    page = Paginator(turns, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"project": project, "page": page, "open_flags": selectors.open_flag_count(request.user, project)}
    return render(request, "units/flag_list.html", context)
