"""What a call to the model gives back: its choices (text, cut short or not), token counts, retries, error.

The LLM client (``autolabel.jobs.llm``) fills it; the pipeline reads it. It lives with the labelling rules so
that they depend on no client.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Choice:
    text: str | None
    truncated: bool


@dataclass
class CallResult:
    choices: list[Choice] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    error: str = ""
