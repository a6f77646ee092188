"""Qualification pages: a lead picks the set, explains its gold, sets automatic retries and sees results; an
annotator sees their score."""

from django.contrib import messages
from django.db.models import F, Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..access import access_project, access_project_as_lead, blind_turn_ids, is_blind_on, is_lead, neutral_turn_name
from .access import access_qualification_result
from ..forms.fields import error_text
from ..gold.services import GoldError, gold_reason_set
from ..models import Sentence
from ..projects.services import project_update_settings
from ..views.common import bad_request
from .qualification_forms import GoldReasonForm, QualificationRetriesForm, QualificationSetForm
from .qualification_selectors import details_with_current_reasons, qualification_gold_sentences, waiting_for_a_lead
from .selectors import qualification_results, turns_with_qualification_counts
from . import qualification as services
from .qualification import QualificationError

CANDIDATE_LIMIT = 200


def setup(request, slug):
    project = access_project_as_lead(request.user, slug)
    status = 200
    if request.method == "POST":
        form = QualificationSetForm(request.POST)
        if not form.is_valid():
            # The same page, with what was wrong above it.
            messages.error(request, error_text(form))
            status = 400
        else:
            percent = form.cleaned_data["pass_mark"]
            try:
                turns = services.qualification_set(project=project, actor=request.user,
                                                   turn_ids=form.cleaned_data["turns"], pass_mark=percent / 100)
            except QualificationError as error:
                messages.error(request, str(error))
            else:
                messages.success(request, f"Qualification set saved: {len(turns)} turn(s), pass mark {percent:g}%.")
                return redirect("qa:qualification", slug=project.slug)
    search = request.GET.get("q", "").strip()
    candidates = (
        turns_with_qualification_counts(project)
        .filter(Q(is_qualification=True) | Q(sentence_count__gt=0, gold_count=F("sentence_count"), real_slots=0))
    )
    if search:
        candidates = candidates.filter(dialogue__external_id__icontains=search)
    candidates = candidates.order_by("-is_qualification", "dialogue_id", "index")[:CANDIDATE_LIMIT]
    results = qualification_results(project)
    return render(request, "qa/qualification_setup.html", {
        "project": project, "candidates": candidates, "search": search, "limit": CANDIDATE_LIMIT,
        "pass_mark_percent": round(project.qualification_pass_mark * 100, 1),
        "results": results, "waiting": waiting_for_a_lead(results),
        "retries_form": QualificationRetriesForm(initial={
            "qualification_auto_retries": project.qualification_auto_retries}),
        "gold_sentences": qualification_gold_sentences(project, request.user),
    }, status=status)


@require_POST
def retries(request, slug):
    """A lead sets how many failed attempts open the next one by themselves."""
    project = access_project_as_lead(request.user, slug)
    form = QualificationRetriesForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("qa:qualification", args=[slug]))
    project_update_settings(project, **form.cleaned_data)
    count = form.cleaned_data["qualification_auto_retries"]
    messages.success(request, f"Automatic retries: {count}." if count
                     else "Automatic retries: none; a lead allows each retry.")
    return redirect("qa:qualification", slug=slug)


@require_POST
def gold_reason(request, slug, sentence_id):
    """A lead writes (or edits, or clears) the reason of a qualification sentence's gold label."""
    project = access_project_as_lead(request.user, slug)
    back = reverse("qa:qualification", args=[slug]) + f"#reason-{sentence_id}"
    form = GoldReasonForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=back)
    sentence = Sentence.objects.filter(
        pk=sentence_id, turn__dialogue__project=project, turn__is_qualification=True
    ).select_related("turn__dialogue__project").first()
    if sentence is None or is_blind_on(request.user, sentence.turn_id):
        raise Http404("No such qualification sentence")
    try:
        gold = gold_reason_set(sentence, request.user, form.cleaned_data["reason"])
    except GoldError as error:
        messages.error(request, str(error))
    else:
        where = f"{sentence.turn}, sentence {sentence.index + 1}"
        messages.success(request, f"Reason saved ({where})." if gold.reason else f"Reason cleared ({where}).")
    return redirect(back)


@require_POST
def allow_retry(request, slug, pk):
    project = access_project_as_lead(request.user, slug)
    result = access_qualification_result(request.user, project, pk)
    try:
        services.qualification_allow_retry(result=result, actor=request.user)
    except QualificationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{result.annotator.username} may take the qualification set again.")
    return redirect("qa:qualification", slug=project.slug)


def score(request, slug, pk=None):
    """The annotator's score, sentence by sentence: their label, the gold label and the reason."""
    project = access_project(request.user, slug)
    if pk is not None:
        result = access_qualification_result(request.user, project, pk)
    else:
        result = services.qualification_score_attempt(project, request.user) or services.latest_result(
            project, request.user
        )
    state = services.qualification_state(project, result.annotator if result else request.user)
    details = details_with_current_reasons(result.details) if result is not None else []
    # A retry reopens the same turns: whoever holds an open slot on one (the annotator retaking it) is blind
    # there, so its rows (their label with right/wrong, the gold and its reason) wait until it is submitted.
    blind = set(blind_turn_ids(request.user, project).values_list("turn_id", flat=True))
    shown = [row for row in details if not (isinstance(row, dict) and row.get("turn") in blind)]
    if not is_lead(request.user, project):
        # The stored name holds the source's record id (leads'): everyone else reads the neutral one.
        shown = [{**row, "turn_name": neutral_turn_name(row.get("turn"))} if isinstance(row, dict) else row
                 for row in shown]
    return render(request, "qa/qualification_score.html", {
        "project": project, "result": result, "state": state, "details": shown,
        "hidden_rows": len(details) - len(shown),
        "own": result is None or result.annotator_id == request.user.pk,
        "is_lead": is_lead(request.user, project),
        "pass_mark_percent": round(project.qualification_pass_mark * 100, 1),
    })
