"""Forms of adjudication and gold: deciding a dispute, overriding gold, reopening."""

from django import forms
from django.core.exceptions import ValidationError

from ..domain.protocol.document import ProtocolError
from ..domain.vocabulary import AdjudicationOrder, DrawnTurnReview, ImportedGold
from ..forms.fields import MAX_ID, ProtocolChoicesForm, TextField, protocol_choice_field, walked_protocol_field
from ..json_input import json_loads_limited

PATH_LENGTH = 1000  # a walk of choice steps; text steps add their room (AdjudicationResolveForm)


def text_steps(protocol) -> list[str]:
    """The protocol's text steps (issue 42), in protocol order."""
    return [step_id for step_id in protocol.kind_steps() if protocol.step_kind(step_id) == "text"]


def is_path_value(value) -> bool:
    """A value a walk may hold at a step, before the protocol checks it: an answer or a text (str), a scale's
    point (int, not a bool) or a multiple step's answers (a list of str)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (str, int)):
        return True
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


class AdjudicationResolveForm(forms.Form):
    """``decision``: ``side-<assignment id>`` (side with that annotator) or ``protocol`` (the adjudicator's own
    walk, walked in the page and sent whole as ``path``: a JSON object of step -> answer ending on a label of
    the project's ``protocol``)."""

    def __init__(self, *args, protocol, **kwargs):
        super().__init__(*args, **kwargs)
        self.protocol = protocol
        # A walk carries the texts of the protocol's text steps (issue 42): room for them in ``path`` (a character
        # may take six in JSON), and one field per text step for the gold text the adjudicator writes or picks
        # from a side, whatever the decision (blank: the decision's own text stays).
        room = 0
        for step_id in text_steps(protocol):
            max_length = protocol.step(step_id).max_length
            room += 6 * max_length
            self.fields[f"text-{step_id}"] = TextField(max_length=max_length)
        if room:
            self.fields["path"] = forms.CharField(required=False, max_length=PATH_LENGTH + room)

    decision = forms.CharField(required=False, max_length=40)
    path = forms.CharField(required=False, max_length=PATH_LENGTH)
    reason = TextField()
    walked_protocol = walked_protocol_field()  # the page's protocol: a stale page is refused, not read anew

    def clean_decision(self):
        decision = self.cleaned_data["decision"]
        if decision.startswith("side-"):
            side = decision.removeprefix("side-")
            if not side.isascii() or not side.isdigit() or not 1 <= int(side) <= MAX_ID:
                raise ValidationError("Unknown side.")
            return {"side": int(side)}
        if decision == "protocol":
            return {"protocol": True}
        if decision:
            raise ValidationError("Pick a side or answer the questions first.")
        return {}

    def clean(self):
        cleaned = super().clean()
        decision = cleaned.get("decision") or {}
        if decision.get("protocol"):
            cleaned["decision"] = {"path": self._walked_path(cleaned.get("path", ""))}
        cleaned["texts"] = {step_id: cleaned[f"text-{step_id}"] for step_id in text_steps(self.protocol)
                            if (cleaned.get(f"text-{step_id}") or "").strip()}
        return cleaned

    def _walked_path(self, text: str) -> dict:
        try:
            path = json_loads_limited(text or "null")
        except ValueError:  # not JSON, too deep (JSONInputError is one)
            path = None
        if not isinstance(path, dict) or not all(isinstance(k, str) and is_path_value(v) for k, v in path.items()):
            raise ValidationError({"path": "Answer the questions first: the walk is missing."})
        try:
            self.protocol.validate(path)
        except ProtocolError as error:
            raise ValidationError({"path": str(error)}) from None
        if not self.protocol.label_of(path):
            raise ValidationError({"path": "Answer every question of your walk before saving it."})
        return path


class AdjudicationSettingsForm(forms.Form):
    """The leads' settings of adjudication, on the queue page: the queue's order and what imported gold is."""

    adjudication_order = forms.ChoiceField(choices=AdjudicationOrder.choices, label="Order of the queue")
    imported_gold = forms.ChoiceField(choices=ImportedGold.choices, label="Gold imported with the data")
    drawn_turn_review = forms.ChoiceField(choices=DrawnTurnReview.choices, label="Turns drawn for human checks of the pre-labeler become gold by")


class GoldOverrideForm(ProtocolChoicesForm):
    protocol_fields = {"label": "label"}
    label = protocol_choice_field("label")  # blank: the service asks for one
    reason = TextField()


class ReopenForm(forms.Form):
    reason = TextField()
    next = forms.CharField(required=False, max_length=2000)  # checked against the host by the view
