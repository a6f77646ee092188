"""Inclusion tags that put the claims panels into the annotation screen without touching its views."""

from django import template

from ..claims.selectors import sentence_extras, triplet_panel

register = template.Library()


@register.inclusion_tag("claims/partials/triplet_panel.html", takes_context=True)
def claims_triplet_panel(context):
    """The triplet panel of the assignment on screen (nothing when the project has triplets switched off)."""
    assignment, project = context["assignment"], context["project"]
    state = {"assignment": assignment, "project": project, "closed": context.get("closed", False),
             "enabled": project.enable_triplets,
             "csrf_token": context.get("csrf_token")}
    if project.enable_triplets:
        state.update(triplet_panel(assignment, context["request"].user))
    return state


@register.inclusion_tag("claims/partials/sentence_extras.html", takes_context=True)
def claims_sentence_extras(context):
    """Severity, justification and error type of the active sentence, when the project asks for them."""
    project, active = context["project"], context.get("active")
    annotation = getattr(active, "annotation", None) if active else None
    return {
        "assignment": context["assignment"], "project": project, "active": active,
        "closed": context.get("closed", False), "csrf_token": context.get("csrf_token"),
        **sentence_extras(project, annotation),
    }
