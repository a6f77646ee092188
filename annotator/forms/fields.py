"""Fields shared by the forms of the HTML views."""

from django import forms
from django.core.exceptions import ValidationError

# The largest id a form accepts: 18 digits, so any id fits a signed 64-bit column (as in the API).
MAX_ID = 999_999_999_999_999_999
# Free texts (reasons, comments, notes) of the HTML forms; the API's serializers use the same bound.
MAX_TEXT = 5000
# A client's idempotency key (AnnotationEvent.request_id).
MAX_REQUEST_ID = 64


class IdField(forms.IntegerField):
    """A database id: a positive integer that fits a 64-bit column."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        kwargs.setdefault("widget", forms.HiddenInput)
        super().__init__(**kwargs)


class CountField(forms.IntegerField):
    """A non-negative integer (a version, a character offset) that fits a 64-bit column."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)


class IdListField(forms.Field):
    """Several ids under one name (checkboxes): each one as ``IdField`` checks it."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {"invalid_list": "Enter a list of ids."}

    def to_python(self, value):
        if value in self.empty_values:
            return []
        if not isinstance(value, (list, tuple)):
            raise ValidationError(self.error_messages["invalid_list"], code="invalid_list")
        one = IdField()
        return [one.clean(item) for item in value]


class TextField(forms.CharField):
    """Free text, kept as typed (the services trim it), at most ``MAX_TEXT`` characters by default."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", MAX_TEXT)
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)


def choice_field(choices, noun="value", **kwargs):
    """A choice among a vocabulary's values (``Label.choices``...); blank allowed unless ``required``."""
    kwargs.setdefault("required", False)
    kwargs.setdefault("error_messages", {"invalid_choice": f"Unknown {noun} %(value)s."})
    return forms.ChoiceField(choices=[("", "---"), *choices] if not kwargs["required"] else choices, **kwargs)


def protocol_choices(protocol, kind: str) -> list[tuple[str, str]]:
    """The choices of a label, step or answer field: the project's protocol's (every answer of any step)."""
    from ..domain.protocol.groups import reading

    read = reading(protocol)
    if kind == "label":
        return [(label, read.label_name(label)) for label in read.labels]
    if kind == "step":
        return [(step, read.step_questions[step]) for step in read.steps]
    answers = {}
    for step in read.steps:
        for option in read.step_options[step]:
            answers.setdefault(option["value"], option["label"])
    return list(answers.items())


class ProtocolChoicesForm(forms.Form):
    """A form whose label, step and answer fields take their choices from the project's protocol.

    ``protocol_fields`` maps a field name to ``"label"``, ``"step"`` or ``"answer"``; the form is built with
    ``protocol=`` (the project's), so a value outside it is a 400 naming it, like any unknown choice.
    """

    protocol_fields: dict[str, str] = {}

    def __init__(self, *args, protocol=None, **kwargs):
        super().__init__(*args, **kwargs)
        if protocol is None and self.protocol_fields:
            from ..domain.protocol.document import default_protocol

            protocol = default_protocol()
        for name, kind in self.protocol_fields.items():
            field = self.fields[name]
            choices = protocol_choices(protocol, kind)
            field.choices = choices if field.required else [("", "---"), *choices]


def protocol_choice_field(noun: str, **kwargs):
    """A choice field whose choices a ``ProtocolChoicesForm`` sets from the project's protocol."""
    return choice_field([], noun, **kwargs)


def error_text(form) -> str:
    """The form's errors as one sentence a person can read ("Sentence: Enter a whole number.")."""
    parts = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        prefix = f"{field.label or name.replace('_', ' ').capitalize()}: " if field is not None else ""
        parts.append(prefix + " ".join(str(error) for error in errors))
    return " ".join(parts) or "The request could not be read."


def walked_protocol_field():
    """The checksum of the protocol document a page walks, sent with its save (a hidden field): the view compares
    it with the project's current one (``views.common.protocol_changed_answer``), so that a page opened before a
    lead changed the protocol is refused instead of having its walk read under another document. Blank (a
    client that does not send it): not compared."""
    return forms.CharField(required=False, max_length=64)
