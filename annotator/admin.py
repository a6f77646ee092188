from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError

from . import models
from .projects.services import membership_remove
from .admin_scoping import LedProjectsAdmin, NotOnBlindTurnsAdmin, led_list_filter, scope_to_led_projects


class MembershipInline(admin.TabularInline):
    model = models.Membership
    extra = 1
    autocomplete_fields = ["user"]
    # Removing someone releases their slots and closes their flags (projects.services.membership_remove):
    # done from the Memberships list or the project's People page, never by deleting an inline row.
    can_delete = False


class GuidelineExampleInline(admin.StackedInline):
    model = models.GuidelineExample
    extra = 0
    fields = ["step", "text", "is_positive", "explanation", "position"]


def _export_action(fmt, description):
    def action(modeladmin, request, queryset):
        from django.http import HttpResponseRedirect
        from django.urls import reverse

        if queryset.count() != 1:
            modeladmin.message_user(request, "Choose exactly one project to export.", level="error")
            return None
        return HttpResponseRedirect(reverse("project_export", args=[queryset.get().slug, fmt]))

    action.__name__ = f"export_{fmt}"
    return admin.action(description=description)(action)


@admin.register(models.Project)
class ProjectAdmin(LedProjectsAdmin, admin.ModelAdmin):
    project_path = ""
    list_display = ["name", "slug", "get_protocol_mode_display", "overlap", "show_prelabels", "adjudicators_may_annotate"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name", "slug"]
    inlines = [MembershipInline, GuidelineExampleInline]
    # The protocol is set on the project's Protocol page (or protocol_set / the API), where it is checked and
    # versioned; the admin only shows which version is current.
    readonly_fields = ["protocol_version"]
    actions = [_export_action("jsonl", "Export gold JSONL"),
               _export_action("cognibench", "Export CogniBench labels.json")]


@admin.register(models.Membership)
class MembershipAdmin(LedProjectsAdmin, admin.ModelAdmin):
    list_display = ["user", "project", "role", "joined_at"]
    list_filter = ["project", "role"]
    autocomplete_fields = ["user"]

    # The one write path of a removal: the member's unsubmitted slots are released and open flags closed.
    def delete_model(self, request, obj):
        try:
            effects = membership_remove(obj, actor=request.user)
        except ValidationError as error:
            self.message_user(request, " ".join(error.messages), level=messages.ERROR)
        else:
            self.message_user(request, f"Removed {effects.summary()}")

    def delete_queryset(self, request, queryset):
        for membership in queryset:
            self.delete_model(request, membership)


@admin.register(models.GuidelineExample)
class GuidelineExampleAdmin(LedProjectsAdmin, admin.ModelAdmin):
    list_display = ["project", "step", "is_positive", "text"]
    list_filter = ["project", "step", "is_positive"]


@admin.register(models.Dialogue)
class DialogueAdmin(NotOnBlindTurnsAdmin, LedProjectsAdmin, admin.ModelAdmin):
    blind_turn_path = "turns"  # a dialogue with a turn the user is annotating is hidden whole
    list_display = ["external_id", "project", "topic", "language", "generator_model"]
    list_filter = ["project", "language", "generator_model"]
    search_fields = ["external_id", "topic"]


class SentenceInline(admin.TabularInline):
    model = models.Sentence
    extra = 0
    fields = ["index", "text", "start", "end"]
    readonly_fields = fields
    can_delete = False


@admin.register(models.Turn)
class TurnAdmin(NotOnBlindTurnsAdmin, LedProjectsAdmin, admin.ModelAdmin):
    project_path = "dialogue__project"
    list_display = ["__str__", "dialogue", "index", "is_qualification", "created_at"]
    list_filter = ["dialogue__project", "is_qualification"]
    search_fields = ["dialogue__external_id", "external_id"]
    list_select_related = ["dialogue"]
    raw_id_fields = ["dialogue"]
    inlines = [SentenceInline]


class ImportUploadForm(forms.ModelForm):
    """Upload a file to import; the import itself runs as a Celery job."""

    class Meta:
        model = models.ImportBatch
        fields = ["project", "kind", "upload", "second_upload"]
        labels = {"upload": "File", "second_upload": "Second file (CogniBench labels.json)"}
        help_texts = {
            "upload": "CogniBench dialogues.json, a RefChecker *_answers.json, or a project .jsonl file.",
        }

    def clean(self):
        from annotator.corpus.imports.forms import upload_problems_add

        # The same checks as the project page's form and the API (kind, size, extension, content).
        return upload_problems_add(self, super().clean())


@admin.register(models.ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = ["filename", "project", "kind", "status", "created_by", "created_at", "finished_at"]
    list_filter = ["project", "kind", "status"]
    # The files are shown by name with a link to the role-checked download, never as FileFields:
    # the private storage has no URL (its url() raises), and a file is only ever an attachment.
    readonly_fields = ["project", "kind", "filename", "uploaded_files", "status", "live_status", "sha256", "summary",
                       "error", "progress", "total", "created_by", "created_at", "finished_at"]

    class Media:
        js = ["vendor/htmx.min.js"]

    def get_queryset(self, request):
        # A staff lead sees the imports of the projects they lead only (admin_scoping.py).
        return scope_to_led_projects(super().get_queryset(request), request.user, "project")

    def get_list_filter(self, request):
        return led_list_filter(super().get_list_filter(request), request.user)

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ImportUploadForm
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_fields(self, request, obj=None):
        if obj is None:
            return ImportUploadForm.Meta.fields
        return self.readonly_fields

    def get_changeform_initial_data(self, request):
        return {"project": request.GET.get("project"), "kind": models.ImportBatch.Kind.COGNIBENCH}

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request, obj)

    def save_model(self, request, obj, form, change):
        from annotator.corpus.imports.services import import_batch_start

        data = form.cleaned_data
        batch = import_batch_start(data["project"], data["kind"], data["upload"], data.get("second_upload"),
                                   actor=request.user)
        obj.pk = batch.pk
        obj.refresh_from_db()

    def response_add(self, request, obj, post_url_continue=None):
        from django.http import HttpResponseRedirect
        from django.urls import reverse

        self.message_user(request, f"Import #{obj.pk} of {obj.filename} is queued; its progress is shown below.")
        return HttpResponseRedirect(reverse("admin:annotator_importbatch_change", args=[obj.pk]))

    @admin.display(description="Uploaded files")
    def uploaded_files(self, obj):
        from django.template.loader import render_to_string

        return render_to_string("data/partials/import_files.html", {"project": obj.project, "batch": obj})

    @admin.display(description="Progress")
    def live_status(self, obj):
        from django.urls import reverse
        from django.utils.html import format_html

        url = reverse("import_status", args=[obj.project.slug, obj.pk])
        return format_html(
            '<div hx-get="{}" hx-trigger="load" hx-swap="outerHTML">Loading…</div> <a href="{}">Status page</a>',
            url, url,
        )


@admin.register(models.ExportJob)
class ExportJobAdmin(LedProjectsAdmin, admin.ModelAdmin):
    list_display = ["project", "format", "status", "progress", "total", "created_by", "created_at", "finished_at"]
    list_filter = ["project", "format", "status"]
    # "download", not the FileField: the private storage has no URL (a FileField's display called url()
    # and the change page answered 500); the file goes out through the role-checked download.
    readonly_fields = ["project", "format", "status", "progress", "total", "download", "error", "created_by",
                       "created_at", "finished_at"]
    exclude = ["file"]

    def has_add_permission(self, request):
        return False  # started from the project page or the project list's actions

    @admin.display(description="File")
    def download(self, obj):
        from django.urls import reverse
        from django.utils.html import format_html

        if obj.status != models.ExportJob.Status.DONE or not obj.file:
            return "-"
        return format_html('<a href="{}" download>Download</a>',
                           reverse("export_job_download", args=[obj.project.slug, obj.pk]))


from . import admin_workspace
