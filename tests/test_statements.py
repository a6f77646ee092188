"""Single-row writes from statements written once store what the ORM's save() stores."""

import pytest
from django.utils import timezone

from annotator.models import AnnotationEvent, Assignment, SentenceAnnotation
from annotator.fastsql.statements import instance_update, row_insert, row_update
from tests.factories import AssignmentFactory, UserFactory

pytestmark = pytest.mark.django_db


def _fields(instance):
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_insert_and_update_store_what_save_stores():
    assignment = AssignmentFactory()
    sentence = assignment.turn.sentences.first()
    annotation = SentenceAnnotation(assignment=assignment, sentence=sentence, path={"relevance": "relevant", "ü": "✓"},
                                    label="", note="a <note>", seconds_spent=2.5)
    row_insert(annotation, ("assignment", "sentence", "path", "label", "note", "seconds_spent", "severity",
                            "justification", "error_type", "updated_at"))
    stored = SentenceAnnotation.objects.get(pk=annotation.pk)
    assert _fields(stored) == _fields(annotation) and stored.severity is None and stored.updated_at is not None

    first_update = stored.updated_at
    annotation.label, annotation.severity, annotation.path = "reliable", 3, {"relevance": "relevant", "kind": "cognitive"}
    assert instance_update(annotation, ("label", "severity", "path", "updated_at")) == 1
    stored = SentenceAnnotation.objects.get(pk=annotation.pk)
    assert (stored.label, stored.severity, stored.path) == ("reliable", 3, {"relevance": "relevant", "kind": "cognitive"})
    assert stored.updated_at >= first_update

    event = AnnotationEvent(assignment=assignment, sentence=sentence, actor=UserFactory(), action="answer",
                            old={"path": {}}, new={"label": "reliable"}, request_id="r-1")
    row_insert(event, ("assignment", "sentence", "actor", "action", "old", "new", "request_id", "created_at"))
    assert _fields(AnnotationEvent.objects.get(pk=event.pk)) == _fields(event)


def test_a_conditional_update_changes_only_a_row_that_matches():
    assignment = AssignmentFactory(version=4)
    now = timezone.now()
    stale = {"pk": assignment.pk, "version": 3}
    assert row_update(Assignment, {"last_activity_at": now}, stale, increment=("version",)) == 0
    current = {"pk": assignment.pk, "version": 4, "annotator": assignment.annotator_id}
    assert row_update(Assignment, {"last_activity_at": now}, current, increment=("version",)) == 1
    assignment.refresh_from_db()
    assert (assignment.version, assignment.last_activity_at) == (5, now)


def test_the_write_path_writes_every_column_of_an_annotation_and_an_event():
    """The hand-written INSERT / UPDATE of the write path name every concrete field of the model (but the id)."""
    import re

    from django.db import connection

    from annotator.work.write import ANNOTATION_FIELDS, EVENT_FIELDS
    from annotator.fastsql.statements import _insert_sql, _update_sql

    def columns(model):
        return {connection.ops.quote_name(f.column) for f in model._meta.concrete_fields if not f.primary_key}

    def inserted(sql):
        return set(re.match(r"INSERT INTO \S+ \(([^)]*)\)", sql).group(1).split(", "))

    def updated(sql):
        return {part.split(" = ")[0] for part in re.match(r"UPDATE \S+ SET (.*) WHERE", sql).group(1).split(", ")}

    names = ("assignment", "sentence", *ANNOTATION_FIELDS)
    assert inserted(_insert_sql(SentenceAnnotation, names)) == columns(SentenceAnnotation)
    identity = {connection.ops.quote_name(SentenceAnnotation._meta.get_field(n).column) for n in ("assignment", "sentence")}
    assert updated(_update_sql(SentenceAnnotation, ANNOTATION_FIELDS, ("pk",), ())) | identity == columns(SentenceAnnotation)
    assert inserted(_insert_sql(AnnotationEvent, EVENT_FIELDS)) == columns(AnnotationEvent)


def test_on_postgresql_a_statement_written_once_is_prepared_on_the_server():
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    assignment = AssignmentFactory(version=4)
    row_update(Assignment, {"version": 4}, {"pk": assignment.pk})
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any(statement.startswith('UPDATE "annotator_assignment"') for statement in prepared)
    # Nothing the ORM runs is prepared: only the statements written once.
    assert not any("auth_user" in statement for statement in prepared)


def test_a_statement_written_once_keeps_djangos_errors_and_query_capture():
    from django.db import IntegrityError, connection, transaction
    from django.test.utils import CaptureQueriesContext

    assignment = AssignmentFactory()
    sentence = assignment.turn.sentences.first()
    first = SentenceAnnotation(assignment=assignment, sentence=sentence, path={}, label="")
    names = ("assignment", "sentence", "path", "label", "note", "seconds_spent", "justification", "error_type",
             "updated_at")
    with CaptureQueriesContext(connection) as captured:
        row_insert(first, names)
    assert len(captured) == 1 and captured[0]["sql"].startswith('INSERT INTO "annotator_sentenceannotation"')
    # Outside a capture (on PostgreSQL: the prepared statement's cursor), Django's own error all the same.
    with pytest.raises(IntegrityError), transaction.atomic():
        row_insert(SentenceAnnotation(assignment=assignment, sentence=sentence, path={}, label=""), names)


@pytest.mark.django_db(transaction=True)
def test_a_kept_connection_the_server_dropped_is_replaced_before_a_statement_written_once(monkeypatch):
    """CONN_HEALTH_CHECKS holds for these statements too: a new request's first statement (the session's user is
    read with one) does not fail because the server restarted since the connection was last used."""
    from django.db import connection

    from annotator.access import access_assignment

    if connection.vendor != "postgresql":
        pytest.skip("SQLite's connection is a file: the server cannot drop it")
    assignment = AssignmentFactory()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    import psycopg

    settings = connection.settings_dict
    with psycopg.connect(host=settings["HOST"] or None, port=settings["PORT"] or None, user=settings["USER"],
                         password=settings["PASSWORD"] or None, dbname=settings["NAME"], autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [backend])
    monkeypatch.setitem(connection.settings_dict, "CONN_HEALTH_CHECKS", True)
    connection.health_check_done = False  # what Django sets when the next request starts
    found = access_assignment(assignment.annotator, assignment.pk)
    assert found.pk == assignment.pk
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != backend
