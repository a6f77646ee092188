"""factory_boy factories for the core schema."""

import factory
from django.contrib.auth import get_user_model

from annotator import models
from annotator.domain.vocabulary import Role

DEFAULT_PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.django.Password(DEFAULT_PASSWORD)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.Sequence(lambda n: f"Project {n}")
    guidelines = "Judge each sentence against the reference."


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.ANNOTATOR


class DialogueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Dialogue

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"dlg-{n}")
    topic = "science"
    language = "english"
    generator_model = "model-a"
    reference = (
        "The Amazon river flows through Brazil. It carries more water than any other river. "
        "Its basin covers about seven million square kilometres."
    )


class TurnFactory(factory.django.DjangoModelFactory):
    """A turn whose sentences are created from ``sentences`` (a list of strings)."""

    class Meta:
        model = models.Turn
        skip_postgeneration_save = True

    dialogue = factory.SubFactory(DialogueFactory)
    index = factory.Sequence(lambda n: n)
    user_message = "Tell me about the Amazon."
    assistant_response = ""

    @factory.post_generation
    def sentences(turn, create, extracted, **kwargs):
        texts = extracted if extracted is not None else [
            "The Amazon flows through Brazil.",
            "It is probably the most important river on Earth.",
            "Hello there!",
        ]
        response, offset, rows = [], 0, []
        for index, text in enumerate(texts):
            if response:
                response.append(" ")
                offset += 1
            rows.append(models.Sentence(turn=turn, index=index, text=text, start=offset, end=offset + len(text)))
            response.append(text)
            offset += len(text)
        turn.assistant_response = "".join(response)
        if create:
            turn.save(update_fields=["assistant_response"])
            models.Sentence.objects.bulk_create(rows)


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Assignment

    turn = factory.SubFactory(TurnFactory)
    project = factory.LazyAttribute(lambda a: a.turn.dialogue.project)
    annotator = factory.SubFactory(UserFactory)


def member(project, role=Role.ANNOTATOR, **user_kwargs):
    """A new user with ``role`` in ``project``."""
    user = UserFactory(**user_kwargs)
    MembershipFactory(project=project, user=user, role=role)
    return user
