"""Admin views of the workspace's records: assignments and the audit history (read-only)."""

from django.contrib import admin

from . import models
from .access import blind_turn_ids_everywhere
from .admin_scoping import LedProjectsAdmin, others_not_on_blind_turns


class AnnotationEventInline(admin.TabularInline):
    model = models.AnnotationEvent
    extra = 0
    can_delete = False
    fields = ["created_at", "actor", "action", "sentence", "old", "new", "request_id"]
    readonly_fields = fields
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(models.Assignment)
class AssignmentAdmin(LedProjectsAdmin, admin.ModelAdmin):
    """Who holds what; changes go through the lead's Assignments page (release / reassign), so read-only here."""

    list_display = ["id", "annotator", "turn", "status", "is_qualification", "version", "assigned_at", "last_activity_at", "submitted_at"]
    list_filter = ["project", "status", "is_qualification"]
    search_fields = ["annotator__username", "turn__dialogue__external_id"]
    list_select_related = ["annotator", "turn__dialogue"]
    readonly_fields = [f.name for f in models.Assignment._meta.fields]
    inlines = [AnnotationEventInline]

    def get_queryset(self, request):
        # Not another person's slot (with its audit history) on a turn the user holds an unsubmitted slot on.
        return others_not_on_blind_turns(super().get_queryset(request), request.user, "")

    def get_search_results(self, request, queryset, search_term):
        # The search reads the source's record id: it must not say which of the user's own open slots has it.
        found, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        if search_term:
            found = found.exclude(turn_id__in=blind_turn_ids_everywhere(request.user))
        return found, may_have_duplicates

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.AnnotationEvent)
class AnnotationEventAdmin(LedProjectsAdmin, admin.ModelAdmin):
    project_path = "assignment__project"
    """The audit history: every change to an annotation, who made it, old -> new. Never edited."""

    list_display = ["created_at", "actor", "action", "assignment", "sentence"]
    list_filter = ["action", "assignment__project"]
    search_fields = ["actor__username", "request_id"]
    list_select_related = ["actor", "assignment", "sentence"]
    readonly_fields = [f.name for f in models.AnnotationEvent._meta.fields]

    def get_queryset(self, request):
        return others_not_on_blind_turns(super().get_queryset(request), request.user, "assignment__")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
