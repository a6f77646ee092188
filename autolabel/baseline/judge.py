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
- claim words: its content words minus the words of courtesy (hello, thanks, happy, glad, hope, sure,
  welcome, question, feel free, ...), which a greeting has however long it is;
- support: the share of the sentence's content words found in the reference;
- unsupported numbers: numbers in the sentence that do not occur in the reference;
- empty: fewer than 2 claim words, none of them in the reference;
- reasoning: the sentence holds a cue of inference or judgement (because, therefore, important, likely,
  should, ...); hedged: it holds a hedge (may, might, could, often, ...);
- bad: support below 0.6 (plus the sample's jitter), or an unsupported number.

First request: an empty sentence takes the reply whose wording speaks of sentences with nothing to check
(when the protocol has one; otherwise nothing it says can be unsupported, so it is not bad). Any other
sentence takes a reply that is a hallucination when bad and is not one otherwise (a reply whose second
request decides fits both); among those, a reasoning sentence the ones whose wording speaks most of
reasoning (inference, opinion, conclusion, ...), preferring those that go on to a second request; another
sentence the ones that speak of it least. What is still tied is broken by the evidence (below).
Second request: the prompt says at which step each sentence comes in (prompting.entries_block); the judge
walks the protocol block from there and chooses only among the labels that walk can end on. Bad is support
below 0.6 (plus jitter) only; among those labels, the ones that are hallucinations when bad (the others
otherwise; all of them when none fits), and among those by_amount decides: the first request has already
sorted the sentences by their support and hedges, so the sentences that reach one step share them, and the
same look at the same evidence would send them all to the same label; the amount of text the reference backs
or lacks tells them apart as well.

The first request's tie-break by the evidence (by_evidence): a bad sentence's tied replies are ordered from the
one whose wording speaks most of adding what the reference does not contain (baseless, unsupported,
invented, ...) to the one that speaks most of contradicting it (conflict, contradicts, differs, ...), document
order within equals; the sentence's support picks one, the least supported sentences the first: with two,
below 0.25 (plus jitter) the first, otherwise the second; with more, the range from 0.25 to 0.6 is cut into
equal parts. A sentence that is not bad takes the first when hedged, otherwise one of the others by its support
above 0.6 (the last with two). The second request's (by_amount), a bad sentence's labels ordered the same
way: a hedged one takes the last (the milder end: CogniBench's speculative, a subtle error); one with 12 or more
content words the reference lacks the first (a plain error); another by its support as above, and where that
is the first, the amount of unsupported text spreads it over all but the last (with two: the first, as
CogniBench's misleading below 0.25). A sentence that is not bad and hedged takes the first, one further for
every share of 12 words the reference backs (with two: the last from 12 such words); one not hedged with fewer
than 5 such words the first; another by its support above 0.6 (with two: the last: CogniBench's reliable and
unequivocal as before, but for long hedged or short plain sentences). Every reply of a document is so within reach of some sentence.

A reply that walks through steps of another kind than choice (multiple, scale, text) gets their values from
kinds.py, by the same evidence.

Samples vary slightly: each sample moves the thresholds by a jitter in
[-0.08, 0.08] drawn from a generator seeded with the sample's seed and the
sentence number, so the same request with the same seed gets the same answer,
and five samples disagree on borderline sentences only.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace

from autolabel.baseline import kinds
from autolabel.baseline.options import Option, reachable_labels, read_options
from autolabel.labelling.kind_replies import split_tag
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
# Words of courtesy: a greeting or an offer of help is no claim however many of them it has.
COURTESY = frozenset(
    """
    hello thank thanks happy glad hope welcom sure certai pleasu feel free ask questi anythi furthe assist
    deligh apolog sorry regard cheers know
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
AMOUNT_STEP = 8  # the second request's tie-break moves one place every 8 content words (by_amount)
FEW_WORDS = 5  # a sentence that is not bad with fewer words the reference backs takes the first (by_amount)
PLAIN_ERROR_WORDS = 12  # a bad sentence with this many words the reference lacks is a plain error (by_amount)


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


@dataclass(frozen=True)
class Evidence:
    """What the judge knows of one sentence for one sample (thresholds moved by the sample's jitter)."""

    support: float
    bad: bool
    threshold: float  # SUPPORT_THRESHOLD + jitter
    floor: float  # MISLEADING_THRESHOLD + jitter
    hedged: bool
    unsupported_words: int  # content words not in the reference
    supported_words: int  # content words in it


def _hedged(sentence: str) -> bool:
    return bool(set(_WORD_RE.findall(sentence.lower())) & HEDGES) or any(hedge in sentence for hedge in CJK_HEDGES)


def _reasons(sentence: str) -> bool:
    return bool(set(_WORD_RE.findall(sentence.lower())) & COGNITIVE_CUES) or any(cue in sentence for cue in CJK_COGNITIVE_CUES)


def evidence_of(sentence: str, reference: str, reference_stems: set[str], jitter: float, numbers_count: bool) -> Evidence:
    share = support(sentence, reference_stems)
    threshold = SUPPORT_THRESHOLD + jitter
    bad = share < threshold or (numbers_count and bool(unsupported_numbers(sentence, reference)))
    words = content_words(sentence)
    supported = sum(1 for word in words if word in reference_stems)
    return Evidence(share, bad, threshold, MISLEADING_THRESHOLD + jitter, _hedged(sentence), len(words) - supported,
                    supported)


def _position(count: int, evidence: Evidence) -> int:
    """Which of ``count`` tied replies (ordered as the module says) the evidence points to."""
    if count == 1:
        return 0
    if evidence.bad:
        edges = [evidence.floor + (evidence.threshold - evidence.floor) * k / (count - 1) for k in range(count - 1)]
        return sum(1 for edge in edges if evidence.support >= edge)
    if evidence.hedged:
        return 0
    above = (evidence.support - evidence.threshold) / max(1.0 - evidence.threshold, 1e-9)
    return 1 + int(min(max(above, 0.0), 0.999999) * (count - 1))


def by_evidence(tied: list[Option], evidence: Evidence) -> Option:
    """The first request's tie-break: by the sentence's support (and hedge)."""
    ordered = sorted(tied, key=lambda option: option.lean) if evidence.bad else tied  # sorted() keeps document order
    return ordered[_position(len(ordered), evidence)]


def by_amount(tied: list[Option], evidence: Evidence) -> Option:
    """The second request's tie-break (the module says why it differs from the first's)."""
    if len(tied) == 1:
        return tied[0]
    last = len(tied) - 1
    if evidence.bad:
        ordered = sorted(tied, key=lambda option: option.lean)
        if evidence.hedged:
            return ordered[last]
        if evidence.unsupported_words >= PLAIN_ERROR_WORDS:
            return ordered[0]
        position = _position(len(ordered), evidence)
        if position == 0:  # the least supported: spread over all but the last by the amount of unsupported text
            position = last - 1 - min(last - 1, evidence.unsupported_words // AMOUNT_STEP)
        return ordered[position]
    if evidence.hedged:  # the first, and one further for every share of 12 words the reference backs
        return tied[min(last, evidence.supported_words // max(1, PLAIN_ERROR_WORDS // last))]
    if evidence.supported_words < FEW_WORDS:
        return tied[0]
    return tied[_position(len(tied), evidence)]


def judge_sentence_stage1(sentence: str, reference: str, reference_stems: set[str], seed: int, number: int,
                          options: list[Option]) -> str:
    evidence = evidence_of(sentence, reference, reference_stems, _jitter(seed, number), numbers_count=True)
    claim = [word for word in content_words(sentence) if word not in COURTESY]
    most_empty = max((option.empty for option in options if option.hallucinated is False), default=0)
    if len(claim) < 2 and not any(word in reference_stems for word in claim):
        empty = [o for o in options if o.hallucinated is False and most_empty and o.empty == most_empty]
        if empty:
            return empty[0].reply
        evidence = replace(evidence, bad=False)
    candidates = [o for o in options if not (most_empty and o.empty == most_empty and o.hallucinated is False)] or options
    fitting = [o for o in candidates if o.hallucinated is None or o.hallucinated == evidence.bad] or candidates
    if _reasons(sentence):
        def key(option):
            return (-option.reasoning, -int(option.goes_on))
    else:
        def key(option):
            return (option.reasoning,)
    best = min(key(option) for option in fitting)
    return by_evidence([option for option in fitting if key(option) == best], evidence).reply


def judge_sentence_stage2(sentence: str, reference: str, reference_stems: set[str], seed: int, number: int,
                          options: list[Option], reachable: set[str] | frozenset = frozenset()) -> str:
    # Support only: numbers were weighed in the first request (a list's "3." is no claim to weigh twice).
    evidence = evidence_of(sentence, reference, reference_stems, _jitter(seed, number), numbers_count=False)
    options = [o for o in options if split_tag(o.reply)[0].strip() in reachable] or options
    fitting = [o for o in options if o.hallucinated == evidence.bad] or options
    return by_amount(fitting, evidence).reply


def _filled(tag: str, text: str, reference: str, stems: set[str], seed: int, number: int, steps) -> str:
    """The chosen reply with the values of its non-choice steps (kinds.py), from the same evidence."""
    share = support(text, stems) - _jitter(seed, number)
    sentence = kinds.sentence_of(text, stems, share, bool(unsupported_numbers(text, reference)), _hedged(text),
                                 content_words)
    return kinds.fill(tag, steps, sentence, content_words)


def answer(prompt_text: str, seed: int) -> str:
    """The judge's reply to a prompt, one ``<sN>tags</sN>`` line per marked sentence."""
    prompt = parse_prompt(prompt_text)
    stems = set(content_words(prompt.reference))
    stage_one = prompt.stage == STAGE_1
    options = read_options(prompt.allowed, prompt.protocol, stage_one, content_words)
    if not options:  # a prompt without a format block: nothing the judge may answer
        return ""
    steps = kinds.read_kind_steps(prompt.protocol)
    lines = []
    for number, text in prompt.sentences:
        if stage_one:
            tag = judge_sentence_stage1(text, prompt.reference, stems, seed, number, options)
            if steps:
                tag = _filled(tag, text, prompt.reference, stems, seed, number, steps)
        else:
            reachable = reachable_labels(prompt.protocol, prompt.entries.get(number, []))
            tag = judge_sentence_stage2(text, prompt.reference, stems, seed, number, options, reachable)
            if steps:  # the values of the non-choice steps on the way to its label
                tag = _filled(tag, text, prompt.reference, stems, seed, number, steps)
        lines.append(f"<s{number}>{tag}</s{number}>")
    return "\n".join(lines)
