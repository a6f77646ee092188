"""The load generator (bench/load.py) against the live app: what it reports is what the database holds."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from annotator.models import AnnotationEvent, Assignment, SentenceAnnotation
from bench import load


def assert_stored_as_sent(stats):
    """Every acknowledged decision is stored once, as the answer that was sent; the label of every sentence the
    run finished is the one it chose; what it submitted is submitted."""
    events = {e.request_id: e for e in AnnotationEvent.objects.filter(request_id__in=stats.acked)}
    assert len(events) == len(stats.acked)
    for request_id, (assignment_id, sentence_id, step, value) in stats.acked.items():
        event = events[request_id]
        assert (event.assignment_id, event.sentence_id, event.action) == (assignment_id, sentence_id, "answer")
        assert (event.new["step"], event.new["answer"]) == (step, value)
    # The label of every sentence it finished is the one it chose; what it submitted is submitted.
    for (assignment_id, sentence_id), label in stats.chosen.items():
        assert SentenceAnnotation.objects.get(assignment_id=assignment_id, sentence_id=sentence_id).label == label
    assert set(Assignment.objects.filter(pk__in=stats.submitted).values_list("status", flat=True)) == {"submitted"}


@pytest.mark.django_db(transaction=True)
def test_the_load_generator_annotates_through_the_screen_and_reports_what_was_stored(live_server):
    load.setup(annotators=2, turns=6, sentences=2, overlap=2)
    stats, _, _ = _in_own_thread(load.run_annotators(live_server.url, count=2, duration=3.0, rate=0, seed=1))

    assert not stats.errors, stats.error_samples
    assert stats.decisions == len(stats.acked) > 0 and stats.submitted
    assert_stored_as_sent(stats)


@pytest.mark.django_db(transaction=True)
def test_the_sync_mode_sends_one_request_per_labelled_sentence_and_every_decision_is_stored_once(live_server):
    load.setup(annotators=2, turns=200, sentences=2, overlap=2)  # more than one request per sentence can get through
    stats, _, _ = _in_own_thread(load.run_annotators(live_server.url, count=2, duration=3.0, rate=0, seed=1, sync=True))

    assert not stats.errors, stats.error_samples
    assert stats.decisions == len(stats.acked) > 0 and stats.submitted and stats.chosen
    # One /sync/ per labelled sentence (the last one may be cut by the end of the run), none per decision.
    assert stats.requests["answer"] == 0
    assert len(stats.chosen) <= stats.requests["sync"] <= len(stats.chosen) + 2
    # Each decision the run counted is one step event of the audit history, on its sentence, as sent.
    assert_stored_as_sent(stats)


@pytest.mark.urls("bench.floor.urls")
@pytest.mark.django_db(transaction=True)
def test_the_floor_with_screens_loads_each_turn_and_sends_its_decisions_to_the_floor(live_server):
    load.setup(annotators=2, turns=6, sentences=2, overlap=2)
    stats, _, _ = _in_own_thread(load.run_annotators(live_server.url, count=2, duration=2.0, rate=0, seed=1,
                                                     floor=True, with_screens=True))

    assert not stats.errors, (stats.errors, stats.error_samples)
    assert stats.decisions == len(stats.acked) > 0
    # Start, the screen and the (refused) submit of every turn were sent; the decisions went to the floor view.
    assert stats.other_latencies
    events = AnnotationEvent.objects.filter(request_id__in=stats.acked)
    assert events.count() == len(stats.acked)
    assert set(events.values_list("action", flat=True)) == {"note"}
    assert not SentenceAnnotation.objects.exists() and not stats.chosen and not stats.submitted


def _in_own_thread(coroutine):
    """Run the load generator's event loop in a thread of its own.

    The browser tests' Playwright (sync API) keeps an event loop running in the
    main thread of the xdist worker that ran them, and asyncio.run refuses to
    start inside it (this failed CI once the two landed on the same worker).
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
