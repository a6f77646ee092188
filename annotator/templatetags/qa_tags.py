"""Template helpers of the QA loop: navigation badges, decision paths, labels."""

from django import template

from ..navigation import nav_badges
from .gold_tags import _read, label_name

register = template.Library()


@register.inclusion_tag("qa/partials/nav_badges.html", takes_context=True)
def qa_nav_badges(context):
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"counts": None}
    return {"counts": nav_badges(request).qa}


@register.filter
def path_steps(path, protocol=None):
    """[(step question, answer wording), ...] of a stored decision path, in the order of the project's protocol
    (``{{ path|path_steps:project }}``)."""
    read = _read(protocol)
    rows = []
    for step in read.steps:
        value = (path or {}).get(step)
        if value is not None:
            rows.append((read.step_questions[step], read.answer_wording(step, value)))
    return rows


@register.filter
def step_label(value, protocol=None):
    return _read(protocol).step_questions.get(value, value or "")


@register.simple_tag
def gold_step_explanation(gold_path, step, protocol=None):
    """When a gold label came with no reason (imported gold), what the protocol says at the step where the
    annotator left the gold's path: the question, the gold's answer and the question's definition."""
    read = _read(protocol)
    answer = (gold_path or {}).get(step)
    if step not in read.step_questions or not isinstance(answer, str) or (step, answer) not in read.answer_names:
        return None
    return {"question": read.step_questions[step], "answer": read.answer_names[(step, answer)],
            "definition": read.step_definitions[step]}


# The same filter as the gold pages' (one definition), for templates that load only qa_tags.
register.filter("label_name", label_name)


@register.inclusion_tag("qa/partials/turn_questions.html", takes_context=True)
def qa_turn_questions(context, project, turn):
    """The annotator's questions on this turn (the annotation screen's polled panel)."""
    from ..qa.selectors import questions_on_turn
    from ..work.own_marks import own_marks

    request = context["request"]
    questions = list(questions_on_turn(request.user, turn)) if own_marks(request, turn).questions else []
    return {"project": project, "turn": turn, "questions": questions, "request": request}


@register.inclusion_tag("qa/partials/ask_dialog.html", takes_context=True)
def qa_ask_dialog(context, project, turn):
    return {"project": project, "turn": turn, "csrf_token": context.get("csrf_token"), "request": context["request"]}


@register.inclusion_tag("qa/partials/queue_notices.html", takes_context=True)
def qa_queue_notices(context, project):
    """On the annotator's queue: qualification status, new answers, feedback to acknowledge."""
    from ..qa.selectors import unacknowledged_feedback_count, unread_answer_count
    from ..qa.qualification import qualification_state

    user = context["request"].user
    return {
        "project": project,
        "qualification": qualification_state(project, user),
        "unread_answers": unread_answer_count(user, project),
        "pending_feedback": unacknowledged_feedback_count(user, project),
        "pass_mark_percent": round(project.qualification_pass_mark * 100, 1),
        "csrf_token": context.get("csrf_token"),
    }


@register.simple_tag(takes_context=True)
def qualification_blocks_work(context, project):
    """Whether the qualification withholds real work from the viewer (the queue then offers its own Start)."""
    from ..qa.qualification import qualification_may_work

    return not qualification_may_work(project, context["request"].user)
