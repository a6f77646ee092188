"""Template helpers of the QA loop: navigation badges, decision paths, labels."""

from django import template

from ..qa.selectors import nav_counts
from .gold_tags import label_name
from ..domain.definitions import STEP_DEFINITIONS
from ..domain.vocabulary import Answer, Step

register = template.Library()


@register.inclusion_tag("qa/partials/nav_badges.html", takes_context=True)
def qa_nav_badges(context):
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"counts": None}
    return {"counts": nav_counts(user)}


@register.filter
def path_steps(path):
    """[(step question, answer label), ...] for a stored decision path, in protocol order."""
    rows = []
    for step in Step:
        value = (path or {}).get(step.value)
        if value is None:
            continue
        try:
            shown = Answer(value).label
        except ValueError:
            shown = value
        rows.append((step.label, shown))
    return rows


@register.filter
def step_label(value):
    try:
        return Step(value).label
    except ValueError:
        return value or ""


@register.simple_tag
def gold_step_explanation(gold_path, step):
    """When a gold label came with no reason (imported gold), what the protocol says at the step where the
    annotator left the gold's path: the question, the gold's answer and the question's definition."""
    try:
        step = Step(step)
        answer = Answer((gold_path or {}).get(step.value)).label
    except ValueError:
        return None
    return {"question": step.label, "answer": answer, "definition": STEP_DEFINITIONS[step]}


# The same filter as the gold pages' (one definition), for templates that load only qa_tags.
register.filter("label_name", label_name)


@register.inclusion_tag("qa/partials/turn_questions.html", takes_context=True)
def qa_turn_questions(context, project, turn):
    """The annotator's questions on this turn (the annotation screen's polled panel)."""
    from ..qa.selectors import questions_on_turn

    user = context["request"].user
    return {"project": project, "turn": turn, "questions": list(questions_on_turn(user, turn)), "request": context["request"]}


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
