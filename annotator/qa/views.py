"""Pages of the QA loop: questions, feedback, review, QA measures. Thin: access getter, service, template."""


from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from ..forms.fields import protocol_choices
from ..projects.protocols import protocol_for
from ..access import access_project, access_project_as_lead, is_lead
from .access import access_annotation_as_lead, access_own_feedback, access_question, access_question_as_lead
from .forms import AmendForm, AskForm, FeedbackForm, MessageForm, PromoteForm, ReviewQueryForm
from ..models import Question, Sentence, Turn
from . import selectors as selectors
from . import services as services
from .services import QAError
from ..views.common import bad_request, blind_refusal, csv_writer, polled, protocol_changed_answer


# --- Asking (from the annotation screen) --------------------------------------

@require_POST
def question_ask(request, slug):
    project = access_project(request.user, slug)
    form = AskForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("qa:my_questions"))
    data = form.cleaned_data
    turn = get_object_or_404(Turn.objects.select_related("dialogue"), pk=data["turn"], dialogue__project=project)
    sentence = None
    if data["sentence"] is not None:
        sentence = get_object_or_404(Sentence, pk=data["sentence"], turn=turn)
    try:
        # The decision path is the one saved for the sentence (every answer is autosaved); a client
        # without a saved annotation (e.g. the API) may send its own.
        path = selectors.saved_path(request.user, sentence) if sentence is not None else None
        if path is None:
            path = data["path"]
        question = services.question_ask(
            project=project, user=request.user, turn=turn, sentence=sentence, path=path, body=data["body"],
        )
    except QAError as error:
        if request.htmx:
            # htmx swaps only 2xx answers: the form comes back in place with the reason and the text kept.
            response = render(request, "qa/partials/ask_form.html",
                              {"project": project, "turn": turn, "sentence": sentence, "error": str(error),
                               "body": request.POST.get("body", ""), "path_json": request.POST.get("path", "")})
            response["HX-Retarget"] = "#ask-form"
            response["HX-Reswap"] = "outerHTML"
            return response
        messages.error(request, str(error))
        return redirect("qa:my_questions")
    if request.htmx:
        return _turn_questions(request, project, turn, just_asked=question)
    messages.success(request, "Your question was sent to the project leads.")
    return redirect("qa:question", pk=question.pk)


@polled
@require_GET
def turn_questions(request, slug, turn_id):
    """The user's questions on one turn, polled by the annotation screen so answers appear without reloading."""
    project = access_project(request.user, slug)
    turn = get_object_or_404(Turn, pk=turn_id, dialogue__project=project)
    return _turn_questions(request, project, turn)


def _turn_questions(request, project, turn, just_asked=None):
    questions = list(selectors.questions_on_turn(request.user, turn))
    response = render(request, "qa/partials/turn_questions.html",
                      {"project": project, "turn": turn, "questions": questions, "just_asked": just_asked})
    # Shown once as "new", then read: the answer is on the annotator's screen.
    for question in questions:
        services.question_mark_read(question=question, user=request.user)
    return response


# --- Threads ------------------------------------------------------------------

def question_detail(request, pk):
    question = access_question(request.user, pk)
    lead = is_lead(request.user, question.project)
    error = None
    if request.method == "POST":
        form = MessageForm(request.POST)
        if not form.is_valid():
            return bad_request(request, form, back_url=reverse("qa:question", args=[question.pk]))
        try:
            if lead and question.asked_by_id != request.user.pk:
                services.question_answer(question=question, lead=request.user, body=form.cleaned_data["body"])
            else:
                services.question_follow_up(question=question, user=request.user, body=form.cleaned_data["body"])
        except QAError as exc:
            error = str(exc)
        else:
            if not request.htmx:
                return redirect("qa:question", pk=question.pk)
        question.refresh_from_db()
    services.question_mark_read(question=question, user=request.user)
    context = {
        "question": question,
        "thread": selectors.question_thread(question),
        "is_lead": lead,
        "error": error,
        "steps": _steps(question.project),
        "examples": question.promoted_examples.all(),
    }
    if request.htmx and request.method == "POST":
        return render(request, "qa/partials/thread.html", context)
    if lead:
        context["turn_sentences"] = question.turn.sentences.all()
    return render(request, "qa/question_detail.html", context)


@polled
@require_GET
def question_messages(request, pk):
    """The thread alone, polled by the asker's page."""
    question = access_question(request.user, pk)
    services.question_mark_read(question=question, user=request.user)
    return render(request, "qa/partials/thread.html",
                  {"question": question, "thread": selectors.question_thread(question),
                   "is_lead": is_lead(request.user, question.project)})


@require_POST
def question_close(request, pk):
    question = access_question_as_lead(request.user, pk)
    services.question_close(question=question, actor=request.user)
    messages.success(request, "Question closed.")
    return redirect("qa:question", pk=question.pk)


@require_POST
def question_promote(request, pk):
    question = access_question_as_lead(request.user, pk)
    form = PromoteForm(request.POST, protocol=protocol_for(question.project))
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("qa:question", args=[question.pk]))
    data = form.cleaned_data
    try:
        example = services.question_promote_to_guideline(
            question=question, actor=request.user, step=data["step"] or None,
            expected_answer=data["expected_answer"], text=data["text"], explanation=data["explanation"],
        )
    except QAError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Added to the guideline examples at “{example.get_step_display()}”.")
    return redirect("qa:question", pk=question.pk)


def inbox(request):
    """Lead inbox: open questions of every project they lead (or answered / closed / all)."""
    status = request.GET.get("status", Question.Status.OPEN)
    if status not in (*Question.Status.values, "all"):
        status = Question.Status.OPEN
    project = None
    if request.GET.get("project"):
        project = access_project_as_lead(request.user, request.GET["project"])
    if not selectors.led_projects(request.user).exists():
        raise Http404("You lead no project")
    questions = selectors.questions_for_lead(request.user, status=None if status == "all" else status, project=project)
    page = Paginator(questions, 50).get_page(request.GET.get("page"))
    return render(request, "qa/inbox.html", {
        "page": page, "status": status, "statuses": [*Question.Status.choices, ("all", "All")],
        "project": project, "projects": selectors.led_projects(request.user).order_by("name"),
    })


def my_questions(request):
    page = Paginator(selectors.questions_of(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "qa/my_questions.html", {"page": page})


@polled
@require_GET
def nav_badges(request):
    return render(request, "qa/partials/nav_badges.html", {"counts": selectors.nav_counts(request.user)})


# --- Feedback -----------------------------------------------------------------

def feedback_inbox(request):
    items = selectors.feedback_for_annotator(request.user)
    page = Paginator(items, 50).get_page(request.GET.get("page"))
    # The amend forms walk their project's protocol in the page (static/js/amend_walk.js), from its description.
    projects = {item.project.slug: item.project for item in page.object_list}
    descriptions = {"protocols": {slug: protocol_for(project).describe() for slug, project in projects.items()}}
    return render(request, "qa/feedback_inbox.html", {"page": page, "protocol": descriptions})


@require_POST
def feedback_acknowledge(request, pk):
    feedback = access_own_feedback(request.user, pk)
    services.feedback_acknowledge(feedback=feedback, user=request.user)
    if request.htmx:
        return render(request, "qa/partials/feedback_item.html", {"item": feedback})
    return redirect("qa:feedback_inbox")


@require_POST
def feedback_amend(request, pk):
    """The annotator amends the annotation the feedback is about (while the turn is not adjudicated)."""
    feedback = access_own_feedback(request.user, pk)
    protocol = protocol_for(feedback.project)
    form = AmendForm(request.POST, protocol=protocol)
    valid = form.is_valid()
    # A form that walked another protocol than the project's current one is refused first (409, the inbox reloads).
    changed = protocol_changed_answer(request, form.cleaned_data.get("walked_protocol", ""), protocol,
                                      reverse("qa:feedback_inbox"))
    if changed:
        return changed
    if not valid:
        return bad_request(request, form, back_url=reverse("qa:feedback_inbox"))
    error = None
    try:
        services.feedback_amend(feedback=feedback, user=request.user, label=form.cleaned_data["label"],
                                request_id=form.cleaned_data["request_id"], path=form.cleaned_data["path"])
    except QAError as exc:
        error = str(exc)
    feedback = access_own_feedback(request.user, pk)
    if request.htmx:
        return render(request, "qa/partials/feedback_item.html", {"item": feedback, "error": error,
                                                                   "amended": not error})
    if error:
        messages.error(request, error)
    else:
        messages.success(request, "Your answer was amended.")
    return redirect("qa:feedback_inbox")


def _steps(project) -> list:
    """(step, question, [(answer, wording), ...]) of the project's protocol, for promoting a question."""
    protocol = protocol_for(project)
    return [(step, protocol.step_question(step), [(a.value, a.label) for a in protocol.step(step).answers])
            for step in protocol.steps]


REVIEW_MODES = {
    "sample": "Random sample of an annotator's work",
    "disagreements": "Sentences where annotators disagreed",
    "gold": "Where an annotator disagreed with gold",
}


def review(request, slug):
    """Lead review of submitted work, three ways in; feedback is given row by row."""
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)  # others' labels and gold, the turns the lead is blind on included
    if refused:
        return refused
    mode = request.GET.get("mode", "sample")
    if mode not in REVIEW_MODES:
        mode = "sample"
    query = ReviewQueryForm(request.GET)
    if not query.is_valid():
        return bad_request(request, query, back_url=reverse("qa:review", args=[project.slug]))
    annotators = selectors.project_annotators(project)
    annotator = None
    if query.cleaned_data["annotator"] is not None:
        annotator = annotators.filter(pk=query.cleaned_data["annotator"]).first()
    seed = query.cleaned_data["seed"]
    if seed is None:
        seed = 1
    if mode == "sample":
        page = Paginator(list(selectors.review_sample(project, annotator, size=20, seed=seed))
                         if annotator is not None else [], 30).get_page(1)
        rows = page.object_list
    elif mode == "disagreements":
        # Page over the disputed sentences, then fetch that page's annotations only.
        page = Paginator(selectors.disputed_sentence_ids(project, annotator), 15).get_page(request.GET.get("page"))
        rows = list(selectors.review_disagreements(project, page.object_list, annotator))
    else:
        page = Paginator(selectors.review_gold_disagreements(project, annotator), 30).get_page(request.GET.get("page"))
        rows = page.object_list
    others = selectors.other_labels(rows)
    for annotation in rows:
        annotation.other_labels = [
            (name, label) for name, label in others.get(annotation.sentence_id, [])
            if name != annotation.assignment.annotator.username
        ]
    return render(request, "qa/review.html", {
        "project": project, "mode": mode, "modes": REVIEW_MODES.items(), "annotators": annotators,
        "annotator": annotator, "seed": seed, "page": page, "rows": rows,
        "labels": protocol_choices(protocol_for(project), "label"),
    })


@require_POST
def feedback_give(request, slug, annotation_id):
    project = access_project_as_lead(request.user, slug)
    annotation = access_annotation_as_lead(request.user, project, annotation_id)
    form = FeedbackForm(request.POST, protocol=protocol_for(project))
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("qa:review", args=[project.slug]))
    error = None
    try:
        services.feedback_give(annotation=annotation, lead=request.user, comment=form.cleaned_data["comment"],
                               expected_label=form.cleaned_data["expected_label"])
    except QAError as exc:
        error = str(exc)
    if request.htmx:
        return render(request, "qa/partials/feedback_form.html",
                      {"project": project, "annotation": annotation, "error": error,
                       "labels": protocol_choices(protocol_for(project), "label"),
                       "given": annotation.feedback.order_by("created_at")})
    if error:
        messages.error(request, error)
    else:
        messages.success(request, "Feedback sent.")
    return redirect("qa:review", slug=project.slug)


def measures(request, slug):
    """QA instances per 500 statements: project, per annotator, per week (CogniBench Table 1)."""
    project = access_project_as_lead(request.user, slug)
    report = selectors.qa_report(project)
    if request.GET.get("format") == "csv":
        return _measures_csv(project, report["total"], report["by_annotator"], report["by_week"])
    return render(request, "qa/measures.html", {"project": project, **report})


MEASURE_COLUMNS = ["statements", "questions", "feedback", "questions_per_500", "feedback_per_500", "instances_per_500"]


def _measures_csv(project, total, by_annotator, by_week):
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-qa-per-500.csv"'
    writer = csv_writer(response)  # usernames may start with + - @
    writer.writerow(["scope", "key", *MEASURE_COLUMNS])
    writer.writerow(["project", project.slug, *(total[c] for c in MEASURE_COLUMNS)])
    for row in by_annotator:
        writer.writerow(["annotator", row["annotator"], *(row[c] for c in MEASURE_COLUMNS)])
    for row in by_week:
        writer.writerow(["week", row["week"].isoformat(), *(row[c] for c in MEASURE_COLUMNS)])
    return response
