"""bench/broker_race.py with real producer and consumer processes: the project's transport delivers every message."""

from bench import broker_race


def test_the_project_transport_delivers_every_message_of_three_producers_to_a_worker_polling_without_pause():
    result = broker_race.one_round(broker_race.TRANSPORTS["project"], messages=600)
    assert result == {"sent": 600, "received": 600, "read_errors": 0, "producers_failed_to_start": 0, "files_left": 0}
