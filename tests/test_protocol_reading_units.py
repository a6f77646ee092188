"""The plain modules behind issue 38's protocol items, on their own: the bounded cache's order, a refusal's
bounds, and the reader's verdicts (the routes are tested in test_protocol_limits.py)."""

import pytest

from annotator.domain.protocol.cache import ProtocolCache
from annotator.domain.protocol.validation import MAX_PROBLEMS, bounded, quoted
from annotator.projects.protocol_reading import ProtocolTextError, read_protocol_text


def test_the_cache_drops_the_least_recently_used_document_first():
    cache = ProtocolCache(size=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    assert cache.get_or_make("c", lambda: 3) == 3
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3 and len(cache) == 2
    made = []
    assert cache.get_or_make("a", lambda: made.append("again") or 9) == 1 and not made


def test_a_refusal_keeps_fifty_problems_cut_short_and_counts_the_rest():
    problems = [(f"/labels/{n}", "x" * 10_000) for n in range(MAX_PROBLEMS + 7)]
    kept = bounded(problems)
    assert len(kept) == MAX_PROBLEMS + 1 and kept[-1] == ("/", "and 7 more problem(s), not listed")
    assert all(len(message) < 400 for _, message in kept)
    assert len(quoted([["y" * 1000] * 1000] * 1000)) < 200


@pytest.mark.parametrize("text, format, reason", [
    ("a: &x 1\nb: *x\n", "yaml", "uses an anchor ('x', line 1)"),
    ("b: *x\n", "yaml", "uses an alias ('x', line 1)"),
    ("version: 2020-01-01\n", "yaml", "holds a date at /version, which is not JSON data"),
    ("{1: a}\n", "yaml", "has a key that is not text (1) at /"),
    ("[NaN]", "json", "is not JSON: NaN is not a JSON number"),
    ("[" * 13 + "]" * 13, "json", "deeper than 12"),
    ("1" * 5000, "json", "is not JSON: Exceeds the limit (4300 digits)"),
])
def test_the_reader_refuses_what_is_not_plain_json_data_within_the_limits(text, format, reason, settings):
    with pytest.raises(ProtocolTextError) as refused:
        read_protocol_text(text, format)
    assert reason in refused.value.reason


def test_the_reader_takes_json_and_yaml_at_the_depth_limit(settings):
    settings.PROTOCOL_MAX_DEPTH = 3
    assert read_protocol_text('{"a": [{"b": 1}]}') == {"a": [{"b": 1}]}
    assert read_protocol_text("a:\n  - b: 1\n", "yaml") == {"a": [{"b": 1}]}
    with pytest.raises(ProtocolTextError, match="deeper than 3"):
        read_protocol_text("a:\n  - b: [1]\n", "yaml")
