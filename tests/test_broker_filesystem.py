"""The default broker (kombu's filesystem transport as config/broker.py writes it) loses no message.

kombu's own transport creates a message file before writing it, so a worker polling in between takes an empty
file and the message is gone: the test of that moment below fails on kombu's transport (JSONDecodeError out of
the worker's read). bench/broker_race.py counts the losses with several processes.
"""

from pathlib import Path
from queue import Empty

import pytest
from django.conf import settings
from kombu import Connection

from config.broker import Transport
from config.celery import BROKER_FOLDER_OPTIONS
from config.settings.base import filesystem_broker_options


@pytest.fixture
def connect(tmp_path):
    """Channels on one broker folder, as the web server's and a worker's processes open them."""
    options = filesystem_broker_options(tmp_path)
    for name in BROKER_FOLDER_OPTIONS:
        Path(options[name]).mkdir(exist_ok=True)
    connections = []

    def open_channel():
        connection = Connection("filesystem://", transport=Transport, transport_options=options)
        connections.append(connection)
        return connection.default_channel

    yield open_channel
    for connection in connections:
        connection.release()


class PollsWhileWritten:
    """A value whose encoding makes a worker poll the queue: the moment the message is being written."""

    def __init__(self, poll):
        self.poll = poll
        self.seen = []

    def __json__(self):
        try:
            self.seen.append(self.poll())
        except Empty:
            self.seen.append(None)
        return "the job's arguments"


def test_a_worker_polling_while_a_message_is_written_sees_nothing_then_the_whole_message_once(connect):
    web, worker = connect(), connect()
    arguments = PollsWhileWritten(lambda: worker._get("jobs"))
    web._put("jobs", {"task": "annotator.import_batch_run", "args": arguments})
    assert arguments.seen == [None]
    assert worker._get("jobs") == {"task": "annotator.import_batch_run", "args": "the job's arguments"}
    with pytest.raises(Empty):
        worker._get("jobs")


def test_messages_arrive_in_order_and_no_half_written_file_is_left(connect, tmp_path):
    web, worker = connect(), connect()
    for number in range(20):
        web._put("jobs", {"number": number})
    assert [worker._get("jobs")["number"] for _ in range(20)] == list(range(20))
    assert not [path.name for path in tmp_path.rglob("*") if path.is_file() and not path.suffix == ".exchange"]


def test_queues_bound_by_two_processes_to_one_exchange_both_get_their_messages(connect):
    web, worker = connect(), connect()
    web._queue_bind("jobs", "jobs", None, "jobs")
    worker._queue_bind("jobs", "reports", None, "reports")
    worker._queue_bind("jobs", "jobs", None, "jobs")  # bound again: listed once
    assert sorted(entry.queue for entry in web.get_table("jobs")) == ["jobs", "reports"]


def test_the_project_selects_it_for_the_filesystem_broker_only():
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        assert settings.CELERY_BROKER_TRANSPORT == "config.broker:Transport"
        from config.celery import app

        with app.connection_for_write() as connection:
            assert connection.get_transport_cls() is Transport
    else:  # Redis or RabbitMQ: their own transport, nothing forced
        assert not hasattr(settings, "CELERY_BROKER_TRANSPORT")
