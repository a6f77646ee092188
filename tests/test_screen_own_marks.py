"""The annotation screen reads the annotator's questions and unit flags only when one statement says there are."""

import pytest
from django.test import Client, RequestFactory

from annotator.domain.vocabulary import Role, UnitFlagKind
from annotator.models import Question, QuestionMessage, UnitFlag
from annotator.work.own_marks import own_marks
from tests.factories import AssignmentFactory, UserFactory, member
from tests.factories_workspace import NO_PASSWORD, project_with_turns

pytestmark = pytest.mark.django_db


def _marks(user, turn):
    request = RequestFactory().get("/")
    request.user = user
    return own_marks(request, turn)


def _screen(user, assignment):
    client = Client()
    client.force_login(user)
    return client.get(f"/a/{assignment.pk}/").content.decode()


def test_questions_and_flags_show_on_the_screen_of_their_author_and_turn_only():
    project, (asked_on, flagged_on) = project_with_turns(2)
    annotator, peer = (member(project, Role.ANNOTATOR, password=NO_PASSWORD) for _ in range(2))
    question = Question.objects.create(project=project, turn=asked_on, sentence=asked_on.sentences.first(),
                                       asked_by=annotator)
    QuestionMessage.objects.create(question=question, author=annotator, body="Is a superlative rational?")
    UnitFlag.objects.create(turn=flagged_on, sentence=flagged_on.sentences.first(), sentence_index=1, sentence_text="x",
                            flagged_by=annotator, kind=UnitFlagKind.TWO_SENTENCES, note="Two sentences here.")

    assert (_marks(annotator, asked_on).questions, _marks(annotator, asked_on).flags) == (True, False)
    assert (_marks(annotator, flagged_on).questions, _marks(annotator, flagged_on).flags) == (False, True)
    assert (_marks(peer, asked_on).questions, _marks(peer, flagged_on).flags) == (False, False)
    superuser = UserFactory(is_superuser=True)
    assert (_marks(superuser, asked_on).questions, _marks(superuser, asked_on).flags) == (True, True)

    first, second = (AssignmentFactory(turn=turn, annotator=annotator) for turn in (asked_on, flagged_on))
    on_question, on_flag = _screen(annotator, first), _screen(annotator, second)
    assert "Is a superlative rational?" in on_question and "Two sentences here." not in on_question
    assert "Two sentences here." in on_flag and "Is a superlative rational?" not in on_flag
    peers = _screen(peer, AssignmentFactory(turn=asked_on, annotator=peer))
    assert "Is a superlative rational?" not in peers
