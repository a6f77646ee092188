"""Admin of the auto-labeller: endpoint profiles, prompt versions, contrastive examples, jobs.

Leads start jobs from here: the action "Auto-label selected" on projects,
dialogues and turns, or "Start a job" on the jobs list; both lead to one form
(endpoint profile, model, prompt version, samples, threshold).
"""

import os

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotator.access import led_projects
from annotator.admin_scoping import LedProjectsAdmin
from annotator.models import Dialogue, Project, Turn

from autolabel.jobs import selectors
from autolabel.jobs import services
from autolabel.jobs.forms import JobStartForm
from autolabel.jobs.llm import api_key_env_refusal
from .models import AutoLabelJob, ContrastiveExample, LLMProfile, PromptVersion

SESSION_KEY = "autolabel_selection"

# The order a job's page lists its fields in. Django lists the fields of an abstract base
# (models.LLMJob, which the two jobs share) first; the pages keep the order they had before
# the base existed: what the job is, then its progress, then who and when.
AUTOLABEL_JOB_FIELDS = (
    "project", "profile", "prompt_version", "model", "samples", "threshold", "use_n", "batch_mode", "parameters",
    "status", "cancel_requested", "error", "total_turns", "done_turns", "requests", "retries", "faults", "abstentions",
    "problems", "prompt_tokens", "completion_tokens", "cost", "lease_owner", "lease_until", "batch_state",
    "created_by", "created_at", "started_at", "finished_at",
)
EXTRACTION_JOB_FIELDS = (
    "project", "kind", "source_job", "profile", "model", "only_missing", "status", "cancel_requested", "error",
    "total_turns", "done_turns", "triplets_created", "requests", "retries", "faults", "problems", "prompt_tokens",
    "completion_tokens", "created_by", "created_at", "started_at", "finished_at",
)


def in_page_order(names, order):
    """``names`` in the order ``order`` gives; a name it does not list comes last."""
    rank = {name: position for position, name in enumerate(order)}
    return sorted(names, key=lambda name: rank.get(name, len(rank)))


@admin.register(LLMProfile)
class LLMProfileAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "base_url", "follows_environment", "default_model", "api_key_env",
                    "key_available", "supports_n", "supports_batch", "concurrency"]
    list_filter = ["follows_environment"]
    readonly_fields = ["key_available", "latency_seconds"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fieldsets = [
        (None, {"fields": ["name", "project", "base_url", "follows_environment", "default_model"],
                "description": "A profile without a project is the site's (every project may use it); one with a "
                               "project is that project's leads' own (its LLM endpoints page edits the same record)."}),
        ("API key", {"fields": ["api_key_env", "key_available"],
                     "description": "The key is read from this environment variable of the worker; it is never stored "
                                    "in the database nor shown here. Only API-key variables qualify: a name ending "
                                    "in _API_KEY, or one listed in the server's LLM_API_KEY_ENV_ALLOWED."}),
        ("Requests", {"fields": ["supports_n", "supports_batch", "concurrency", "timeout_seconds", "max_retries",
                                 "temperature", "max_tokens"]}),
        ("Prices per million tokens", {"fields": ["input_price_per_million", "output_price_per_million"]}),
        ("Measured", {"fields": ["latency_seconds"]}),
    ]

    @admin.display(boolean=True, description="key set in this process")
    def key_available(self, obj):
        # Says nothing about a variable that is not an API key (not even whether SECRET_KEY is set).
        if not obj.api_key_env or api_key_env_refusal(obj.api_key_env):
            return False
        return bool(os.environ.get(obj.api_key_env))


@admin.register(PromptVersion)
class PromptVersionAdmin(LedProjectsAdmin, admin.ModelAdmin):
    list_display = ["__str__", "project", "version", "job_count", "created_at"]
    list_filter = ["project"]
    readonly_fields = ["version", "created_at"]
    save_as = True

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_jobs=Count("jobs"))

    @admin.display(description="jobs")
    def job_count(self, obj):
        return obj.n_jobs

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.jobs.exists():
            # A version used by a job is history: change it with "Save as new".
            return ["project", "version", "stage1_template", "stage2_template", "created_at"]
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        if obj.pk is None:
            created = services.prompt_version_create(obj.project, obj.stage1_template, obj.stage2_template, obj.notes)
            obj.pk, obj.version, obj.created_at = created.pk, created.version, created.created_at
            obj._state.adding = False
            return
        super().save_model(request, obj, form, change)


@admin.register(ContrastiveExample)
class ContrastiveExampleAdmin(LedProjectsAdmin, admin.ModelAdmin):
    list_display = ["sentence_text", "project", "wrong_label", "right_label", "active", "position"]
    list_filter = ["project", "active", "right_label"]
    list_editable = ["active", "position"]
    raw_id_fields = ["sentence", "source_job"]
    change_list_template = "admin/autolabel/contrastiveexample/change_list.html"

    @admin.display(description="sentence")
    def sentence_text(self, obj):
        return obj.sentence.text[:120]

    def get_urls(self):
        return [
            path("candidates/", self.admin_site.admin_view(self.candidates_view), name="autolabel_contrastive_candidates"),
            *super().get_urls(),
        ]

    def candidates_view(self, request):
        """Gold sentences an earlier job got wrong, to pick as contrastive examples."""
        projects = led_projects(request.user).order_by("name")
        project = projects.filter(pk=request.GET.get("project") or request.POST.get("project")).first() or projects.first()
        job = None
        job_id = request.GET.get("job") or request.POST.get("job")
        if project and job_id:
            job = AutoLabelJob.objects.filter(pk=job_id, project=project).first()
        if request.method == "POST" and project:
            job, candidates = selectors.contrastive_candidates(project, job)
            chosen = {c.sentence_id: c for c in candidates}.get(int(request.POST.get("sentence", 0) or 0))
            if chosen is None:
                messages.error(request, "That sentence is not a candidate any more.")
            else:
                example = ContrastiveExample(
                    project=project, sentence=chosen.sentence, wrong_label=chosen.label,
                    right_label=chosen.sentence.gold.label, source_job=job,
                    explanation=chosen.sentence.gold.reason,
                )
                try:  # the job may have labelled with an older protocol version than the project's
                    example.clean()
                except ValidationError as error:
                    messages.error(request, " ".join(f"{field}: {' '.join(problems)}"
                                                     for field, problems in error.message_dict.items()))
                else:
                    example.save()
                    messages.success(request, "Example added: write the explanation the model will see.")
                    return redirect("admin:autolabel_contrastiveexample_change", example.pk)
        job, candidates = selectors.contrastive_candidates(project, job) if project else (None, [])
        context = {
            **self.admin_site.each_context(request), "title": "Contrastive example candidates", "opts": self.model._meta,
            "projects": projects, "project": project, "job": job, "candidates": candidates,
            "jobs": AutoLabelJob.objects.filter(project=project, status=AutoLabelJob.Status.DONE) if project else [],
        }
        return TemplateResponse(request, "admin/autolabel/contrastive_candidates.html", context)


class ProjectChoiceForm(forms.Form):
    project = forms.ModelChoiceField(queryset=Project.objects.none())

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = led_projects(user).order_by("name")  # a staff lead: their projects


@admin.register(AutoLabelJob)
class AutoLabelJobAdmin(LedProjectsAdmin, admin.ModelAdmin):
    list_display = ["job_number", "project", "progress_bar", "model", "voting", "faults", "cost", "created_at", "job_page"]
    list_filter = ["status", "project", "batch_mode"]
    actions = ["cancel_jobs"]
    change_list_template = "admin/autolabel/autolabeljob/change_list.html"
    exclude = ["lease_owner", "lease_until"]

    class Media:
        js = ["vendor/htmx.min.js"]
        css = {"all": ["css/autolabel.css"]}

    def has_add_permission(self, request):
        return False  # jobs are started with the start form, not created by hand

    def has_change_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("project")

    def get_fields(self, request, obj=None):
        return in_page_order(super().get_fields(request, obj), AUTOLABEL_JOB_FIELDS)

    @admin.display(description="progress")
    def progress_bar(self, obj):
        return render_admin_progress(obj)

    @admin.display(description="job", ordering="pk")
    def job_number(self, obj):
        return f"#{obj.pk}"

    @admin.display(description="samples / threshold")
    def voting(self, obj):
        return f"{obj.samples} / {obj.threshold}"

    @admin.display(description="page")
    def job_page(self, obj):
        return format_html('<a href="{}">open</a>', reverse("autolabel:job_detail", args=[obj.project.slug, obj.pk]))

    @admin.action(description="Cancel selected jobs")
    def cancel_jobs(self, request, queryset):
        for job in queryset:
            services.job_cancel(job)
        messages.info(request, f"Cancellation requested for {queryset.count()} job(s).")

    def get_urls(self):
        return [path("start/", self.admin_site.admin_view(self.start_view), name="autolabel_job_start"), *super().get_urls()]

    def start_view(self, request):
        selection = request.session.get(SESSION_KEY) if request.GET.get("selection") else None
        project = None
        if selection:
            project = get_object_or_404(led_projects(request.user), pk=selection["project"])
        elif request.GET.get("project") or request.POST.get("project"):
            project = get_object_or_404(led_projects(request.user),
                                        pk=request.GET.get("project") or request.POST.get("project"))
        if project is None:
            chooser = ProjectChoiceForm(request.GET or None, user=request.user)
            context = {**self.admin_site.each_context(request), "title": "Start an auto-label job", "chooser": chooser,
                       "opts": self.model._meta}
            return render(request, "admin/autolabel/job_start.html", context)
        form = JobStartForm(request.POST or None, project=project)
        turn_ids = selection["turns"] if selection else None
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                job = services.job_create(
                    project=project, profile=data["profile"], model=data["model"], samples=data["samples"],
                    threshold=data["threshold"], prompt_version=data["prompt_version"], use_n=data["use_n"],
                    batch_mode=data["batch_mode"], turn_ids=turn_ids, created_by=request.user,
                )
            except services.JobError as error:
                form.add_error(None, str(error))
            else:
                request.session.pop(SESSION_KEY, None)
                messages.success(request, f"Job {job.pk} queued: {job.total_turns} turns.")
                # The job's own page: every lead of the project may open it, whatever the admin lets them list.
                return redirect("autolabel:job_detail", project.slug, job.pk)
        context = {
            **self.admin_site.each_context(request), "title": f"Start an auto-label job on {project}", "form": form,
            "project": project, "turn_count": len(turn_ids) if turn_ids else None, "opts": self.model._meta,
            "selection": bool(selection),
        }
        return render(request, "admin/autolabel/job_start.html", context)


def render_admin_progress(job):
    from django.template.loader import render_to_string

    return render_to_string("autolabel/partials/admin_progress.html", {"job": job, "project": job.project})


@admin.action(description="Auto-label selected (start an LLM pre-labelling job)")
def autolabel_selected(modeladmin, request, queryset):
    model = queryset.model
    if model is Turn:
        turns = Turn.objects.filter(pk__in=queryset.values("pk"))
    elif model is Dialogue:
        turns = Turn.objects.filter(dialogue__in=queryset.values("pk"), is_qualification=False)
    else:
        turns = Turn.objects.filter(dialogue__project__in=queryset.values("pk"), is_qualification=False)
    # Without order_by(), the turns' ordering (dialogue, index) would take part in DISTINCT: two turns of one
    # project would fill the slice and a second project would pass unseen (its turns refused only later).
    projects = list(Project.objects.filter(pk__in=turns.order_by().values("dialogue__project")).order_by("name")[:3])
    if len(projects) != 1:
        names = ", ".join(project.name for project in projects[:2]) + (", …" if len(projects) > 2 else "")
        messages.error(request, (f"The selection holds turns of several projects ({names}): select turns of exactly "
                                 "one project (a job labels one project).") if projects else
                       "The selection holds no turn to label: select turns of exactly one project.")
        return None
    request.session[SESSION_KEY] = {"project": projects[0].pk, "turns": list(turns.values_list("pk", flat=True))}
    return redirect(reverse("admin:autolabel_job_start") + "?selection=1")


for _model in (Project, Dialogue, Turn):
    _model_admin = admin.site.get_model_admin(_model) if admin.site.is_registered(_model) else None
    if _model_admin is not None:
        _model_admin.actions = [*(_model_admin.actions or []), autolabel_selected]


# --- claim-triplet extraction jobs (RefChecker's extractor step; autolabel/extraction/services.py) -------------

from .models import ExtractionJob  # noqa: E402


class ExtractionJobAddForm(forms.ModelForm):
    class Meta:
        model = ExtractionJob
        fields = ("project", "kind", "profile", "model", "only_missing", "source_job")

    def clean(self):
        from autolabel.extraction.services import extraction_job_check

        data = super().clean()
        job = ExtractionJob(**{name: data.get(name) for name in ("project", "kind", "profile", "model", "source_job")})
        problem = extraction_job_check(job) if data.get("project") and data.get("profile") else None
        if problem:
            raise forms.ValidationError(problem)
        return data


@admin.register(ExtractionJob)
class ExtractionJobAdmin(LedProjectsAdmin, admin.ModelAdmin):
    """Leads start an extraction with "Add": project, endpoint profile, model; a worker runs it."""

    list_display = ("id", "project", "kind", "model", "status", "done_turns", "total_turns", "triplets_created", "faults",
                    "retries", "created_at")
    list_filter = ("status", "project")
    actions = ["cancel_extraction_jobs"]
    add_fields = ("project", "kind", "profile", "model", "only_missing", "source_job")

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ExtractionJobAddForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return self.add_fields
        return in_page_order([f.name for f in ExtractionJob._meta.fields if f.name != "id"], EXTRACTION_JOB_FIELDS)

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.get_fields(request, obj)

    def save_model(self, request, obj, form, change):
        from autolabel.extraction.services import extraction_job_enqueue, extraction_job_prepare

        if change:
            return
        obj.created_by = request.user
        extraction_job_prepare(obj)  # the form checked it (extraction_job_check)
        extraction_job_enqueue(obj.pk)

    @admin.action(description="Cancel the selected extraction jobs")
    def cancel_extraction_jobs(self, request, queryset):
        from autolabel.extraction.services import extraction_job_cancel

        for job in queryset.exclude(status__in=ExtractionJob.FINISHED):
            extraction_job_cancel(job)
        messages.success(request, "Cancellation requested.")
