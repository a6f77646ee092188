"""Primary keys reserved up front for bulk imports (annotator.fastsql.bulk)."""

import threading

import pytest
from django.db import connection

from annotator.models import Sentence
from annotator.fastsql.bulk import id_allocator


@pytest.mark.django_db(transaction=True)
def test_ids_reserved_by_concurrent_imports_never_collide():
    """Two imports reserving at once get disjoint ids, whether their blocks came out contiguous or interleaved."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite: the import's write lock keeps other writers out; there is no concurrent reservation")
    results, errors = [], []

    def reserve():
        try:
            with id_allocator() as allocate:
                for _ in range(20):
                    results.append(list(allocate(Sentence, 5000)))
        except Exception as exc:  # reported by the test below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=reserve) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    ids = [pk for block in results for pk in block]
    assert len(results) == 60 and all(len(block) == 5000 for block in results)
    assert len(set(ids)) == len(ids) == 300_000
    with id_allocator() as allocate:
        assert min(allocate(Sentence, 1)) > max(ids)
