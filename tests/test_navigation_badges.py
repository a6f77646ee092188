"""The navigation's badges read in one statement (annotator.navigation) say what the features' querysets say."""

import pytest
from django.test import RequestFactory

from annotator.gold.selectors import oldest_dispute_project, open_disputes_for
from annotator.models import Adjudication, Feedback, QualificationResult, Question
from annotator.navigation import nav_badges
from annotator.qa.selectors import nav_counts
from annotator.domain.vocabulary import Role
from tests.factories import MembershipFactory, ProjectFactory, TurnFactory, UserFactory, member
from tests.factories_qa import submitted_work

pytestmark = pytest.mark.django_db


def _reference(user):
    """The badges as the features' own queries give them, one by one."""
    disputes = open_disputes_for(user)
    count = disputes.count()
    return nav_counts(user), (count, oldest_dispute_project(disputes).first() if count else None)


def _badges(user):
    request = RequestFactory().get("/")
    request.user = user
    badges = nav_badges(request)
    assert nav_badges(request) is badges  # read once per request
    return badges.qa, badges.disputes


def test_every_kind_of_user_sees_the_badges_the_features_count():
    project, other = ProjectFactory(slug="first"), ProjectFactory(slug="second")
    turn, other_turn, later_turn = (TurnFactory(dialogue__project=project), TurnFactory(dialogue__project=other),
                                    TurnFactory(dialogue__project=project))
    lead, annotator = member(project, Role.LEAD), member(project, Role.ANNOTATOR)
    adjudicator, outsider = member(project, Role.ADJUDICATOR), UserFactory()
    MembershipFactory(project=other, user=adjudicator, role=Role.ADJUDICATOR)
    superuser = UserFactory(is_superuser=True)
    work = submitted_work(turn, annotator, ["faithful", "reliable"])
    Feedback.objects.create(project=project, annotation=work.sentence_annotations.first(), lead=lead, comment="Hedged")
    for unread in (True, True, False):
        Question.objects.create(project=project, turn=turn, sentence=turn.sentences.first(), asked_by=annotator,
                                unread_by_asker=unread)
    # Disputes: the adjudicator decides those of both projects, the annotator none (not theirs to judge), the
    # lead those on turns they did not annotate; the oldest is in "second".
    Adjudication.objects.create(sentence=other_turn.sentences.first(), turn=other_turn)
    Adjudication.objects.create(sentence=turn.sentences.first(), turn=turn)
    Adjudication.objects.create(sentence=later_turn.sentences.first(), turn=later_turn)
    submitted_work(later_turn, lead, ["faithful"])

    # Qualification: the annotator failed "first"'s twice (only the last attempt waits for the lead); a second
    # annotator failed "second"'s but a retry is allowed, a third left the project.
    for attempt in (1, 2):
        QualificationResult.objects.create(project=project, annotator=annotator, attempt=attempt, total=3)
    MembershipFactory(project=other, user=annotator, role=Role.ANNOTATOR)
    QualificationResult.objects.create(project=other, annotator=annotator, total=3, retry_allowed=True)
    QualificationResult.objects.create(project=project, annotator=UserFactory(), total=3)
    second_lead = member(other, Role.LEAD)

    seen = {}
    for name, user in {"lead": lead, "annotator": annotator, "adjudicator": adjudicator, "outsider": outsider,
                       "superuser": superuser, "second lead": second_lead}.items():
        seen[name] = _badges(user)
        assert seen[name] == _reference(user), name
    assert seen["annotator"][0]["unread_answers"] == 2 and seen["annotator"][0]["pending_feedback"] == 1
    assert seen["adjudicator"][1] == (3, "second") and seen["lead"][1] == (1, "first")
    assert seen["lead"][0]["is_lead"] and not seen["annotator"][0]["is_lead"]
    assert (seen["lead"][0]["waiting_for_retry"], seen["lead"][0]["waiting_for_retry_project"]) == (1, "first")
    assert seen["lead"][0]["open_questions"] == 3 and seen["second lead"][0]["waiting_for_retry"] == 0
    assert seen["outsider"] == ({**seen["outsider"][0], "unread_answers": 0, "pending_feedback": 0}, (0, None))
    assert seen["superuser"][1] == (3, "second")


def test_only_someone_who_may_decide_disputes_has_them_counted():
    """Counting open disputes goes through every open dispute of the database: an annotator (who may decide
    none) does not pay for it on every page; an adjudicator and a lead still see theirs."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project = ProjectFactory()
    turns = [TurnFactory(dialogue__project=project) for _ in range(3)]
    for turn in turns:
        Adjudication.objects.create(sentence=turn.sentences.first(), turn=turn)
    people = {role: member(project, role) for role in (Role.ANNOTATOR, Role.ADJUDICATOR, Role.LEAD)}
    for role, user in people.items():
        with CaptureQueriesContext(connection) as queries:
            _, disputes = _badges(user)
        counted = any("annotator_adjudication" in query["sql"] for query in queries.captured_queries)
        assert counted == (role != Role.ANNOTATOR), role
        assert disputes == ((0, None) if role == Role.ANNOTATOR else (3, project.slug)), role
        assert len(queries.captured_queries) == (1 if role == Role.ANNOTATOR else 2), role
