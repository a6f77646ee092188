"""The form of a project's LLM endpoints page: add or edit an endpoint (the key's variable, never the key)."""

from django import forms

from autolabel.endpoints.policy import endpoint_refusal, key_refusal
from autolabel.models import LLMProfile

MAX_CONCURRENCY = 64
MAX_TIMEOUT_SECONDS = 120


class EndpointForm(forms.ModelForm):
    input_price_per_million = forms.DecimalField(
        required=False, min_value=0, max_digits=10, decimal_places=4, label="Price per million prompt tokens",
        help_text="Optional: the estimate and the job's cost use it.")
    output_price_per_million = forms.DecimalField(
        required=False, min_value=0, max_digits=10, decimal_places=4, label="Price per million reply tokens")
    base_url = forms.URLField(max_length=500, assume_scheme="https", label="Base URL",
                              widget=forms.URLInput(attrs={"placeholder": "http://127.0.0.1:8765/v1"}),
                              help_text="An OpenAI-compatible address ending in /v1, on a host the site allows.")
    concurrency = forms.IntegerField(min_value=1, max_value=MAX_CONCURRENCY, initial=8,
                                     help_text="At most this many requests in flight per job.")
    timeout_seconds = forms.FloatField(min_value=1, max_value=MAX_TIMEOUT_SECONDS, initial=60,
                                       label="Timeout (seconds)", help_text="How long one request may take.")

    class Meta:
        model = LLMProfile
        fields = ["name", "base_url", "default_model", "api_key_env", "input_price_per_million",
                  "output_price_per_million", "supports_n", "concurrency", "timeout_seconds"]
        labels = {"default_model": "Model",
                  "api_key_env": "Environment variable holding the key", "supports_n": "Takes n (several samples in one request)"}
        help_texts = {
            "api_key_env": "Its name only (e.g. OPENAI_API_KEY): the key stays in the server's environment, "
                           "and goes only to the hosts the site allows for it. Blank: no key.",
        }

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        # Before validation: the model's constraints then judge the name among this project's endpoints (a
        # lead may reuse the name of a site-wide profile), and clean_name says so in words.
        self.instance.project = project

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        same = LLMProfile.objects.filter(project=self.project, name=name)
        if self.instance.pk:
            same = same.exclude(pk=self.instance.pk)
        if same.exists():
            raise forms.ValidationError("The project has an endpoint of that name already.")
        return name

    def clean_api_key_env(self):
        variable = self.cleaned_data.get("api_key_env", "").strip()
        if variable and not variable.replace("_", "").isalnum():
            raise forms.ValidationError("An environment variable name: letters, digits and underscores.")
        return variable

    def clean(self):
        data = super().clean()
        for price in ("input_price_per_million", "output_price_per_million"):
            if data.get(price) is None and price not in self.errors:
                data[price] = 0
                setattr(self.instance, price, 0)
        base_url = data.get("base_url")
        if base_url:
            if refusal := endpoint_refusal(base_url):
                self.add_error("base_url", refusal)
            elif refusal := key_refusal(data.get("api_key_env", ""), base_url):
                self.add_error("api_key_env", refusal)
        return data
