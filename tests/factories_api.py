"""A small project world for the API tests: one project with every role, and an outsider."""

from dataclasses import dataclass, field

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotator import models
from autolabel.models import LLMProfile
from autolabel.jobs.services import job_create
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member

# "staff" has the staff flag and no membership: it grants nothing. "superuser" leads every project.
ROLES = ("anonymous", "annotator", "outsider", "adjudicator", "lead", "staff", "superuser")


@dataclass
class World:
    project: models.Project
    other_project: models.Project
    users: dict = field(default_factory=dict)  # role name -> user (anonymous: None)
    turn: models.Turn = None
    other_turn: models.Turn = None
    assignment: models.Assignment = None
    annotation: models.SentenceAnnotation = None
    gold: models.GoldLabel = None
    batch: models.ImportBatch = None
    adjudication: models.Adjudication = None
    question: models.Question = None
    feedback: models.Feedback = None
    job: object = None


def make_world() -> World:
    project = ProjectFactory(slug="pilot", name="Pilot")
    other = ProjectFactory(slug="elsewhere", name="Elsewhere")
    world = World(project=project, other_project=other)
    world.users = {
        "anonymous": None,
        "annotator": member(project, Role.ANNOTATOR, username="ann"),
        "outsider": member(other, Role.ANNOTATOR, username="out"),
        "adjudicator": member(project, Role.ADJUDICATOR, username="adj"),
        "lead": member(project, Role.LEAD, username="lea"),
        "staff": UserFactory(username="sta", is_staff=True),
        "superuser": UserFactory(username="sup", is_staff=True, is_superuser=True),
    }
    world.batch = models.ImportBatch.objects.create(
        project=project, kind=models.ImportBatch.Kind.JSONL, filename="pilot.jsonl",
        status=models.ImportBatch.Status.DONE, created_by=world.users["lead"],
    )
    world.turn = TurnFactory(dialogue__project=project, dialogue__batch=world.batch)
    world.other_turn = TurnFactory(dialogue__project=project, dialogue__topic="history", dialogue__generator_model="model-b")
    TurnFactory(dialogue__project=other)
    world.assignment = AssignmentFactory(turn=world.turn, annotator=world.users["annotator"])
    first, second, third = world.turn.sentences.order_by("index")
    world.annotation = models.SentenceAnnotation.objects.create(
        assignment=world.assignment, sentence=first,
        path={"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"}, label=Label.FAITHFUL,
    )
    world.gold = models.GoldLabel.objects.create(
        sentence=first, label=Label.FAITHFUL, provenance=GoldProvenance.AGREEMENT,
        path={"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"},
    )
    models.GoldLabel.objects.create(sentence=third, label=Label.IRRELEVANT, provenance=GoldProvenance.ADJUDICATION,
                                    path={"relevance": "irrelevant"})
    world.adjudication = models.Adjudication.objects.create(sentence=second, turn=world.turn)
    world.question = models.Question.objects.create(project=project, turn=world.turn, sentence=second,
                                                    asked_by=world.users["annotator"])
    models.QuestionMessage.objects.create(question=world.question, author=world.users["annotator"],
                                          body="Is a superlative rational?")
    world.feedback = models.Feedback.objects.create(project=project, annotation=world.annotation,
                                                    lead=world.users["lead"], comment="Check the reference.")
    profile = LLMProfile.objects.create(name="baseline", base_url="http://127.0.0.1:9/v1")
    world.job = job_create(project=project, profile=profile, samples=3, threshold=2, enqueue=False)
    return world


# Shared by the API test modules, which import these names (pytest then uses the fixtures there).
@pytest.fixture(autouse=True)
def fast():
    """No throttle counters or cached reports carried between tests."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world():
    return make_world()


def token_client(user):
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def url(name, world, **kwargs):
    return reverse(f"api:{name}", kwargs={"slug": world.project.slug, **kwargs})
