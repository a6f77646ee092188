"""The forms of a project's own pages (its protocol)."""

import json

from django import forms
from django.core.exceptions import ValidationError

from ..domain.protocol.document import PROTOCOLS_DIR, load_shipped, shipped_names
from .protocol_mapping import mapping_from_fields
from .protocol_reading import ProtocolTextError, format_of, protocol_limits, read_protocol_text

UTF8_BYTES_PER_CHAR = 4  # an upload's size in bytes, before it is decoded: at most 4 per character


def _read(text: str, what: str, format: str = "json"):
    """The data of ``text`` within the protocol limits (protocol_reading), or a form error naming the field."""
    try:
        return read_protocol_text(text, format)
    except ProtocolTextError as refused:
        raise ValidationError(f"The {what} {refused.reason}.") from None


def document_format(text: str, chosen: str = "") -> str:
    """The format the editor's text is read in: the one the page set when it loaded a file, else JSON when the
    text starts with "{" (or "[", or "null": what JSON's own errors then explain), else YAML."""
    if chosen:
        return chosen
    return "json" if text.lstrip()[:1] in ("{", "[", "n", "") else "yaml"


def shipped_choices() -> list[tuple[str, str]]:
    """Each shipped protocol's file name and the name its document gives it ("CogniBench", ...), for a select:
    a lead chooses by the name the protocol goes by, not by its file."""
    return [(name, load_shipped(name).name) for name in shipped_names()]


class ProtocolForm(forms.Form):
    """A protocol document from a shipped one, an uploaded file or the text area (in that order of choice)."""

    SHIPPED, EDITED = "shipped", "edited"
    source = forms.ChoiceField(choices=[(SHIPPED, "A shipped protocol"), (EDITED, "The document below (or a file)")],
                               initial=EDITED, widget=forms.RadioSelect)
    shipped = forms.ChoiceField(required=False, label="Shipped protocol")
    # The document's length is checked with its reading (PROTOCOL_MAX_CHARS), as on every other route.
    document = forms.CharField(required=False, strip=False, label="Protocol document (JSON or YAML)",
                               widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code"}))
    # How the text above is written: set by the page when it loads a chosen file into the editor (a .yaml file
    # stays YAML there); empty: JSON when the text starts with "{", else YAML.
    document_format = forms.ChoiceField(required=False, choices=[("", "—"), ("json", "JSON"), ("yaml", "YAML")],
                                        widget=forms.HiddenInput)
    file = forms.FileField(required=False, label="Or load a file into the editor (.json, or .yaml): you see it and its "
                                                 "preview before you set it")
    label_mapping = forms.CharField(
        required=False, max_length=20_000, label="Label mapping (JSON), once the project has annotations",
        help_text='Instead of the selects: for each label of the current version, the new label it carries over to, or null: {"old_label": "new_label", "dropped_label": null}',
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "class": "code"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["shipped"].choices = [("", "—")] + shipped_choices()

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        max_chars = protocol_limits()[0]
        if upload and upload.size > UTF8_BYTES_PER_CHAR * max_chars:
            raise ValidationError(f"The file is {upload.size:,} bytes long; a protocol document is at most "
                                  f"{max_chars:,} characters (PROTOCOL_MAX_CHARS).")
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
                cleaned["parsed"] = _read(text, "file", format_of(cleaned["file"].name))
            except ValidationError as error:
                raise ValidationError({"file": error.messages}) from None
        elif cleaned.get("document", "").strip():
            try:
                cleaned["parsed"] = _read(cleaned["document"], "document",
                                          document_format(cleaned["document"], cleaned.get("document_format")))
            except ValidationError as error:
                raise ValidationError({"document": error.messages}) from None
        else:
            raise ValidationError({"document": "Paste a document, upload a file or choose a shipped protocol."})
        mapping_text = cleaned.get("label_mapping", "").strip()
        if mapping_text:  # the JSON, when written, rather than the selects
            try:
                cleaned["mapping"] = _read(mapping_text, "label mapping")
            except ValidationError as error:
                raise ValidationError({"label_mapping": error.messages}) from None
        else:
            cleaned["mapping"] = mapping_from_fields(self.data)
        return cleaned


class ProtocolPreviewForm(forms.Form):
    """The text being edited, for the live preview (nothing is saved)."""

    document = forms.CharField(required=False, strip=False)  # read within the limits by the view
    document_format = ProtocolForm.base_fields["document_format"]
    shipped = forms.ChoiceField(required=False)
    source = forms.ChoiceField(required=False, choices=[("", "—"), *ProtocolForm.base_fields["source"].choices])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["shipped"].choices = [("", "—")] + shipped_choices()
