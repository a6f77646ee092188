"""Forms of the claims views: the triplet and severity panels, triplet disputes, a lead's triplets of a turn."""

from django import forms
from django.core.exceptions import ValidationError

from ..domain.claims import MAX_JUSTIFICATION_LENGTH, ClaimsRuleError, parse_triplet_label
from ..domain.vocabulary import Severity
from ..forms.fields import IdField, TextField
from ..work.forms import ActionForm

# A triplet part; the services trim it and refuse an empty one with their own message.
MAX_TRIPLET_PART = 1000
# The project's error types are free names (Face4RAG's list by default); the service checks membership.
MAX_ERROR_TYPE = 100


class TripletLabelField(forms.CharField):
    """A triplet label as ``claims.parse_triplet_label`` reads it (case-insensitive, 'bad triplet' too)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 50)
        super().__init__(**kwargs)

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return ""
        try:
            return parse_triplet_label(value).value
        except ClaimsRuleError as error:
            raise ValidationError(str(error), code="invalid_choice") from None


class TripletPartsForm(forms.Form):
    head = TextField(max_length=MAX_TRIPLET_PART)
    relation = TextField(max_length=MAX_TRIPLET_PART)
    tail = TextField(max_length=MAX_TRIPLET_PART)
    sentence = IdField(required=False)


# --- the panels of the annotation screen (writes on the annotator's assignment)

class TripletLabelForm(ActionForm):
    triplet = IdField()
    label = TripletLabelField()  # blank clears the label


class TripletAddForm(ActionForm, TripletPartsForm):
    pass


class TripletEditForm(ActionForm, TripletPartsForm):
    triplet = IdField()


class TripletDeleteForm(ActionForm):
    triplet = IdField()


class SeverityForm(ActionForm):
    sentence = IdField()
    severity = forms.TypedChoiceField(choices=[("", "---"), *Severity.choices], coerce=int, empty_value=None,
                                      required=False)  # blank clears it
    justification = TextField(max_length=MAX_JUSTIFICATION_LENGTH)


class ErrorTypeForm(ActionForm):
    sentence = IdField()
    error_type = forms.CharField(required=False, max_length=MAX_ERROR_TYPE)


PANEL_FORMS = {
    "triplet_label": TripletLabelForm, "triplet_add": TripletAddForm, "triplet_edit": TripletEditForm,
    "triplet_delete": TripletDeleteForm, "severity": SeverityForm, "error_type": ErrorTypeForm,
}


# --- adjudicators and leads

class DisputeResolveForm(forms.Form):
    label = TripletLabelField()  # blank: the service asks for one
    reason = TextField()


class TurnTripletAddForm(TripletPartsForm):
    pass


class TurnTripletEditForm(TripletPartsForm):
    triplet = IdField()


class TurnTripletDeleteForm(forms.Form):
    triplet = IdField()


class TurnTripletOverrideForm(forms.Form):
    triplet = IdField()
    label = TripletLabelField()
    reason = TextField()


TURN_TRIPLET_FORMS = {
    "add": TurnTripletAddForm, "edit": TurnTripletEditForm, "delete": TurnTripletDeleteForm,
    "override": TurnTripletOverrideForm,
}
