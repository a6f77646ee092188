"""The forms of a project's own pages (its protocol)."""

import json

import yaml
from django import forms
from django.core.exceptions import ValidationError

from ..domain.protocol_document import PROTOCOLS_DIR, shipped_names

MAX_DOCUMENT = 500_000  # characters of a protocol document (the shipped ones are under 20,000)


def _json(text: str, what: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValidationError(f"The {what} is not JSON: {error.msg} (line {error.lineno}, column {error.colno}).") from None


def _yaml(text: str):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValidationError(f"The file is not YAML: {error}") from None


class ProtocolForm(forms.Form):
    """A protocol document from a shipped one, an uploaded file or the text area (in that order of choice)."""

    SHIPPED, EDITED = "shipped", "edited"
    source = forms.ChoiceField(choices=[(SHIPPED, "A shipped protocol"), (EDITED, "The document below (or a file)")],
                               initial=EDITED, widget=forms.RadioSelect)
    shipped = forms.ChoiceField(required=False, label="Shipped protocol")
    document = forms.CharField(required=False, max_length=MAX_DOCUMENT, strip=False, label="Protocol document (JSON)",
                               widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code"}))
    file = forms.FileField(required=False, label="Or upload a document (.json, or .yaml)")
    label_mapping = forms.CharField(
        required=False, max_length=20_000, label="Label mapping (JSON), once the project has annotations",
        help_text='For each label of the current version, the new label it carries over to, or null: {"old_label": "new_label", "dropped_label": null}',
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "class": "code"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["shipped"].choices = [("", "—")] + [(name, name) for name in shipped_names()]

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload and upload.size > MAX_DOCUMENT:
            raise ValidationError(f"The file is larger than {MAX_DOCUMENT:,} bytes.")
        return upload

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        if cleaned["source"] == self.SHIPPED:
            if not cleaned.get("shipped"):
                raise ValidationError({"shipped": "Choose a shipped protocol."})
            cleaned["parsed"] = json.loads((PROTOCOLS_DIR / f"{cleaned['shipped']}.json").read_text())
        elif cleaned.get("file"):
            try:
                text = cleaned["file"].read().decode("utf-8")
            except UnicodeDecodeError:
                raise ValidationError({"file": "The file is not UTF-8 text."}) from None
            try:
                if cleaned["file"].name.lower().endswith((".yaml", ".yml")):
                    cleaned["parsed"] = _yaml(text)
                else:
                    cleaned["parsed"] = _json(text, "file")
            except ValidationError as error:
                raise ValidationError({"file": error.messages}) from None
        elif cleaned.get("document", "").strip():
            try:
                cleaned["parsed"] = _json(cleaned["document"], "document")
            except ValidationError as error:
                raise ValidationError({"document": error.messages}) from None
        else:
            raise ValidationError({"document": "Paste a document, upload a file or choose a shipped protocol."})
        mapping_text = cleaned.get("label_mapping", "").strip()
        if mapping_text:
            try:
                cleaned["mapping"] = _json(mapping_text, "label mapping")
            except ValidationError as error:
                raise ValidationError({"label_mapping": error.messages}) from None
        else:
            cleaned["mapping"] = None
        return cleaned


class ProtocolPreviewForm(forms.Form):
    """The text being edited, for the live preview (nothing is saved)."""

    document = forms.CharField(required=False, max_length=MAX_DOCUMENT, strip=False)
    shipped = forms.ChoiceField(required=False)
    source = forms.ChoiceField(required=False, choices=[("", "—"), *ProtocolForm.base_fields["source"].choices])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["shipped"].choices = [("", "—")] + [(name, name) for name in shipped_names()]
