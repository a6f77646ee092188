"""What a pre-labelling job will cost before it starts: requests, prompt and reply tokens, money and time.

Pure: the caller builds each turn's real prompts with the pipeline (``TurnPrompts``) and passes the endpoint's
prices, measured latency and concurrency; nothing here reads a database or sends anything.

Tokens are counted, not measured: ``tiktoken`` would count exactly for OpenAI's models, but it downloads its
encodings on first use (it ships none), which a server without internet access cannot do, so it is not a
dependency. The count is OpenAI's rule of thumb instead: about four characters a token for text in Latin,
Cyrillic or Greek script, one token a character for Chinese, Japanese and Korean (whose BPE tokens rarely hold
more than one or two characters), plus four tokens of framing per chat message and three to prime the reply.
The estimate leans high on purpose, so that a budget it fits is not overrun: stage 2 is counted as if every
sentence of every turn went there (it asks again only for the sentences a stage-1 sample sent there, which
nobody knows before the replies), and every reply line as holding the longest tag the format allows. After
the run the job page shows it beside the tokens the API reported (each response's ``usage``, summed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from decimal import ROUND_HALF_UP, Decimal

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY_PRIMING = 3


def _is_wide(char: str) -> bool:
    """Chinese, Japanese and Korean characters (and their punctuation): about one token each."""
    code = ord(char)
    return (0x2E80 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF or 0xF900 <= code <= 0xFAFF
            or 0xFF00 <= code <= 0xFFEF or 0x20000 <= code <= 0x2FA1F)


def text_tokens(text: str) -> int:
    wide = sum(1 for char in text if _is_wide(char))
    return wide + math.ceil((len(text) - wide) / CHARS_PER_TOKEN)


def message_tokens(messages: Sequence[dict]) -> int:
    """The prompt tokens of one chat request."""
    return TOKENS_PER_REPLY_PRIMING + sum(TOKENS_PER_MESSAGE + text_tokens(str(m.get("content") or ""))
                                          for m in messages)


def reply_tokens(numbers: Sequence[int], longest_tag: str) -> int:
    """One sample's reply: a marker line per sentence holding the longest tag the format allows."""
    return text_tokens("".join(f"<s{n}>{longest_tag}</s{n}>\n" for n in numbers))


@dataclass(frozen=True)
class TurnPrompts:
    """One turn as the job would send it: the real messages of each stage and the sentences' numbers."""

    numbers: Sequence[int]
    stage1_messages: Sequence[dict]
    stage2_messages: Sequence[dict] | None  # None: the protocol has no second stage


@dataclass(frozen=True)
class Endpoint:
    """What the estimate needs of an endpoint and a job's options."""

    samples: int
    use_n: bool  # all samples in one request (the prompt is then billed once)
    concurrency: int
    input_price_per_million: Decimal = Decimal(0)
    output_price_per_million: Decimal = Decimal(0)
    latency_seconds: float | None = None  # measured (the endpoint's last test); None: unknown
    batch: bool = False  # the Batch API: half price, and no time estimate (within 24 h)
    stage1_tag: str = ""  # the longest reply tag of each stage
    stage2_tag: str = ""


@dataclass(frozen=True)
class Estimate:
    turns: int
    sentences: int
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal
    seconds: float | None  # None: latency unknown, or batch mode
    counted_turns: int  # the turns whose prompts were built; the rest are scaled from them
    stage2_upper_bound: bool

    def as_dict(self) -> dict:
        data = asdict(self)
        data["cost"] = str(self.cost)
        return data

    @property
    def time_words(self) -> str:
        """The time as a page says it: "under a second" where a figure would read "about 0.0 s"."""
        return duration_words(self.seconds) if self.seconds is not None else ""


def duration_words(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def _stage(messages, numbers, tag, endpoint: Endpoint) -> tuple[int, int, int]:
    """(requests, prompt tokens, reply tokens) of one stage of one turn."""
    requests = 1 if endpoint.use_n else endpoint.samples
    prompt = message_tokens(messages) * requests
    replies = reply_tokens(numbers, tag) * endpoint.samples
    return requests, prompt, replies


def estimate(turns: Iterable[TurnPrompts], endpoint: Endpoint, *, total_turns: int | None = None,
             total_sentences: int | None = None) -> Estimate:
    """The estimate over ``turns``; when they are a sample of a larger job, ``total_turns`` and
    ``total_sentences`` give its size and the counts are scaled by sentences."""
    requests = prompt = replies = counted = sentences = 0
    two_stage = False
    for turn in turns:
        counted += 1
        sentences += len(turn.numbers)
        if not turn.numbers:
            continue
        stages = [(turn.stage1_messages, endpoint.stage1_tag)]
        if turn.stage2_messages is not None:
            two_stage = True
            stages.append((turn.stage2_messages, endpoint.stage2_tag))
        for messages, tag in stages:
            r, p, c = _stage(messages, turn.numbers, tag, endpoint)
            requests, prompt, replies = requests + r, prompt + p, replies + c
    all_turns = total_turns if total_turns is not None else counted
    all_sentences = total_sentences if total_sentences is not None else sentences
    scale = (all_sentences / sentences) if sentences and all_sentences != sentences else 1.0
    requests, prompt, replies = (round(value * scale) for value in (requests, prompt, replies))
    cost = (Decimal(prompt) * Decimal(endpoint.input_price_per_million)
            + Decimal(replies) * Decimal(endpoint.output_price_per_million)) / Decimal(1_000_000)
    if endpoint.batch:
        cost /= 2
    seconds = None
    if endpoint.latency_seconds is not None and not endpoint.batch:
        seconds = round(math.ceil(requests / max(1, endpoint.concurrency)) * endpoint.latency_seconds, 1)
    return Estimate(turns=all_turns, sentences=all_sentences, requests=requests, prompt_tokens=prompt,
                    completion_tokens=replies, cost=cost.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP),
                    seconds=seconds, counted_turns=counted, stage2_upper_bound=two_stage)
