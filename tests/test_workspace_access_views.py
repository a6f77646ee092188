"""The workspace pages through the test client: who may open and post what, blindness before submitting,
CSRF on every post, imported text escaped (the screen itself: tests/test_workspace_views.py)."""

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import AnnotationEvent, Assignment, GoldLabel, SentenceAnnotation
from annotator.work.services import annotation_answer_step, annotation_set_note
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, UserFactory
from tests.factories_workspace import HX, NO_PASSWORD, act, annotators, claimed, project_with_turns

pytestmark = pytest.mark.django_db


# --- access and blindness ------------------------------------------------------------------------

def test_another_annotators_assignment_is_404_on_every_url(client):
    project, turns = project_with_turns(1)
    owner, intruder = annotators(project, 2)
    assignment = claimed(project, owner)
    sentence = turns[0].sentences.first()
    client.force_login(intruder)
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 404
    assert client.get(reverse("annotate", args=[assignment.pk]) + f"?sentence={sentence.pk}", **HX).status_code == 404
    for action in ["answer", "pick", "undo", "note", "evidence_add", "evidence_remove", "submit", "time"]:
        response = act(client, assignment, action, sentence=sentence.pk, step="relevance", value="irrelevant", version=0)
        assert response.status_code == 404, action
    assert not SentenceAnnotation.objects.exists()


def test_non_members_and_removed_members_get_404():
    project, turns = project_with_turns(1)
    member_user, = annotators(project, 1)
    assignment = claimed(project, member_user)
    outsider = UserFactory(password=NO_PASSWORD)
    client = Client()
    client.force_login(outsider)
    assert client.get(reverse("workspace_queue", args=[project.slug])).status_code == 404
    assert client.post(reverse("workspace_next", args=[project.slug])).status_code == 404
    project.memberships.filter(user=member_user).delete()
    client.force_login(member_user)
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 404


def test_before_submitting_nobody_sees_other_answers_gold_or_notes(client):
    project, turns = project_with_turns(1)
    first, second = annotators(project, 2)
    a1 = claimed(project, first)
    sentences = list(turns[0].sentences.order_by("index"))
    annotation_answer_step(a1, sentences[0], "relevance", "irrelevant", actor=first)
    annotation_set_note(a1, sentences[1], "FIRST-ANNOTATOR-SECRET-NOTE", actor=first)
    GoldLabel.objects.create(sentence=sentences[2], label=Label.INVENTED, provenance=GoldProvenance.IMPORTED,
                             reason="GOLD-SECRET-REASON")
    a2 = claimed(project, second)
    assert a2.turn_id == a1.turn_id
    client.force_login(second)
    pages = [client.get(reverse("annotate", args=[a2.pk])).content.decode()]
    for sentence in sentences:
        pages.append(client.get(reverse("annotate", args=[a2.pk]) + f"?sentence={sentence.pk}", **HX).content.decode())
    pages.append(client.get(reverse("workspace_queue", args=[project.slug])).content.decode())
    for html in pages:
        assert "FIRST-ANNOTATOR-SECRET-NOTE" not in html and "GOLD-SECRET-REASON" not in html
        # No chip of another's label (the page's style sheet names every label of the protocol: public).
        assert "chip chip-irrelevant" not in html and "chip chip-invented" not in html and "Invented</span>" not in html


def test_lead_page_is_for_leads_only_and_releases_and_reassigns(client):
    project, turns = project_with_turns(2)
    a, b, c = annotators(project, 3)
    lead, = annotators(project, 1, Role.LEAD)
    held = claimed(project, a)
    client.force_login(a)
    assert client.get(reverse("workspace_lead", args=[project.slug])).status_code == 404
    assert client.post(reverse("workspace_release", args=[project.slug, held.pk])).status_code == 404
    client.force_login(lead)
    page = client.get(reverse("workspace_lead", args=[project.slug])).content.decode()
    assert a.username in page and "Release" in page
    client.post(reverse("workspace_reassign", args=[project.slug, held.pk]), {"annotator": b.pk})
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.RELEASED
    moved = Assignment.objects.get(annotator=b)
    assert moved.turn_id == held.turn_id
    client.post(reverse("workspace_release", args=[project.slug, moved.pk]))
    assert Assignment.objects.get(pk=moved.pk).status == Assignment.Status.RELEASED
    assert AnnotationEvent.objects.filter(action="release", actor=lead).count() == 2
    # Another project's assignment through this project's URL: 404.
    other_project, _ = project_with_turns(1)
    stranger, = annotators(other_project, 1)
    elsewhere = claimed(other_project, stranger)
    assert client.post(reverse("workspace_release", args=[project.slug, elsewhere.pk])).status_code == 404


def test_every_post_needs_the_csrf_token():
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    lead, = annotators(project, 1, Role.LEAD)
    assignment = claimed(project, user)
    sentence = turns[0].sentences.first()
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(reverse("workspace_next", args=[project.slug])).status_code == 403
    for action in ["answer", "pick", "undo", "note", "evidence_add", "evidence_remove", "submit", "time"]:
        response = client.post(reverse("annotate_act", args=[assignment.pk, action]),
                               {"sentence": sentence.pk, "step": "relevance", "value": "irrelevant"}, **HX)
        assert response.status_code == 403, action
    client.force_login(lead)
    for url in [reverse("workspace_release", args=[project.slug, assignment.pk]),
                reverse("workspace_reassign", args=[project.slug, assignment.pk]),
                reverse("workspace_release_stale", args=[project.slug])]:
        assert client.post(url).status_code == 403
    assert not SentenceAnnotation.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.ASSIGNED


XSS = '<script>alert("x")</script><img src=x onerror="alert(1)">'


def test_imported_text_is_escaped_on_every_workspace_page():
    project = ProjectFactory(name=f"Project {XSS}")
    dialogue = DialogueFactory(project=project, external_id=f"dlg {XSS}", topic=XSS, reference=f"Reference {XSS} end.")
    turn = TurnFactory(dialogue=dialogue, index=0, user_message=f"Question {XSS}", sentences=[f"First {XSS}", "Second."])
    turn.history = [{"role": "user", "text": f"Earlier {XSS}"}, {"role": "assistant", "text": f"Reply {XSS}"}]
    turn.save()
    user, = annotators(project, 1)
    lead, = annotators(project, 1, Role.LEAD)
    assignment = claimed(project, user)
    sentence = turn.sentences.first()
    annotation_set_note(assignment, sentence, f"note {XSS}", actor=user)
    client = Client()
    client.force_login(user)
    pages = {
        "queue": client.get(reverse("workspace_queue", args=[project.slug])),
        "screen": client.get(reverse("annotate", args=[assignment.pk])),
        "panel": client.get(reverse("annotate", args=[assignment.pk]) + f"?sentence={sentence.pk}", **HX),
        "answer": act(client, assignment, "answer", sentence=sentence.pk, step="relevance", value="relevant",
                      version=1, request_id="x1"),
    }
    client.force_login(lead)
    pages["lead"] = client.get(reverse("workspace_lead", args=[project.slug]) + "?show=all")
    for name, response in pages.items():
        html = response.content.decode()
        assert response.status_code == 200, name
        assert "<script>alert" not in html and "<img src=x" not in html, name
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html, name
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in pages["screen"].content.decode()
