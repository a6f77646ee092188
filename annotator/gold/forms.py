"""Forms of adjudication and gold: deciding a dispute, overriding gold, reopening."""

from django import forms
from django.core.exceptions import ValidationError

from ..domain.protocol_document import ProtocolError
from ..domain.vocabulary import AdjudicationOrder, DrawnTurnReview, ImportedGold
from ..forms.fields import MAX_ID, ProtocolChoicesForm, TextField, protocol_choice_field, walked_protocol_field
from ..json_input import json_loads_limited


class AdjudicationResolveForm(forms.Form):
    """``decision``: ``side-<assignment id>`` (side with that annotator) or ``protocol`` (the adjudicator's own
    walk, walked in the page and sent whole as ``path``: a JSON object of step -> answer ending on a label of
    the project's ``protocol``)."""

    def __init__(self, *args, protocol, **kwargs):
        super().__init__(*args, **kwargs)
        self.protocol = protocol

    decision = forms.CharField(required=False, max_length=40)
    path = forms.CharField(required=False, max_length=1000)
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
        return cleaned

    def _walked_path(self, text: str) -> dict:
        try:
            path = json_loads_limited(text or "null")
        except ValueError:  # not JSON, too deep (JSONInputError is one)
            path = None
        if not isinstance(path, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in path.items()):
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
