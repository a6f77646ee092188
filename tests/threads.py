"""Run a race: several callables at once, each in its own thread with its own database connection."""

import threading

from django.db import connection


def run_at_once(*targets, join_timeout: float = 120) -> list[str]:
    """Start every target in a thread, wait for all, and return what they raised (``repr``), for the test to
    assert there is nothing. A target catches the errors the test expects itself; each thread closes its
    database connection when it ends (Django opens one per thread)."""
    failures = []

    def run(target):
        try:
            target()
        except Exception as error:  # noqa: BLE001 - returned to the test, which reports it
            failures.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(join_timeout)
    return failures
