from django import forms

from annotator.forms.fields import CountField, IdField

from autolabel.endpoints.selectors import endpoints_usable_by
from autolabel.models import LLMProfile, PromptVersion
from autolabel.jobs.services import MAX_SAMPLES


class JobStartForm(forms.Form):
    """Start an auto-label job: the same form on the project page and in the admin.

    The page asks for the job's estimate as its fields change (``job_estimate``, htmx, with the same form); a
    kind of judge added later adds its fields here and its branch in ``estimate_of``/``start``, the page
    draws whatever fields the form has (partials/form_fields.html).
    """

    profile = forms.ModelChoiceField(queryset=LLMProfile.objects.order_by("name"), label="Endpoint profile")
    model = forms.CharField(required=False, max_length=200, help_text="Blank: the profile's default model.")
    prompt_version = forms.ModelChoiceField(queryset=PromptVersion.objects.none(), required=False,
                                            help_text="Blank: the latest version.")
    samples = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=5)
    threshold = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=3,
                                   help_text="A sentence is hallucinated when at least this many samples say so.")
    use_n = forms.BooleanField(required=False, initial=True, label="Ask for all samples in one request (n)")
    batch_mode = forms.BooleanField(required=False, label="Batch API (half price, results within 24 h)")

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        if project is not None:
            usable = endpoints_usable_by(project)
            self.fields["profile"].queryset = usable
            self.fields["profile"].label_from_instance = (
                lambda p: p.name if p.project_id is None else f"{p.name} (this project's)")
            self.fields["prompt_version"].queryset = PromptVersion.objects.filter(project=project)
            # The profile the project's last job used, or the only one there is: what a lead starts with.
            last = project.autolabel_jobs.order_by("-pk").values_list("profile_id", flat=True).first()
            profiles = list(usable.values_list("pk", flat=True)[:2])
            self.fields["profile"].initial = last or (profiles[0] if len(profiles) == 1 else None)

    def clean(self):
        data = super().clean()
        samples, threshold = data.get("samples"), data.get("threshold")
        if samples and threshold and threshold > samples:
            self.add_error("threshold", "The threshold cannot exceed the number of samples.")
        profile = data.get("profile")
        if data.get("batch_mode") and profile and not profile.supports_batch:
            self.add_error("batch_mode", f"The profile {profile.name} does not offer the Batch API.")
        return data


class PredictionsQueryForm(forms.Form):
    """``?job=`` of a turn's predictions: one job's, or (blank) the latest of each sentence."""

    job = IdField(required=False)


class JobPageQueryForm(forms.Form):
    """The job page's query: which polled fragment (``partial``) and, for the progress poll, the id of the
    newest prediction the page already shows (``after``)."""

    partial = forms.ChoiceField(choices=[("", "the page"), ("progress", "progress"), ("admin_progress", "admin")],
                                required=False)
    after = CountField(required=False)
