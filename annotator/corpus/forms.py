"""The filters of a lead's turn list."""

from django import forms

from ..forms.fields import IdField

MAX_FILTER = 200  # a topic, a generator model name, a search text


class TurnFilterForm(forms.Form):
    batch = IdField(required=False)
    topic = forms.CharField(required=False, max_length=MAX_FILTER)
    model = forms.CharField(required=False, max_length=MAX_FILTER)
    q = forms.CharField(required=False, max_length=MAX_FILTER)  # part of a dialogue's or turn's external id


class CsvExportOptionsForm(forms.Form):
    """The gold CSV's options (query parameters of its download): a byte order mark for Excel, and each annotator's
    own label beside the gold."""

    bom = forms.BooleanField(required=False, label="For Excel (UTF-8 with a byte order mark)")
    annotators = forms.BooleanField(required=False, label="With each annotator's own label beside the gold")
