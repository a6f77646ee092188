"""The lead's qualification set form: which turns, and the pass mark."""

from django import forms

from ..forms.fields import IdListField


class QualificationSetForm(forms.Form):
    turns = IdListField(required=False)  # none: the project has no qualification set
    # A percentage; the service also refuses 0 (a set nobody could fail).
    pass_mark = forms.FloatField(label="Pass mark (%)", min_value=0, max_value=100)
