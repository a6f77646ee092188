"""Forms of adjudication and gold: answering a dispute's questions, deciding it, overriding gold, reopening."""

from django import forms
from django.core.exceptions import ValidationError

from ..vocabulary import Answer, Label, Step
from .fields import MAX_ID, TextField, choice_field


class AdjudicationAnswerForm(forms.Form):
    """The adjudicator answers the next protocol question, or (``undo``) takes the last answer back."""

    undo = forms.CharField(required=False, max_length=10)
    step = choice_field(Step.choices, "step")  # blank: the service says which question is asked
    value = choice_field(Answer.choices, "answer")


class AdjudicationResolveForm(forms.Form):
    """``decision``: ``side-<assignment id>`` (side with that annotator) or ``protocol`` (the adjudicator's walk)."""

    decision = forms.CharField(required=False, max_length=40)
    reason = TextField()

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


class GoldOverrideForm(forms.Form):
    label = choice_field(Label.choices, "label")  # blank: the service asks for one
    reason = TextField()


class ReopenForm(forms.Form):
    reason = TextField()
    next = forms.CharField(required=False, max_length=2000)  # checked against the host by the view
