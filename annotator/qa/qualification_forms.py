"""The lead's qualification forms: the set and its pass mark, automatic retries, the reasons of its gold."""

from django import forms

from ..domain.qualification import MAX_AUTO_RETRIES
from ..forms.fields import IdListField, TextField


class QualificationSetForm(forms.Form):
    turns = IdListField(required=False)  # none: the project has no qualification set
    # A percentage; the service also refuses 0 (a set nobody could fail).
    pass_mark = forms.FloatField(label="Pass mark (%)", min_value=0, max_value=100)


class QualificationRetriesForm(forms.Form):
    qualification_auto_retries = forms.IntegerField(
        label="Automatic retries", min_value=0, max_value=MAX_AUTO_RETRIES,
        help_text="After a failed attempt the next one opens by itself while the annotator has failed at most this "
                  "many times; after that a lead allows each retry (0: always a lead).",
    )


class GoldReasonForm(forms.Form):
    """Why a qualification sentence's gold label is right; blank clears it (the protocol's explanation is shown)."""

    reason = TextField(label="Reason")
