"""How a page names a turn: the source's record ids for a lead, ``Turn <pk>`` for everyone else
(``annotator.access.MetadataAccess.turn_name``; the rule is written there)."""

from django import template

from ..access import metadata_access, neutral_turn_name

register = template.Library()

_READERS = "_record_id_readers"  # per request: project id -> MetadataAccess


@register.simple_tag(takes_context=True)
def turn_name(context, turn):
    request = context.get("request")
    user = getattr(request, "user", None)
    if turn is None:
        return ""
    if user is None or not user.is_authenticated:
        return neutral_turn_name(turn.pk)
    project = context.get("project")
    dialogue = turn.dialogue
    if project is None or getattr(project, "pk", None) != dialogue.project_id:
        project = dialogue.project
    readers = request.__dict__.setdefault(_READERS, {})
    if project.pk not in readers:
        # Once per request and project: a lead's list of many turns asks this for every row.
        readers[project.pk] = metadata_access(user, project)
    return readers[project.pk].turn_name(turn)
