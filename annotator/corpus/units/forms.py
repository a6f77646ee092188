"""Forms of the unit pages: an annotator's flag, a lead's split, merge and dismissal."""

from django import forms

from annotator.domain.vocabulary import UnitFlagKind
from annotator.forms.fields import CountField, IdField, TextField, choice_field


class UnitFlagForm(forms.Form):
    """Flag a unit of the annotator's turn as mis-segmented (again: change the open flag)."""

    sentence = IdField(label="Unit")
    kind = choice_field(UnitFlagKind.choices, "kind of flag", required=True, label="What is wrong")
    note = TextField()


class UnitSplitForm(forms.Form):
    """Split a unit at a character offset into its text (snapped to the nearest gap between words)."""

    sentence = IdField(label="Unit")
    offset = CountField(label="Split point", widget=forms.NumberInput, error_messages={
        "required": "Choose where to split: click the gap between two words of the unit."})
    reset = forms.BooleanField(required=False, label="Reset this turn's annotations")
    reason = TextField()


class UnitMergeForm(forms.Form):
    """Merge a unit with the next one."""

    sentence = IdField(label="Unit")
    reset = forms.BooleanField(required=False, label="Reset this turn's annotations")
    reason = TextField()


class FlagDismissForm(forms.Form):
    resolution = TextField(required=True, label="Why the flag is dismissed")
