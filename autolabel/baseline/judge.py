"""The baseline judge: a transparent lexical-overlap rule, no language model.

It reads a prompt made by prompting.build_messages (with parsing.parse_prompt) and answers it in the same
marker format a real model must use, so the whole pipeline (prompts, parsing, voting, jobs, evaluation)
can run offline. It is a *baseline*: it knows nothing about meaning, only which words of a sentence also
occur in the reference, and nothing of any protocol: it chooses among the replies the prompt's format block
allows, as options.py describes them (hallucination or not, goes on to a second request, wording about
empty sentences or about reasoning).

For each marked sentence:

- content words: lower-cased words of 3+ letters, minus a short stop list, each
  cut to its first 6 letters (a crude stem, so "rivers" matches "river");
- support: the share of the sentence's content words found in the reference;
- unsupported numbers: numbers in the sentence that do not occur in the reference;
- empty: fewer than 2 content words, none of them in the reference;
- reasoning: the sentence holds a cue of inference or judgement (because, therefore, important, likely,
  should, ...);
- bad: support below 0.6 (plus the sample's jitter), or an unsupported number.

First request: an empty sentence takes the reply whose wording speaks of sentences with nothing to check
(when the protocol has one; otherwise nothing it says can be unsupported, so it is not bad). Any other
sentence takes a reply that is a hallucination when bad and is not one otherwise (a reply whose second
request decides fits both); among those, a reasoning sentence the one whose wording speaks most of
reasoning (going on to a second request counts), another sentence the one that speaks of it least; then
the one whose wording shares most words with the sentence; then the first listed.
Second request: bad is support below 0.6 (plus jitter) only. Among the labels that are hallucinations when bad
(the others otherwise; all labels when none fits), a bad sentence takes the first listed when its support is below 0.25 (plus jitter), else the
last; a sentence that is not bad takes the first listed when a hedge (may, might, could, often, ...)
softens it, else the last. (On CogniBench's document: misleading / speculative / reliable / unequivocal.)

Samples vary slightly: each sample moves the thresholds by a jitter in
[-0.08, 0.08] drawn from a generator seeded with the sample's seed and the
sentence number, so the same request with the same seed gets the same answer,
and five samples disagree on borderline sentences only.
"""

from __future__ import annotations

import random
import re

from autolabel.baseline.options import Option, read_options
from autolabel.labelling.parsing import parse_prompt
from autolabel.labelling.stages import STAGE_1

STOPWORDS = frozenset(
    """
    the and for are but not you all any can had her was one our out has have him his how its may new now
    see two who did get let put say she too use this that with from they will would there their what
    when which where while been were into than then them these those some such only also very more most
    other about after before over under again just each both few own same here being does doing
    your yours ours hers itself himself herself themselves ourselves
    """.split()
)
COGNITIVE_CUES = frozenset(
    """
    because therefore thus hence consequently result results suggests suggest suggesting implies imply indicates
    important importance significant significantly crucial essential key notable notably remarkable
    likely unlikely probably possibly perhaps seems seem appears appear believe think opinion
    should must best better worse great impressive valuable beneficial effective ultimately overall
    reflects reflect demonstrates demonstrate highlights highlight showcases showcase contributes contribute
    helps help allows allow enables enable making made makes role impact influence influenced
    """.split()
)
HEDGES = frozenset(
    """
    may might could can often usually generally typically likely probably possibly perhaps some several
    many potentially relatively somewhat approximately around about
    """.split()
)

# The same cues in Chinese, found as substrings (no spaces to find words by).
CJK_COGNITIVE_CUES = ("认为", "觉得", "可能", "大概", "也许", "应该", "建议", "值得", "总之", "说明", "思う", "でしょう", "かもしれ")
CJK_HEDGES = ("可能", "大概", "也许", "通常", "一般", "往往", "かもしれ", "でしょう")
_WORD_RE = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
# Chinese and Japanese are written without spaces: a run of Han or kana is read as its overlapping character
# pairs (故宫始建 -> 故宫 宫始 始建), the usual lexical unit of overlap measures for these scripts.
_UNSPACED_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)?")
JITTER = 0.08
SUPPORT_THRESHOLD = 0.6
MISLEADING_THRESHOLD = 0.25


def _stem(word: str) -> str:
    return word[:6]


def content_words(text: str) -> list[str]:
    lowered = text.lower()
    runs = _UNSPACED_RUN.findall(lowered)
    if runs:
        lowered = _UNSPACED_RUN.sub(" ", lowered)
    words = [_stem(w) for w in _WORD_RE.findall(lowered) if w not in STOPWORDS]
    for run in runs:
        words.extend(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else words.append(run)
    return words


def support(sentence: str, reference_stems: set[str]) -> float:
    words = content_words(sentence)
    if not words:
        return 0.0
    return sum(1 for w in words if w in reference_stems) / len(words)


def unsupported_numbers(sentence: str, reference: str) -> list[str]:
    known = set(_NUMBER_RE.findall(reference))
    return [n for n in _NUMBER_RE.findall(sentence) if n not in known]


def _jitter(seed: int, number: int) -> float:
    return random.Random(f"{seed}:{number}").uniform(-JITTER, JITTER)


def _sentence_is_bad(sentence: str, reference: str, reference_stems: set[str], jitter: float) -> bool:
    return support(sentence, reference_stems) < SUPPORT_THRESHOLD + jitter or bool(unsupported_numbers(sentence, reference))


def _reasons(sentence: str) -> bool:
    return bool(set(_WORD_RE.findall(sentence.lower())) & COGNITIVE_CUES) or any(cue in sentence for cue in CJK_COGNITIVE_CUES)


def judge_sentence_stage1(sentence: str, reference: str, reference_stems: set[str], seed: int, number: int,
                          options: list[Option]) -> str:
    words = content_words(sentence)
    found = [w for w in words if w in reference_stems]
    bad = _sentence_is_bad(sentence, reference, reference_stems, _jitter(seed, number))
    most_empty = max((option.empty for option in options if option.hallucinated is False), default=0)
    if len(words) < 2 and not found:
        empty = [o for o in options if o.hallucinated is False and most_empty and o.empty == most_empty]
        if empty:
            return empty[0].reply
        bad = False
    candidates = [o for o in options if not (most_empty and o.empty == most_empty and o.hallucinated is False)] or options
    fitting = [o for o in candidates if o.hallucinated is None or o.hallucinated == bool(bad)] or candidates
    direction = -1 if _reasons(sentence) else 1
    stems = set(words)
    best = min(range(len(fitting)), key=lambda i: (direction * fitting[i].reasoning, -len(stems & fitting[i].stems), i))
    return fitting[best].reply


def judge_sentence_stage2(sentence: str, reference: str, reference_stems: set[str], seed: int, number: int,
                          options: list[Option]) -> str:
    jitter = _jitter(seed, number)
    # Support only: numbers were weighed in the first request (a list's "3." is no claim to weigh twice).
    bad = support(sentence, reference_stems) < SUPPORT_THRESHOLD + jitter
    fitting = [o for o in options if o.hallucinated == bad] or options
    if bad:
        first = support(sentence, reference_stems) < MISLEADING_THRESHOLD + jitter
    else:
        first = bool(set(_WORD_RE.findall(sentence.lower())) & HEDGES) or any(hedge in sentence for hedge in CJK_HEDGES)
    return (fitting[0] if first else fitting[-1]).reply


def answer(prompt_text: str, seed: int) -> str:
    """The judge's reply to a prompt, one ``<sN>tags</sN>`` line per marked sentence."""
    prompt = parse_prompt(prompt_text)
    stems = set(content_words(prompt.reference))
    stage_one = prompt.stage == STAGE_1
    options = read_options(prompt.allowed, prompt.protocol, stage_one, content_words)
    if not options:  # a prompt without a format block: nothing the judge may answer
        return ""
    judge = judge_sentence_stage1 if stage_one else judge_sentence_stage2
    lines = [
        f"<s{number}>{judge(text, prompt.reference, stems, seed, number, options)}</s{number}>"
        for number, text in prompt.sentences
    ]
    return "\n".join(lines)
