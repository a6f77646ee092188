"""Roles come from memberships; removed members lose their threads (issue #14, items 6 and 7).

- The staff flag grants nothing: a staff lead of project ``demo`` neither reads, exports nor
  changes project ``other``. Superusers (site administrators) lead every project.
- The demo's lead is not staff.
- In the Django admin a staff lead who is not a superuser sees only the objects of the
  projects they lead: lists, filters, foreign-key choices, actions.
- A member removed from a project no longer reads or writes their questions, feedback and
  qualification results there.
"""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator import models
from annotator.access import projects_for, role_in
from annotator.projects.services import membership_remove
from annotator.domain.vocabulary import Label, Role
from autolabel.models import LLMProfile
from autolabel.jobs.services import job_create
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast():
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def two_projects():
    """``demo`` led by a staff user, and ``other`` which they have nothing to do with."""
    demo = ProjectFactory(slug="demo", name="Demo")
    other = ProjectFactory(slug="other", name="SECRET-OTHER-PROJECT")
    lead = member(demo, Role.LEAD, username="staff-lead", is_staff=True)
    TurnFactory(dialogue__project=demo, dialogue__external_id="demo-dialogue")
    TurnFactory(dialogue__project=other, dialogue__external_id="SECRET-OTHER-DIALOGUE")
    models.ImportBatch.objects.create(project=other, kind=models.ImportBatch.Kind.JSONL, filename="SECRET-OTHER-FILE.jsonl")
    models.ImportBatch.objects.create(project=demo, kind=models.ImportBatch.Kind.JSONL, filename="demo-file.jsonl")
    return demo, other, lead


# --- 7. the staff flag grants nothing -----------------------------------------------------------------

def test_a_staff_lead_has_no_role_in_a_project_they_are_not_a_member_of(two_projects):
    demo, other, lead = two_projects
    assert role_in(lead, demo) == Role.LEAD
    assert role_in(lead, other) is None
    assert list(projects_for(lead)) == [demo]


def test_a_staff_lead_neither_reads_exports_nor_changes_another_project(two_projects):
    demo, other, lead = two_projects
    client = Client()
    client.force_login(lead)
    for name in ("project_detail", "turn_list", "import_list", "reports", "workspace_lead", "gold_queue"):
        assert client.get(reverse(name, args=[other.slug])).status_code == 404, name
        assert client.get(reverse(name, args=[demo.slug])).status_code == 200, name
    assert client.get(reverse("project_export", args=[other.slug, "jsonl"])).status_code == 404
    assert "SECRET-OTHER-PROJECT" not in client.get(reverse("home")).content.decode()
    api = APIClient()
    api.force_authenticate(lead)
    assert api.get(f"/api/v1/projects/{other.slug}/").status_code == 404
    assert api.get(f"/api/v1/projects/{other.slug}/gold/export/").status_code == 404
    assert api.patch(f"/api/v1/projects/{other.slug}/", {"name": "taken"}, format="json").status_code == 404
    assert api.post(f"/api/v1/projects/{other.slug}/members/", {"username": "staff-lead", "role": "lead"},
                    format="json").status_code == 404
    other.refresh_from_db()
    assert other.name == "SECRET-OTHER-PROJECT" and not other.memberships.exists()
    assert [p["slug"] for p in api.get("/api/v1/projects/").json()["results"]] == ["demo"]
    assert api.get("/api/v1/me/").json()["projects"] == [{"slug": "demo", "name": "Demo", "role": "lead"}]


def test_a_superuser_leads_every_project(two_projects):
    demo, other, _ = two_projects
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    assert role_in(admin, other) == Role.LEAD
    api = APIClient()
    api.force_authenticate(admin)
    assert api.get(f"/api/v1/projects/{other.slug}/").json()["my_role"] == "lead"
    assert {p["slug"] for p in api.get("/api/v1/projects/").json()["results"]} == {"demo", "other"}


def test_the_demo_lead_is_not_staff_and_leads_the_demo():
    out = StringIO()
    call_command("load_demo", stdout=out)
    from django.contrib.auth import get_user_model

    lead = get_user_model().objects.get(username="lead")
    assert not lead.is_staff and not lead.is_superuser
    assert not lead.user_permissions.exists()
    project = models.Project.objects.get(slug="demo")
    assert role_in(lead, project) == Role.LEAD
    client = Client()
    client.force_login(lead)
    assert client.get(reverse("turn_list", args=["demo"])).status_code == 200
    assert client.get(reverse("admin:index")).status_code == 302  # the admin is for site administrators


# --- 7. the admin, for a staff lead who is not a superuser ----------------------------------------------

ADMIN_PERMISSIONS = ["view_project", "change_project", "view_dialogue", "view_turn", "view_importbatch",
                     "add_importbatch", "view_membership", "add_guidelineexample", "view_guidelineexample",
                     "view_assignment", "view_autolabeljob", "view_exportjob"]


@pytest.fixture
def admin_client(two_projects):
    demo, other, lead = two_projects
    lead.user_permissions.add(*Permission.objects.filter(codename__in=ADMIN_PERMISSIONS))
    AssignmentFactory(turn=models.Turn.objects.get(dialogue__project=other),
                      annotator=member(other, username="SECRET-OTHER-ANNOTATOR"))
    profile = LLMProfile.objects.create(name="baseline", base_url="http://127.0.0.1:9/v1")
    job_create(project=other, profile=profile, model="SECRET-OTHER-MODEL", samples=1, threshold=1, enqueue=False)
    client = Client()
    client.force_login(lead)
    return client, demo, other


@pytest.mark.parametrize("changelist", ["annotator_project", "annotator_dialogue", "annotator_turn",
                                        "annotator_importbatch", "annotator_membership", "annotator_assignment",
                                        "autolabel_autolabeljob"])
def test_the_admin_lists_only_the_projects_a_staff_lead_leads(admin_client, changelist):
    client, demo, other = admin_client
    page = client.get(reverse(f"admin:{changelist}_changelist"))
    assert page.status_code == 200
    text = page.content.decode()
    assert "SECRET-OTHER" not in text, changelist


def test_the_admin_refuses_another_projects_objects_to_a_staff_lead(admin_client):
    client, demo, other = admin_client
    assert client.get(reverse("admin:annotator_project_change", args=[other.pk])).status_code == 302  # "does not exist"
    assert client.get(reverse("admin:annotator_project_change", args=[demo.pk])).status_code == 200
    batch = models.ImportBatch.objects.get(project=other)
    assert client.get(reverse("admin:annotator_importbatch_change", args=[batch.pk])).status_code == 302
    # An action on the other project (its id posted by hand) finds nothing to act on.
    response = client.post(reverse("admin:annotator_project_changelist"),
                           {"action": "export_jsonl", "_selected_action": [other.pk]})
    assert response.status_code == 302 and reverse("project_export", args=[other.slug, "jsonl"]) not in response.get(
        "Location", "")


def test_the_admin_offers_only_the_staff_leads_projects_as_choices(admin_client):
    client, demo, other = admin_client
    form = client.get(reverse("admin:annotator_guidelineexample_add")).content.decode()
    assert "Demo" in form and "SECRET-OTHER-PROJECT" not in form
    posted = client.post(reverse("admin:annotator_guidelineexample_add"),
                         {"project": other.pk, "step": "relevance", "text": "planted", "is_positive": "on",
                          "position": 0})
    assert posted.status_code == 200  # the form refuses the choice
    assert not models.GuidelineExample.objects.filter(project=other).exists()


def test_the_admin_token_list_shows_a_staff_member_only_their_own(two_projects):
    from rest_framework.authtoken.models import Token

    demo, other, lead = two_projects
    lead.user_permissions.add(*Permission.objects.filter(codename="view_tokenproxy"))
    Token.objects.create(user=member(other, username="SECRET-TOKEN-OWNER"))
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("admin:authtoken_tokenproxy_changelist"))
    assert page.status_code == 200 and "SECRET-TOKEN-OWNER" not in page.content.decode()


# --- 6. a removed member keeps nothing of the project -----------------------------------------------------

@pytest.fixture
def removed_annotator():
    project = ProjectFactory(slug="pilot")
    lead = member(project, Role.LEAD, username="pilot-lead")
    annotator = member(project, Role.ANNOTATOR, username="leaver")
    turn = TurnFactory(dialogue__project=project)
    assignment = AssignmentFactory(turn=turn, annotator=annotator, status=models.Assignment.Status.SUBMITTED)
    sentence = turn.sentences.first()
    annotation = models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence,
                                                          label=Label.FAITHFUL, path={"relevance": "relevant"})
    question = models.Question.objects.create(project=project, turn=turn, sentence=sentence, asked_by=annotator)
    models.QuestionMessage.objects.create(question=question, author=annotator, body="SECRET-THREAD")
    models.QuestionMessage.objects.create(question=question, author=lead, body="SECRET-ANSWER")
    feedback = models.Feedback.objects.create(project=project, annotation=annotation, lead=lead,
                                              expected_label=Label.INVENTED, comment="SECRET-FEEDBACK")
    result = models.QualificationResult.objects.create(project=project, annotator=annotator, correct=1, total=3)
    membership_remove(models.Membership.objects.get(project=project, user=annotator), actor=lead)
    return annotator, project, question, feedback, result


def test_a_removed_member_no_longer_reads_nor_writes_their_threads(removed_annotator):
    annotator, project, question, feedback, result = removed_annotator
    client = Client()
    client.force_login(annotator)
    assert client.get(reverse("qa:question", args=[question.pk])).status_code == 404
    assert client.post(reverse("qa:question", args=[question.pk]), {"body": "still here?"}).status_code == 404
    assert client.get(reverse("qa:question_messages", args=[question.pk])).status_code == 404
    assert client.post(reverse("qa:feedback_acknowledge", args=[feedback.pk])).status_code == 404
    assert client.post(reverse("qa:feedback_amend", args=[feedback.pk]), {"label": "invented"}).status_code == 404
    assert client.get(reverse("qa:qualification_result", args=[project.slug, result.pk])).status_code == 404
    for name in ("qa:my_questions", "qa:feedback_inbox", "qa:nav_badges"):
        text = client.get(reverse(name)).content.decode()
        assert "SECRET" not in text, name
    assert question.messages.count() == 2
    feedback.refresh_from_db()
    assert feedback.acknowledged_at is None
    # The project's lead still reads them.
    lead = models.Membership.objects.get(project=project, role=Role.LEAD).user
    client.force_login(lead)
    assert "SECRET-THREAD" in client.get(reverse("qa:question", args=[question.pk])).content.decode()


def test_a_removed_member_reaches_nothing_through_the_api(removed_annotator):
    annotator, project, question, feedback, result = removed_annotator
    api = APIClient()
    api.force_authenticate(annotator)
    base = f"/api/v1/projects/{project.slug}"
    for method, url in (("get", f"{base}/questions/{question.pk}/"), ("post", f"{base}/questions/{question.pk}/messages/"),
                        ("get", f"{base}/feedback/{feedback.pk}/"), ("post", f"{base}/feedback/{feedback.pk}/acknowledge/"),
                        ("get", f"{base}/questions/"), ("get", f"{base}/feedback/")):
        response = getattr(api, method)(url, {"body": "x"} if method == "post" else None, format="json")
        assert response.status_code == 404, url
    assert "SECRET" not in json.dumps(api.get("/api/v1/me/").json())
