"""``access_assignment``: the holder's assignment with its project, turn and dialogue, as the ORM would load them."""

import pytest
from django.http import Http404
from django.utils import timezone

from annotator.access import access_assignment, role_in
from annotator.models import Assignment
from annotator.domain.vocabulary import Role
from tests.factories import AssignmentFactory, DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = pytest.mark.django_db


def _fields(instance):
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_it_loads_the_same_values_as_the_orm_for_every_field_of_the_four_models():
    # Values of every kind the conversions must get right: JSON, booleans, dates, nulls, non-ASCII text.
    project = ProjectFactory(require_evidence=True, show_prelabels=True)
    dialogue = DialogueFactory(project=project, reference="Ünïcode ✓ reference", language="deutsch")
    turn = TurnFactory(dialogue=dialogue, history=[{"role": "user", "text": "Hallo"}, {"role": "assistant", "text": "Hi"}])
    user = member(project)
    assignment = AssignmentFactory(turn=turn, annotator=user, status=Assignment.Status.IN_PROGRESS,
                                   started_at=timezone.now(), version=7)

    loaded = access_assignment(user, assignment.pk)

    expected = Assignment.objects.select_related("project", "turn__dialogue").get(pk=assignment.pk)
    assert _fields(loaded) == _fields(expected)
    assert _fields(loaded.project) == _fields(expected.project)
    assert _fields(loaded.turn) == _fields(expected.turn)
    assert _fields(loaded.turn.dialogue) == _fields(expected.turn.dialogue)
    assert loaded.turn.history[0] == {"role": "user", "text": "Hallo"}
    assert loaded.project.require_evidence is True and loaded.started_at.tzinfo is not None


def test_the_role_comes_with_it_and_another_annotators_assignment_is_not_found(django_assert_num_queries):
    project = ProjectFactory()
    holder, other = member(project), member(project)
    assignment = AssignmentFactory(turn=TurnFactory(dialogue=DialogueFactory(project=project)), annotator=holder)

    with django_assert_num_queries(1):
        loaded = access_assignment(holder, assignment.pk)
        assert role_in(holder, loaded.project) == Role.ANNOTATOR
        assert loaded.turn.dialogue.project_id == project.pk
    for user, assignment_id in [(other, assignment.pk), (holder, assignment.pk + 1000), (holder, "x"), (holder, 10**30)]:
        with pytest.raises(Http404):
            access_assignment(user, assignment_id)


def test_a_holder_removed_from_the_project_gets_no_role():
    project = ProjectFactory()
    holder = member(project)
    assignment = AssignmentFactory(turn=TurnFactory(dialogue=DialogueFactory(project=project)), annotator=holder)
    project.memberships.filter(user=holder).delete()

    assert role_in(holder, access_assignment(holder, assignment.pk).project) is None


def test_the_session_user_is_the_orms_user_and_an_inactive_one_is_logged_out(client):
    from django.contrib.auth import get_user_model

    from tests.factories import UserFactory

    user = UserFactory(first_name="Zoë", is_staff=False)
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    loaded = response.wsgi_request.user  # the user itself: the login check loaded it (UnwrapEvaluatedUserMiddleware)
    assert type(loaded) is get_user_model()
    assert _fields(loaded) == _fields(get_user_model().objects.get(pk=user.pk))

    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    response = client.get("/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_user_not_loaded_yet_stays_lazy_and_unloaded():
    """The middleware only unwraps: a view that never needed the user does not get it loaded."""
    from django.test import RequestFactory
    from django.utils.functional import SimpleLazyObject

    from annotator.middleware import UnwrapEvaluatedUserMiddleware

    loads = []
    request = RequestFactory().get("/accounts/login/")
    request.user = SimpleLazyObject(lambda: loads.append("loaded") or object())
    UnwrapEvaluatedUserMiddleware(lambda r: None).process_view(request, None, (), {})
    assert isinstance(request.user, SimpleLazyObject) and loads == []


def test_a_session_started_before_the_session_user_backend_stays_logged_in(client):
    from tests.factories import UserFactory

    user = UserFactory()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    assert client.get("/").status_code == 200
    # A new login is served by the backend written for it.
    client.logout()
    client.force_login(user)
    assert client.session["_auth_user_backend"] == "annotator.auth_backend.SessionUserBackend"
    assert client.get("/").status_code == 200


def test_a_wrong_password_is_checked_once(client, monkeypatch):
    from django.contrib.auth.base_user import AbstractBaseUser

    from tests.factories import UserFactory

    user = UserFactory()
    user.set_password("the right one 4711")
    user.save()
    checks = []
    original = AbstractBaseUser.check_password
    monkeypatch.setattr(AbstractBaseUser, "check_password", lambda self, raw: checks.append(raw) or original(self, raw))
    response = client.post("/accounts/login/", {"username": user.username, "password": "a wrong one"})
    assert response.status_code == 200 and "_auth_user_id" not in client.session
    assert checks == ["a wrong one"]
    response = client.post("/accounts/login/", {"username": user.username, "password": "the right one 4711"})
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(user.pk)
