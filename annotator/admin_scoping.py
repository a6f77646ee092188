"""The Django admin for a staff member who is not a superuser: only the projects they lead.

A project role comes from a Membership (``annotator.access``); the staff flag only
opens the admin. A staff lead with model permissions therefore sees, in every
project-bound list, only the objects of the projects they lead; the foreign-key
choices of the forms and the list filters offer only those; actions work on the
scoped lists. Superusers (site administrators) see everything.
"""

from django.contrib import admin
from django.db.models import Q

from .access import blind_turn_ids_everywhere, led_projects
from .models import Assignment, Dialogue, ImportBatch, Project, Sentence, Turn

# How each project-bound model reaches its project, for the foreign-key choices of admin forms.
PROJECT_PATHS = {
    Project: "",
    Dialogue: "project",
    Turn: "dialogue__project",
    Sentence: "turn__dialogue__project",
    ImportBatch: "project",
    Assignment: "project",
}


def scope_to_led_projects(queryset, user, project_path: str):
    """``queryset`` narrowed to the projects ``user`` leads (unchanged for a superuser)."""
    if user.is_superuser:
        return queryset
    lookup = "pk__in" if project_path == "" else f"{project_path}__in"
    return queryset.filter(**{lookup: led_projects(user).values("pk")})


def _project_path_of(model):
    if model in PROJECT_PATHS:
        return PROJECT_PATHS[model]
    if any(f.name == "project" and f.is_relation for f in model._meta.fields):
        return "project"
    return None


class LedProjectsAdmin:
    """Mixin for a ModelAdmin of a project-bound model; ``project_path`` leads from the model to its Project."""

    project_path = "project"

    def get_queryset(self, request):
        return scope_to_led_projects(super().get_queryset(request), request.user, self.project_path)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        path = _project_path_of(db_field.related_model)
        if path is not None and not request.user.is_superuser:
            queryset = kwargs.get("queryset")
            if queryset is None:
                queryset = db_field.related_model._default_manager.all()
            kwargs["queryset"] = scope_to_led_projects(queryset, request.user, path)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_list_filter(self, request):
        return led_list_filter(super().get_list_filter(request), request.user)


def led_list_filter(filters, user):
    """A project filter lists only the projects of the scoped list (not every project's name)."""
    if user.is_superuser:
        return filters
    return [
        (entry, admin.RelatedOnlyFieldListFilter) if isinstance(entry, str) and entry.split("__")[-1] == "project"
        else entry
        for entry in filters
    ]


def others_not_on_blind_turns(queryset, user, assignment_prefix: str):
    """Assignments (or records of one, through ``assignment_prefix``) without those of other people on the
    turns ``user`` holds an unsubmitted slot on: the slot-holder rule holds in the admin too."""
    blind = blind_turn_ids_everywhere(user)
    return queryset.exclude(~Q(**{f"{assignment_prefix}annotator": user}), **{f"{assignment_prefix}turn_id__in": blind})


class NotOnBlindTurnsAdmin:
    """Mixin for the admin of turns and what hangs on them (dialogues, sentences): the objects of a turn the
    user holds an unsubmitted slot on are not listed, not found by search, and their change, history and
    delete pages answer as the admin does for a missing object (``get_object`` finds none), whatever the
    user's role: their metadata holds the source's relevance marks and record ids (``annotator.access``).
    ``blind_turn_path`` leads from the model to the turn (``pk`` for a Turn, ``turns`` for a Dialogue)."""

    blind_turn_path = "pk"

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset.exclude(**{f"{self.blind_turn_path}__in": blind_turn_ids_everywhere(request.user)})
