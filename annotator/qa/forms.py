"""Forms of the QA loop: asking, answering, promoting to the guideline, feedback, the review page's filters."""

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator

from .services import MAX_BODY
from ..forms.fields import (
    MAX_REQUEST_ID, MAX_TEXT, IdField, ProtocolChoicesForm, TextField, choice_field, protocol_choice_field,
    walked_protocol_field,
)
from ..gold.forms import PATH_LENGTH, is_path_value, text_steps
from ..json_input import json_loads_limited


class AskForm(forms.Form):
    """A question from the annotation screen about a turn, or one of its sentences."""

    turn = IdField()
    sentence = IdField(required=False)
    body = TextField(max_length=MAX_BODY)  # blank: the service asks for a question
    path = forms.CharField(required=False, max_length=MAX_TEXT)  # a client's own decision path, as JSON

    def clean_path(self):
        raw = self.cleaned_data["path"]
        if not raw:
            return {}
        try:
            path = json_loads_limited(raw)
        except ValueError:  # not JSON, too deep (JSONInputError is one)
            raise ValidationError("The decision path could not be read.") from None
        if not isinstance(path, dict):
            raise ValidationError("The decision path could not be read.")
        return path


class MessageForm(forms.Form):
    """A lead's answer or the asker's follow-up in a question's thread."""

    body = TextField(max_length=MAX_BODY)


class PromoteForm(ProtocolChoicesForm):
    """Promote a question to the guideline examples; blank fields take the question's own values."""

    protocol_fields = {"step": "step", "expected_answer": "answer"}
    step = protocol_choice_field("step")
    expected_answer = protocol_choice_field("answer")
    text = TextField(empty_value=None)
    explanation = TextField(empty_value=None)


class AmendForm(ProtocolChoicesForm):
    """The label the inbox's walk reached and, on a protocol with step kinds (issue 42), the walk itself (``path``,
    a JSON object with the kind steps' values: the service checks it ends on the label)."""

    protocol_fields = {"label": "label"}
    label = protocol_choice_field("label")  # blank: the service asks for one
    request_id = forms.CharField(required=False, max_length=MAX_REQUEST_ID)
    walked_protocol = walked_protocol_field()  # the page's protocol: a stale page is refused, not read anew
    path = forms.CharField(required=False, max_length=PATH_LENGTH)

    def __init__(self, *args, protocol=None, **kwargs):
        super().__init__(*args, protocol=protocol, **kwargs)
        # Room for the texts of the text steps (a character may take six in JSON), as the adjudicator's walk has.
        room = sum(6 * protocol.step(step).max_length for step in text_steps(protocol)) if protocol is not None else 0
        self.fields["path"].max_length = PATH_LENGTH + room
        self.fields["path"].validators = [v for v in self.fields["path"].validators
                                          if not isinstance(v, MaxLengthValidator)] + [MaxLengthValidator(PATH_LENGTH + room)]

    def clean_path(self):
        text = self.cleaned_data["path"]
        if not text:
            return None
        try:
            path = json_loads_limited(text)
        except ValueError:  # not JSON, too deep
            path = None
        if not isinstance(path, dict) or not all(isinstance(k, str) and is_path_value(v) for k, v in path.items()):
            raise ValidationError("The walk sent could not be read: walk the questions again.")
        return path


class FeedbackForm(ProtocolChoicesForm):
    protocol_fields = {"expected_label": "label"}
    comment = TextField()
    expected_label = protocol_choice_field("label")


class ReviewQueryForm(forms.Form):
    """The review page's filters: whose work, and the seed of the random sample (``?page=`` is the
    paginator's: it reads any value, a page past the last one showing the last)."""

    annotator = IdField(required=False)
    seed = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1)
