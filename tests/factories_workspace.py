"""Helpers for the workspace tests: projects with turns, annotators, completed walks."""

from django.urls import reverse

from annotator.domain import protocol
from annotator.models import Assignment, Sentence
from annotator.work.assignment import assignment_next
from annotator.work.services import annotation_answer_step
from annotator.domain.vocabulary import Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member


def project_with_turns(turn_count=3, sentences=None, **project_kwargs):
    """A project, one dialogue per turn, each turn with ``sentences`` (default: the factory's three)."""
    project = ProjectFactory(**project_kwargs)
    turns = []
    for n in range(turn_count):
        dialogue = DialogueFactory(project=project)
        turns.append(TurnFactory(dialogue=dialogue, index=0, sentences=sentences))
    return project, turns


# A stored hash that matches no password: creating users without PBKDF2 keeps tests fast
# (browser and client tests log in with force_login).
NO_PASSWORD = "!unusable"


def annotators(project, count, role=Role.ANNOTATOR):
    return [member(project, role, password=NO_PASSWORD) for _ in range(count)]


def numbered_sentences(count):
    return [f"Sentence number {n} says something about rivers." for n in range(1, count + 1)]


def answer_label(assignment, sentence, label, actor):
    """Walk the sequential protocol to ``label`` for one sentence, one saved answer per step."""
    for step, value in protocol.path_for_label(label).items():
        outcome = annotation_answer_step(assignment, sentence, step, value, actor=actor)
        assignment = outcome.assignment
    return assignment


def label_all(assignment, label, actor):
    for sentence in Sentence.objects.filter(turn_id=assignment.turn_id).order_by("index"):
        assignment = answer_label(assignment, sentence, label, actor)
    return assignment


HX = {"HTTP_HX_REQUEST": "true"}


def claimed(project, user):
    """The next turn of ``project`` claimed by ``user``, with what the screen's views read loaded."""
    return Assignment.objects.select_related("project", "turn__dialogue").get(pk=assignment_next(project, user).pk)


def act(client, assignment, action, **data):
    """One of the decision panel's actions, posted as htmx posts it."""
    return client.post(reverse("annotate_act", args=[assignment.pk, action]), data, **HX)


def halludetect_slot(client, turns=1, sentences=None):
    """An annotator signed in on ``client``, holding a slot of a project that follows the shipped HalluDetect
    example (a choice, then a multiple, a scale and a text step); each turn has ``sentences`` (the factory's three)."""
    from annotator.domain.protocol.document import load_shipped
    from annotator.projects.protocol_services import protocol_set

    project, _ = project_with_turns(turns, sentences=sentences)
    protocol_set(project, load_shipped("halludetect").document)
    user, = annotators(project, 1)
    client.force_login(user)
    return claimed(project, user)
