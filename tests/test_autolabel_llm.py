"""Pure parts of the client: Retry-After, backoff, cost, reading a completion body."""

import email.utils
import time
from decimal import Decimal

import pytest

from autolabel.jobs.llm import Caller, CallResult, backoff_seconds, cost_of, request_body, retry_after_seconds


def test_retry_after_in_seconds_milliseconds_or_http_date():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    in_five = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.5 <= retry_after_seconds({"retry-after": in_five}) <= 5.0
    assert retry_after_seconds({"retry-after": "99999"}) == 120.0  # capped
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_backoff_grows_and_is_capped():
    for attempt in range(8):
        value = backoff_seconds(attempt, base=0.5, cap=4.0)
        assert 0.5 <= value <= min(4.0, 0.5 * 2 ** attempt)


def test_cost_per_million_tokens_and_batch_discount():
    assert cost_of(1_000_000, 500_000, Decimal("2.5"), Decimal("10")) == Decimal("7.5")
    assert cost_of(1_000_000, 500_000, Decimal("2.5"), Decimal("10"), batch=True) == Decimal("3.75")


def test_request_body_uses_n_and_seed_only_when_needed():
    assert "n" not in request_body("m", [], n=1) and request_body("m", [], n=5)["n"] == 5
    assert request_body("m", [], seed=3)["seed"] == 3 and "seed" not in request_body("m", [])


def test_reading_a_completion_body():
    body = {"choices": [{"index": 1, "message": {"content": "<s1>irrelevant</s1>"}, "finish_reason": "length"},
                        {"index": 0, "message": {"content": "<s1>faithful factual</s1>"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 7}}
    result = Caller._read(body, CallResult())
    assert [c.text for c in result.choices] == ["<s1>faithful factual</s1>", "<s1>irrelevant</s1>"]
    assert [c.truncated for c in result.choices] == [False, True]
    assert (result.prompt_tokens, result.completion_tokens) == (12, 7)
    with pytest.raises(ValueError):
        Caller._read({"error": "nope"}, CallResult())
