"""Factories for the claims tests: projects with the finer views switched on, triplets."""

import factory

from annotator import models
from annotator.domain.vocabulary import TripletSource

from .factories import AssignmentFactory, DialogueFactory, ProjectFactory, TurnFactory, member
from .factories_workspace import NO_PASSWORD


class ClaimTripletFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ClaimTriplet

    turn = factory.SubFactory(TurnFactory)
    index = factory.Sequence(lambda n: n)
    head = "Amazon"
    relation = "flows through"
    tail = "Brazil"
    source = TripletSource.IMPORTED


def views_project(**kwargs):
    """A project with triplets, severity and error types switched on."""
    options = {"enable_triplets": True, "enable_severity": True, "enable_error_types": True, "overlap": 2}
    options.update(kwargs)
    return ProjectFactory(**options)


def turn_with_triplets(project, triplets=(("Amazon", "flows through", "Brazil"), ("Amazon", "is", "longest river")),
                       generator_model="model-a", sentences=None):
    dialogue = DialogueFactory(project=project, generator_model=generator_model)
    turn = TurnFactory(dialogue=dialogue, index=0, sentences=sentences)
    for index, (head, relation, tail) in enumerate(triplets):
        ClaimTripletFactory(turn=turn, index=index, head=head, relation=relation, tail=tail)
    return turn


def working(project, turn, role_user=None):
    """An annotator of the project holding an unfinished assignment on the turn."""
    user = role_user or member(project, password=NO_PASSWORD)
    return AssignmentFactory(turn=turn, project=project, annotator=user), user
