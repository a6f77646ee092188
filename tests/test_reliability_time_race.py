"""Time spent on a sentence is not lost when a decision on it races a time beacon (PostgreSQL).

The page sends the seconds spent on a sentence as a beacon when the annotator
moves on (``annotation_record_time``: an increment, no version, no lock on the
assignment), and the next decision on the same sentence writes the whole
annotation row. Here the beacon's increment is in flight (its transaction holds
the row) while the decision comes in: the decision must wait for it and add to
it, not overwrite it with the row it read before.
"""

import threading
import time

import psycopg
import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotator.models import SentenceAnnotation
from annotator.work.assignment import assignment_next
from tests.factories_workspace import annotators, project_with_turns

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.django_db(transaction=True)
def test_a_decision_racing_a_time_beacon_keeps_the_beacons_seconds():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite lets one writer in at a time: there is no interleaving to test")
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    assignment = assignment_next(project, user)
    sentence = turns[0].sentences.order_by("index").first()
    client = Client()
    client.force_login(user)
    answer_url = reverse("annotate_act", args=[assignment.pk, "answer"])
    first = client.post(answer_url, {"sentence": sentence.pk, "step": "relevance", "value": "relevant",
                                     "version": 0, "request_id": "one", "seconds": "2"}, **HX)
    assert first.status_code == 200

    beacon, observer = _connect(), _connect(autocommit=True)
    try:
        # The beacon's increment, committed only once the decision is under way.
        beacon.execute(
            "UPDATE annotator_sentenceannotation SET seconds_spent = seconds_spent + 5 "
            "WHERE assignment_id = %s AND sentence_id = %s", (assignment.pk, sentence.pk))
        answered = {}

        def decide():
            try:
                answered["response"] = client.post(
                    answer_url, {"sentence": sentence.pk, "step": "kind", "value": "factual", "version": 1,
                                 "request_id": "two", "seconds": "3"}, **HX)
            finally:
                connection.close()

        decision = threading.Thread(target=decide)
        decision.start()
        _wait_until_a_session_waits_for_a_lock(observer)
        beacon.commit()
        decision.join(30)
    finally:
        beacon.close()
        observer.close()

    assert answered["response"].status_code == 200
    annotation = SentenceAnnotation.objects.get(assignment=assignment, sentence=sentence)
    assert annotation.path == {"relevance": "relevant", "kind": "factual"}
    assert annotation.seconds_spent == 2 + 5 + 3


def _connect(autocommit=False):
    settings = connection.settings_dict
    return psycopg.connect(dbname=settings["NAME"], user=settings["USER"], password=settings["PASSWORD"] or None,
                           host=settings["HOST"] or None, port=settings["PORT"] or None, autocommit=autocommit)


def _wait_until_a_session_waits_for_a_lock(observer, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiting = observer.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        ).fetchone()[0]
        if waiting:
            return
        time.sleep(0.05)
    raise AssertionError("the decision never waited for the beacon's row")
