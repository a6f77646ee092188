"""The decision panel's per-step route (/a/<id>/act/answer/) takes a choice's answer; a multiple, scale or text
step's value is a 400 naming the step and the page's save route that takes it (issue 42), never a 500, and
nothing is saved."""

import html

import pytest

from annotator.models import SentenceAnnotation
from tests.factories_workspace import act, halludetect_slot

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(client):
    assignment = halludetect_slot(client)
    return client, assignment, assignment.turn.sentences.order_by("index").first()


def post(client, assignment, sentence, htmx=True, **data):
    from django.urls import reverse

    if htmx:
        return act(client, assignment, "answer", sentence=sentence.pk, version=assignment.version, **data)
    return client.post(reverse("annotate_act", args=[assignment.pk, "answer"]),
                       {"sentence": sentence.pk, "version": assignment.version, **data})


def test_a_choice_is_answered_on_this_route(setup):
    client, assignment, sentence = setup
    assert post(client, assignment, sentence, step="supported", value="no").status_code == 200
    assert SentenceAnnotation.objects.get(sentence=sentence).path == {"supported": "no"}


@pytest.mark.parametrize("step, kind, values", [
    ("error_types", "multiple", ["fabricated", '["fabricated"]', ""]),
    ("severity", "scale", ["4", "yes", "4.5"]),
    ("justification", "text", ["No such case.", "yes", "x" * 3000]),
])
def test_a_kind_step_s_value_is_a_400_naming_the_step_and_the_save_route(setup, step, kind, values):
    client, assignment, sentence = setup
    assert post(client, assignment, sentence, step="supported", value="no").status_code == 200
    for value in values:
        for htmx in (True, False):
            response = post(client, assignment, sentence, htmx=htmx, step=step, value=value)
            assert response.status_code == 400, (value, response.status_code)
            text = html.unescape(response.content.decode())
            assert f"Step '{step}'" in text and f"is a {kind} step" in text, text
            assert "save route (/a/<id>/sync/)" in text
    assert SentenceAnnotation.objects.get(sentence=sentence).path == {"supported": "no"}


def test_an_unknown_step_or_answer_is_still_a_400(setup):
    client, assignment, sentence = setup
    for data in ({"step": "nowhere", "value": "yes"}, {"step": "supported", "value": "perhaps"},
                 {"step": ["severity", "x"], "value": "4"}, {}):
        assert post(client, assignment, sentence, **data).status_code == 400, data
