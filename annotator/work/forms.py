"""Forms of the annotation workspace: one per action of the annotation screen, and the lead's assignment list."""

from django import forms

from .services import MAX_NOTE_LENGTH
from ..forms.fields import (
    MAX_REQUEST_ID, CountField, IdField, ProtocolChoicesForm, TextField, protocol_choice_field,
)

# Seconds spent on a sentence since the last action: the service clamps each report to an hour; this
# bound only refuses numbers no clock gives (a tab left open for a year sends about 3e7).
MAX_SECONDS = 10**9


class SentenceQueryForm(forms.Form):
    """``?sentence=`` of the annotation screen: which sentence's panel to show."""

    sentence = IdField(required=False)


class ActionForm(ProtocolChoicesForm):
    """What every write of the screen carries: the version it saw and its idempotency key."""

    version = CountField(required=False)
    request_id = forms.CharField(required=False, max_length=MAX_REQUEST_ID)

    def common(self) -> dict:
        return {"request_id": self.cleaned_data["request_id"], "expected_version": self.cleaned_data["version"]}


class SentenceActionForm(ActionForm):
    """A write on one sentence, with the seconds spent on it since the last action."""

    sentence = IdField()
    seconds = forms.FloatField(required=False, min_value=0, max_value=MAX_SECONDS)

    def common(self) -> dict:
        return {**super().common(), "seconds": self.cleaned_data["seconds"] or 0}


class TimeForm(ProtocolChoicesForm):
    """The time beacon sent when the annotator leaves a sentence."""

    sentence = IdField()
    seconds = forms.FloatField(required=False, min_value=0, max_value=MAX_SECONDS)


class AnswerForm(SentenceActionForm):
    """One choice answered (the decision panel's buttons and keys without the page's script).

    A multiple, scale or text step's value (a list, an integer, a text) does not fit one posted choice: it is
    refused naming the step, and the page's save route (/a/<id>/sync/, which parses each kind's value) takes it."""

    protocol_fields = {"step": "step", "value": "answer"}
    step = protocol_choice_field("step", required=True)
    value = protocol_choice_field("answer", required=True)

    def __init__(self, *args, protocol=None, **kwargs):
        super().__init__(*args, protocol=protocol, **kwargs)
        self.protocol = protocol

    def clean(self):
        cleaned = super().clean()
        step = cleaned.get("step")
        kind = self.protocol.step_kind(step) if step and self.protocol is not None else "choice"
        if kind != "choice":
            # The value's own error (an unknown answer) would only hide why: this route takes no such value.
            self.errors.pop("value", None)
            cleaned.pop("value", None)
            question = self.protocol.step(step).question
            raise forms.ValidationError(
                f"Step '{step}' (“{question}”) is a {kind} step: this route takes a choice's answer only; the "
                f"annotation page's save route (/a/<id>/sync/) takes a {kind} step's value.")
        return cleaned


class PickForm(SentenceActionForm):
    protocol_fields = {"label": "label"}
    label = protocol_choice_field("label", required=True)


class UndoForm(SentenceActionForm):
    pass


class NoteForm(SentenceActionForm):
    note = TextField(max_length=MAX_NOTE_LENGTH)


class EvidenceAddForm(SentenceActionForm):
    """Character offsets of the selection, counted on the text the browser shows.

    Blank (e pressed with nothing selected) counts as 0: the service then says to select some text first.
    """

    start = CountField(required=False)
    end = CountField(required=False)

    def clean_start(self):
        return self.cleaned_data["start"] or 0

    def clean_end(self):
        return self.cleaned_data["end"] or 0


class EvidenceRemoveForm(SentenceActionForm):
    evidence = IdField()


class SubmitForm(ActionForm):
    """Submit the turn, then go on to the next one (the default: an annotator's day is one turn after another)
    or stop at the queue."""

    NEXT, QUEUE = "next", "queue"
    then = forms.ChoiceField(choices=[(NEXT, NEXT), (QUEUE, QUEUE)], required=False)


ACTION_FORMS = {
    "answer": AnswerForm, "pick": PickForm, "undo": UndoForm, "note": NoteForm, "evidence_add": EvidenceAddForm,
    "evidence_remove": EvidenceRemoveForm, "submit": SubmitForm, "time": TimeForm,
}


class ReleaseForm(forms.Form):
    reason = TextField()


class ReassignForm(forms.Form):
    annotator = IdField()


class ReleaseStaleForm(forms.Form):
    """How long a slot must have been idle to be released (a key of ``STALE_CHOICES``)."""

    stale = forms.ChoiceField(required=False)

    def __init__(self, *args, stale_choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["stale"].choices = [("", "---"), *((key, key) for key in stale_choices)]
