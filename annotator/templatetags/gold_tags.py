"""Display helpers for gold, adjudication and reports pages."""

from django import template

from ..domain.vocabulary import Answer, Label, Step

register = template.Library()


@register.filter
def label_name(value):
    try:
        return Label(value).label
    except ValueError:
        return value or "—"


@register.filter
def answer_name(value):
    if value is None:
        return "—"
    try:
        return Answer(value).label
    except ValueError:
        return value


@register.filter
def step_question(value):
    try:
        return Step(value).label
    except ValueError:
        return value


@register.filter
def pct(value, digits=1):
    if value is None or value == "":
        return "n/a"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.filter
def num(value, digits=3):
    if value is None or value == "":
        return "n/a"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def index(sequence, position):
    try:
        return sequence[position]
    except (IndexError, KeyError, TypeError):
        return None


@register.simple_tag(takes_context=True)
def open_disputes_for_user(context):
    """(open disputes the user may decide, slug of the project holding the oldest) for the navigation badge."""
    from ..access import ADJUDICATING_ROLES
    from ..models import Adjudication

    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return (0, None)
    disputes = Adjudication.objects.filter(status=Adjudication.Status.OPEN)
    if not user.is_superuser:  # a role comes from a membership; superusers lead every project
        disputes = disputes.filter(
            turn__dialogue__project__memberships__user=user,
            turn__dialogue__project__memberships__role__in=ADJUDICATING_ROLES,
        )
    disputes = disputes.exclude(turn__assignments__annotator=user)
    count = disputes.count()
    if not count:
        return (0, None)
    oldest = disputes.order_by("created_at").values_list("turn__dialogue__project__slug", flat=True).first()
    return (count, oldest)
