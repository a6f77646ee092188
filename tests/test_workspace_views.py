"""The workspace pages through the test client: the screen, its panel, conflicts, submit, query counts.

Who may see and post what, and escaping: tests/test_workspace_access_views.py."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import AnnotationEvent, Assignment, GuidelineExample, SentenceAnnotation
from annotator.work.services import annotation_answer_step
from annotator.domain.vocabulary import Label, Step
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, UserFactory
from tests.factories_workspace import (
    HX,
    NO_PASSWORD,
    act,
    annotators,
    answer_label,
    claimed,
    label_all,
    numbered_sentences,
    project_with_turns,
)

pytestmark = pytest.mark.django_db


def test_start_claims_a_turn_and_opens_the_annotation_screen(client):
    project, turns = project_with_turns(2)
    user, = annotators(project, 1)
    client.force_login(user)
    page = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "Start" in page and "0 of 4 annotation slots submitted" in page
    response = client.post(reverse("workspace_next", args=[project.slug]))
    assignment = Assignment.objects.get(annotator=user)
    assert response["Location"] == reverse("annotate", args=[assignment.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Sentence 1 of 3" in page and "Is the sentence relevant?" in page
    assert turns[0].dialogue.reference in page
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "Continue" in queue and "0 / 3" in queue


def test_no_work_left_says_so(client):
    project, turns = project_with_turns(1, overlap=1)
    first, second = annotators(project, 2)
    claimed(project, first)
    client.force_login(second)
    response = client.post(reverse("workspace_next", args=[project.slug]), follow=True)
    assert "no turn left for you" in response.content.decode()


def test_answering_returns_only_the_panel_with_the_chip_swapped_out_of_band(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    sentence = turns[0].sentences.get(index=2)
    client.force_login(user)
    response = act(client, assignment, "answer", sentence=sentence.pk, step="relevance", value="irrelevant",
                   version=0, request_id="a1")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith("<section id=\"decision-panel\"")
    assert "<html" not in html
    assert f'<span id="chip-{sentence.pk}" class="chip chip-irrelevant" hx-swap-oob="true">Irrelevant</span>' in html
    assert 'id="ws-progress" hx-swap-oob="true">1 of 3 sentences labelled' in html
    # Neither sentence has evidence: the reference highlights do not change, so it is not sent again.
    assert 'id="reference-text"' not in html
    # The completed sentence moved the panel on to the next sentence without a label (wrapping round).
    assert "Sentence 1 of 3" in html and 'data-version="1"' in html


def test_a_replayed_request_is_applied_once(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    sentence = turns[0].sentences.first()
    client.force_login(user)
    data = dict(sentence=sentence.pk, step="relevance", value="relevant", version=0, request_id="same-key")
    first, again = act(client, assignment, "answer", **data), act(client, assignment, "answer", **data)
    assert first.status_code == again.status_code == 200
    assert AnnotationEvent.objects.filter(action="answer").count() == 1
    assert Assignment.objects.get(pk=assignment.pk).version == 1


def test_two_tabs_get_a_clear_conflict_and_the_current_state(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    sentence = turns[0].sentences.first()
    client.force_login(user)
    act(client, assignment, "answer", sentence=sentence.pk, step="relevance", value="relevant", version=0, request_id="tab-1")
    response = act(client, assignment, "answer", sentence=sentence.pk, step="relevance", value="irrelevant",
                   version=0, request_id="tab-2")
    html = response.content.decode()
    assert response.status_code == 409
    assert "changed in another tab or window" in html
    assert 'data-version="1"' in html and "Factual or cognitive?" in html
    assert SentenceAnnotation.objects.get().path == {"relevance": "relevant"}


def test_refusals_are_explained_in_the_panel(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    client.force_login(user)
    response = act(client, assignment, "submit", version=0, request_id="s1")
    assert response.status_code == 422
    assert "3 of 3 sentences have no label yet" in response.content.decode()
    response = act(client, assignment, "answer", sentence=turns[0].sentences.first().pk, step="grounded", value="yes",
                   version=0, request_id="bad")
    assert response.status_code == 422 and "not asked after the answers given so far" in response.content.decode()


def test_submit_redirects_to_the_queue_and_the_turn_is_then_read_only(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    label_all(assignment, Label.FAITHFUL, user)
    client.force_login(user)
    version = Assignment.objects.get(pk=assignment.pk).version
    response = act(client, assignment, "submit", version=version, request_id="submit")
    assert response["HX-Redirect"] == reverse("workspace_queue", args=[project.slug])
    page = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    assert "can no longer be changed" in page and 'id="submit-form"' not in page
    response = act(client, assignment, "answer", sentence=turns[0].sentences.first().pk, step="relevance",
                   value="irrelevant", version=version + 1, request_id="late")
    assert response.status_code == 422 and "submitted and can no longer be changed" in response.content.decode()


def test_submit_opens_the_next_turn_and_submit_and_stop_goes_back_to_the_queue(client):
    """An annotator's day is one turn after another: Submit opens the next one (as Start would), with the thanks
    on its screen; Submit and stop goes back to the queue and claims nothing; after the last turn, the queue
    says there is none left."""
    project, turns = project_with_turns(3)
    user, = annotators(project, 1)
    client.force_login(user)

    def submit(assignment, **then):
        label_all(assignment, Label.FAITHFUL, user)
        version = Assignment.objects.get(pk=assignment.pk).version
        return act(client, assignment, "submit", version=version, request_id=f"submit-{assignment.pk}", **then)

    first = claimed(project, user)
    response = submit(first)
    second = Assignment.objects.get(annotator=user, status=Assignment.Status.ASSIGNED)
    assert response["HX-Redirect"] == reverse("annotate", args=[second.pk]) and second.turn_id != first.turn_id
    page = client.get(response["HX-Redirect"]).content.decode()
    assert "Turn submitted" in page and "Sentence 1 of 3" in page

    second = Assignment.objects.select_related("project", "turn__dialogue").get(pk=second.pk)
    response = submit(second, then="queue")
    assert response["HX-Redirect"] == reverse("workspace_queue", args=[project.slug])
    assert not Assignment.objects.filter(annotator=user).exclude(status=Assignment.Status.SUBMITTED).exists()
    assert "Turn submitted" in client.get(response["HX-Redirect"]).content.decode()

    third = claimed(project, user)
    response = submit(third)  # the last turn: nothing to open
    assert response["HX-Redirect"] == reverse("workspace_queue", args=[project.slug])
    page = client.get(response["HX-Redirect"]).content.decode()
    assert "Turn submitted" in page and "no turn left for you" in page
    assert act(client, third, "submit", then="sideways").status_code == 400  # only next or queue


def test_without_javascript_the_forms_still_work(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    sentence = turns[0].sentences.first()
    client.force_login(user)
    response = client.post(reverse("annotate_act", args=[assignment.pk, "answer"]),
                           {"sentence": sentence.pk, "step": "relevance", "value": "irrelevant"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"?sentence={sentence.pk}")
    assert SentenceAnnotation.objects.get().label == Label.IRRELEVANT


def test_guideline_examples_of_the_current_step_are_shown_escaped():
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    GuidelineExample.objects.create(project=project, step=Step.RELEVANCE, text="Hope this <b>helps</b>!", is_positive=False,
                                    explanation="A pleasantry.")
    GuidelineExample.objects.create(project=project, step=Step.RELEVANCE, text="Paris is in France.", is_positive=True,
                                    position=5)
    GuidelineExample.objects.create(project=project, step=Step.RELEVANCE, text="Water is wet.", is_positive=True,
                                    position=1)
    GuidelineExample.objects.create(project=project, step=Step.GROUNDED, text="NOT-THIS-STEP", is_positive=True)
    GuidelineExample.objects.create(project=ProjectFactory(), step=Step.RELEVANCE, text="OTHER-PROJECT", is_positive=True)
    client = Client()
    client.force_login(user)
    whole = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    # The page embeds every step's examples for the browser to show as it walks the protocol (escaped, by step).
    marker = '<script id="annotation-data" type="application/json">'
    page, embedded = whole.split(marker)
    examples = json.loads(embedded[:embedded.index("</script>")])["examples"]
    assert examples["grounded"]["positive"] == [{"text": "NOT-THIS-STEP", "explanation": ""}]
    assert [e["text"] for e in examples["relevance"]["positive"]] == ["Water is wet.", "Paris is in France."]
    assert "<b>" not in embedded and "OTHER-PROJECT" not in whole
    assert "Hope this &lt;b&gt;helps&lt;/b&gt;!" in page and "A pleasantry." in page and "Paris is in France." in page
    assert page.index("Water is wet.") < page.index("Paris is in France.")  # the lead's order
    assert "NOT-THIS-STEP" not in page
    # The panel sent after an answer shows the next step's examples.
    sentence = turns[0].sentences.first()
    panel = act(client, assignment, "answer", sentence=sentence.pk, step=Step.RELEVANCE, value="relevant",
                version=assignment.version).content.decode()
    assert "Paris is in France." not in panel


# --- constant work per decision ------------------------------------------------------------------

LONG_REFERENCE = " ".join(f"Word{n} of a long reference document about rivers." for n in range(1, 200))


def decision_setup(sentence_count, reference):
    project = ProjectFactory()
    dialogue = DialogueFactory(project=project, reference=reference)
    turn = TurnFactory(dialogue=dialogue, index=0, sentences=numbered_sentences(sentence_count))
    GuidelineExample.objects.create(project=project, step=Step.KIND, text="An example.", is_positive=True)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    sentences = list(turn.sentences.order_by("index"))
    # Some history: sentence 1 labelled, sentence 2 half way, with a note and evidence.
    answer_label(assignment, sentences[0], Label.FAITHFUL, user)
    annotation_answer_step(assignment, sentences[1], "relevance", "relevant", actor=user)
    client = Client()
    client.force_login(user)
    return client, assignment, sentences


def run_action(action, client, assignment, sentences):
    version = Assignment.objects.get(pk=assignment.pk).version
    annotate_url = reverse("annotate", args=[assignment.pk])
    if action == "open_screen":
        return lambda: client.get(annotate_url)
    if action == "open_panel":
        return lambda: client.get(f"{annotate_url}?sentence={sentences[1].pk}", **HX)
    data = {
        "answer_first": ("answer", dict(sentence=sentences[2].pk, step="relevance", value="relevant")),
        "answer_next_step": ("answer", dict(sentence=sentences[1].pk, step="kind", value="factual")),
        "completing_answer": ("answer", dict(sentence=sentences[1].pk, step="kind", value="cognitive")),
        "undo": ("undo", dict(sentence=sentences[1].pk)),
        "note": ("note", dict(sentence=sentences[1].pk, note="A note.")),
    }
    name, fields = data[action]
    return lambda: act(client, assignment, name, version=version, request_id="q", **fields)


@pytest.mark.parametrize("action", ["answer_first", "answer_next_step", "undo", "note", "open_screen", "open_panel"])
def test_queries_per_decision_do_not_grow_with_turn_length_or_reference_size(
    action, django_assert_max_num_queries, django_assert_num_queries
):
    client, assignment, sentences = decision_setup(3, "A short reference.")
    request = run_action(action, client, assignment, sentences)
    with django_assert_max_num_queries(20) as short:
        assert request().status_code == 200
    # 40 sentences and a reference of about 3,000 words: exactly the same number of queries.
    client, assignment, sentences = decision_setup(40, LONG_REFERENCE * 2)
    request = run_action(action, client, assignment, sentences)
    with django_assert_num_queries(len(short)):
        assert request().status_code == 200


def test_time_on_a_sentence_is_recorded_without_a_version_or_an_event(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    sentence = turns[0].sentences.first()
    client.force_login(user)
    response = client.post(reverse("annotate_act", args=[assignment.pk, "time"]), {"sentence": sentence.pk, "seconds": "7.5"})
    assert response.status_code == 204
    act(client, assignment, "time", sentence=sentence.pk, seconds="2.5")
    assert SentenceAnnotation.objects.get(sentence=sentence).seconds_spent == 10.0
    assert Assignment.objects.get(pk=assignment.pk).version == 0 and not AnnotationEvent.objects.exclude(action="assign").exists()


def test_the_audit_history_is_read_only_in_the_admin(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = claimed(project, user)
    annotation_answer_step(assignment, turns[0].sentences.first(), "relevance", "relevant", actor=user)
    client.force_login(UserFactory(is_staff=True, is_superuser=True, password=NO_PASSWORD))
    page = client.get(reverse("admin:annotator_assignment_change", args=[assignment.pk])).content.decode()
    assert "answer" in page and "relevant" in page
    event = AnnotationEvent.objects.get(action="answer")
    assert client.post(reverse("admin:annotator_annotationevent_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    assert AnnotationEvent.objects.filter(pk=event.pk).exists()


def test_the_panel_posts_each_action_to_its_url():
    from annotator.work.selectors import PANEL_ACTIONS, panel_action_urls

    assert panel_action_urls(42) == {action: reverse("annotate_act", args=[42, action]) for action in PANEL_ACTIONS}
