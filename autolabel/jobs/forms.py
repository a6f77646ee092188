from django import forms
from django.forms.models import ModelChoiceIterator

from annotator.corpus.imports.selectors import import_numbers
from annotator.forms.fields import CountField, IdField
from annotator.models import ImportBatch

from autolabel.endpoints.selectors import endpoints_usable_by
from autolabel.models import LearnedJudge, LLMProfile, PromptVersion
from autolabel.jobs.learned import judge_offer
from autolabel.jobs.services import MAX_SAMPLES

LEARNED = "learned"  # the endpoint choice of the learned judge (no service: autolabel/jobs/learned.py)


class _EndpointChoices(ModelChoiceIterator):
    """The usable endpoint profiles, then the learned judge when the form offers one."""

    def __iter__(self):
        yield from super().__iter__()
        offer = self.field.offer
        if offer is not None:
            yield (LEARNED, offer.label if not offer.refusal else f"{offer.label} — refused: {offer.refusal}")

    def __len__(self):
        return super().__len__() + (self.field.offer is not None)


class _EndpointSelect(forms.Select):
    """A select whose learned-judge option is disabled when the judge may not label (the reason is in its text)."""

    refused = False

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        if self.refused and str(value) == LEARNED:
            option["attrs"]["disabled"] = True
        return option


class EndpointField(forms.ModelChoiceField):
    """An endpoint profile, or (``LEARNED``) the learned judge of ``offer``: cleaned to the LLMProfile or the
    LearnedJudge; a refused judge is answered with its refusal."""

    iterator = _EndpointChoices
    widget = _EndpointSelect

    def __init__(self, *args, **kwargs):
        self.offer = None
        super().__init__(*args, **kwargs)

    def offer_judge(self, offer):
        self.offer = offer
        self.widget.refused = bool(offer and offer.refusal)
        self.widget.choices = self.choices

    def to_python(self, value):
        if value == LEARNED:
            if self.offer is None:
                raise forms.ValidationError("This project has no trained learned judge: train one first.")
            if self.offer.refusal:
                raise forms.ValidationError(self.offer.refusal)
            return self.offer.judge
        return super().to_python(value)


class JobStartForm(forms.Form):
    """Start an auto-label job: the same form on the project page and in the admin.

    The page asks for the job's estimate as its fields change (``job_estimate``, htmx, with the same form); the
    page draws whatever fields the form has (partials/form_fields.html). With ``learned=True`` (the project's
    job page, not the admin, whose jobs may cover selected turns only) the endpoint choice also offers the
    learned judge (``judge_offer``): ``profile`` is then cleaned to a ``LearnedJudge``, and the LLM options
    (model, prompt version, samples, threshold, n) do not apply to it; the Batch API is refused.
    """

    profile = EndpointField(queryset=LLMProfile.objects.order_by("name"), label="Endpoint profile",
                            help_text="An LLM endpoint, or the learned judge (no service; the options below are "
                                      "the LLM's, except that it takes no Batch API).")
    model = forms.CharField(required=False, max_length=200, help_text="Blank: the profile's default model.")
    prompt_version = forms.ModelChoiceField(queryset=PromptVersion.objects.none(), required=False,
                                            help_text="Blank: the latest version.")
    samples = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=5)
    threshold = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=3,
                                   help_text="A sentence is hallucinated when at least this many samples say so.")
    use_n = forms.BooleanField(required=False, initial=True, label="Ask for all samples in one request (n)")
    batch_mode = forms.BooleanField(required=False, label="Batch API (half price, results within 24 h)")

    def __init__(self, *args, project=None, learned=False, blind=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.learned_offer = None
        if project is not None and learned:
            self.learned_offer = judge_offer(project, blind=blind)
            self.fields["profile"].offer_judge(self.learned_offer)
            # Some turns only, by import: the project page's own way to what the admin's "Auto-label selected" does.
            numbers = import_numbers(project)
            self.fields["turns_of_import"] = forms.ModelChoiceField(
                queryset=ImportBatch.objects.filter(project=project).order_by("pk"), required=False,
                label="Turns", empty_label="Every turn (outside the qualification set)",
                help_text="Or only the turns of one import.")
            self.fields["turns_of_import"].label_from_instance = (
                lambda batch: f"Only the turns of import #{numbers.get(batch.pk, '?')}: {batch.filename}")
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

    @property
    def learned_chosen(self) -> bool:
        return isinstance(getattr(self, "cleaned_data", {}).get("profile"), LearnedJudge)

    def clean(self):
        data = super().clean()
        profile = data.get("profile")
        if isinstance(profile, LearnedJudge):  # its votes and threshold are its own (learned/validation.py)
            if data.get("batch_mode"):
                self.add_error("batch_mode", "The learned judge calls no service: there is no Batch API to use.")
            if data.get("turns_of_import"):
                self.add_error("turns_of_import", "The learned judge labels every turn: choose every turn.")
            return data
        samples, threshold = data.get("samples"), data.get("threshold")
        if samples and threshold and threshold > samples:
            self.add_error("threshold", "The threshold cannot exceed the number of samples.")
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
