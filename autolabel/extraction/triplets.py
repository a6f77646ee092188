"""Claim-triplet extraction (RefChecker's extractor step): the prompt, the reply parser, the baseline rule.

Pure functions, no database, no network. The prompt numbers the response's
sentences with the same formative markers as pre-labelling (``<s1>…</s1>``) so
that every triplet comes back tied to its sentence; the model answers one
triplet per line::

    s1 | The Amazon | flows through | Brazil

Lines that do not follow the format are counted as problems, never guessed at.

The offline baseline server answers extraction prompts with ``baseline_answer``,
a transparent rule with no language model: for each sentence, the head is the
words before the first relation word (a common verb or auxiliary, or a word
ending in -ed), the relation is that word with a following preposition, and
the tail is the rest of the sentence (up to the first comma after it). A
sentence with no relation word gives no triplet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

EXTRACTION_MARKER = "### TASK: extract claim triplets"

DEFAULT_EXTRACTION_TEMPLATE = """{marker}
You extract the factual claims of an answer as knowledge triplets (head, relation, tail), the way
RefChecker does. Each sentence of the answer is wrapped in numbered markers: <s1>...</s1>, <s2>...</s2>.

Rules:
- One triplet per line, in the form: s<number> | head | relation | tail
- <number> is the sentence the claim comes from. Give every claim of every sentence; a sentence with
  no factual claim (a greeting, a question, an opinion with no fact in it) gets no line.
- Keep each part short and close to the answer's own words; resolve pronouns to what they stand for.
- Do not add facts that the answer does not state. Write nothing but the triplet lines.

Question: {question}

Answer:
{answer}
"""

LINE = re.compile(r"^\s*[sS]?(\d+)\s*[|:]\s*(.+?)\s*\|\s*(.+?)\s*\|\s*(.+?)\s*$")
MAX_PART = 1000


def build_messages(sentences: list[str], question: str = "", template: str = DEFAULT_EXTRACTION_TEMPLATE) -> list[dict]:
    """The chat messages asking for the triplets of one response, given its sentences in order."""
    answer = "\n".join(f"<s{n}>{text}</s{n}>" for n, text in enumerate(sentences, start=1))
    content = template.format(marker=EXTRACTION_MARKER, question=question.strip() or "(not given)", answer=answer)
    return [{"role": "user", "content": content}]


@dataclass
class ParsedTriplet:
    sentence_number: int
    head: str
    relation: str
    tail: str


@dataclass
class ParseResult:
    triplets: list[ParsedTriplet] = field(default_factory=list)
    problems: dict[str, int] = field(default_factory=dict)

    def problem(self, kind: str):
        self.problems[kind] = self.problems.get(kind, 0) + 1


def _clean(part: str) -> str:
    part = " ".join(part.strip().strip("\"'`*").split())
    return part[:MAX_PART]


def parse_reply(text: str | None, sentence_count: int) -> ParseResult:
    """The triplets of a reply; duplicates (same sentence and parts, ignoring case) are kept once."""
    result = ParseResult()
    if not text:
        result.problem("empty reply")
        return result
    seen = set()
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*• ").strip()
        if not line:
            continue
        match = LINE.match(line)
        if not match:
            result.problem("line not in the format")
            continue
        number = int(match.group(1))
        if not 1 <= number <= sentence_count:
            result.problem("unknown sentence number")
            continue
        head, relation, tail = (_clean(match.group(i)) for i in (2, 3, 4))
        if not (head and relation and tail):
            result.problem("empty part")
            continue
        key = (number, head.lower(), relation.lower(), tail.lower())
        if key in seen:
            result.problem("duplicate triplet")
            continue
        seen.add(key)
        result.triplets.append(ParsedTriplet(number, head, relation, tail))
    return result


def is_extraction_prompt(prompt_text: str) -> bool:
    return EXTRACTION_MARKER in prompt_text


# --------------------------------------------------------------------------- the baseline rule

RELATION_WORDS = frozenset(
    """
    is are was were be been being has have had contains contain contained includes include included
    became become becomes lies lie lay flows flow flowed runs run ran won win wins lost lose loses
    consists consist covers cover covered stands stand stood means mean meant holds hold held
    makes make made gives give gave takes take took plays play leads lead led gets get got
    produces produce uses use can could will would may might should must
    """.split()
)
PREPOSITIONS = frozenset("of in on at by for to from with into through as about after before under over".split())
ANSWER_BLOCK = re.compile(r"<s(\d+)>(.*?)</s\1>", re.S)
WORD = re.compile(r"\S+")


def _bare(word: str) -> str:
    return re.sub(r"[^\w'-]", "", word).lower()


def baseline_triplet(sentence: str) -> tuple[str, str, str] | None:
    """Head / relation / tail of one sentence by the rule in the module docstring, or None."""
    words = WORD.findall(sentence.strip())
    for i, word in enumerate(words):
        bare = _bare(word)
        if i == 0 or not bare:
            continue
        if bare in RELATION_WORDS or (len(bare) > 4 and bare.endswith("ed")):
            j = i + 1
            relation = [word]
            while j < len(words) and _bare(words[j]) in PREPOSITIONS and len(relation) < 3:
                relation.append(words[j])
                j += 1
            tail_words = []
            for word_after in words[j:]:
                tail_words.append(word_after)
                if word_after.endswith((",", ";", ":")):
                    break
            head = " ".join(words[:i]).strip(" ,;:")
            tail = " ".join(tail_words).strip(" ,;:.!?")
            relation_text = " ".join(relation).strip(" ,;:")
            if head and tail:
                return head, relation_text, tail
            return None
    return None


def baseline_answer(prompt_text: str) -> str:
    """What the offline baseline server replies to an extraction prompt."""
    lines = []
    for number, sentence in ANSWER_BLOCK.findall(prompt_text):
        triplet = baseline_triplet(sentence)
        if triplet is not None:
            lines.append(f"s{number} | {triplet[0]} | {triplet[1]} | {triplet[2]}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- severity (HalluDetect)

SEVERITY_MARKER = "### TASK: rate hallucination severity"

DEFAULT_SEVERITY_TEMPLATE = """{marker}
Some sentences of an answer were judged hallucinated: not supported by the reference, or misleading, or
speculative. Rate how severe each one is, as HalluDetect does, from 1 to 5:
1 negligible (harmless detail), 2 minor, 3 moderate, 4 major (a reader would be misinformed on a point
that matters), 5 critical (a false statement that changes the answer).

Reply with one line per sentence, in the form: s<number> | <severity 1-5> | <one-sentence justification>
Write nothing else.

<reference>
{reference}
</reference>

Question: {question}

Sentences to rate:
{sentences}
"""

SEVERITY_LINE = re.compile(r"^\s*[sS]?(\d+)\s*[|:]\s*([1-5])\s*\|\s*(.*?)\s*$")


def build_severity_messages(reference: str, sentences: list[tuple[int, str]], question: str = "",
                            template: str = DEFAULT_SEVERITY_TEMPLATE) -> list[dict]:
    """The prompt asking for the severity of the given (number, text) sentences of one answer."""
    block = "\n".join(f"<s{n}>{text}</s{n}>" for n, text in sentences)
    content = template.format(marker=SEVERITY_MARKER, reference=reference.strip() or "(none)",
                              question=question.strip() or "(not given)", sentences=block)
    return [{"role": "user", "content": content}]


def parse_severity_reply(text: str | None, numbers) -> tuple[dict[int, tuple[int, str]], dict[str, int]]:
    """{sentence number: (severity, justification)} and the problems of a reply; the first line per sentence wins."""
    wanted, rated, problems = set(numbers), {}, {}

    def problem(kind):
        problems[kind] = problems.get(kind, 0) + 1

    if not text:
        problem("empty reply")
        return rated, problems
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*• ").strip()
        if not line:
            continue
        match = SEVERITY_LINE.match(line)
        if not match:
            problem("line not in the format")
            continue
        number = int(match.group(1))
        if number not in wanted:
            problem("unknown sentence number")
            continue
        if number in rated:
            problem("sentence rated twice")
            continue
        rated[number] = (int(match.group(2)), _clean(match.group(3)))
    missing = len(wanted - set(rated))
    if missing:
        problems["sentence not rated"] = problems.get("sentence not rated", 0) + missing
    return rated, problems


def is_severity_prompt(prompt_text: str) -> bool:
    return SEVERITY_MARKER in prompt_text


def baseline_severity(sentence: str, reference: str) -> tuple[int, str]:
    """The baseline's rating: the less of the sentence the reference supports, the more severe.

    An unsupported number is critical (5); otherwise support (the share of the
    sentence's content words found in the reference, as in autolabel/baseline/judge.py)
    below 0.2 is 4, below 0.4 is 3, below 0.6 is 2, and 1 above.
    """
    from autolabel.baseline import judge

    numbers = judge.unsupported_numbers(sentence, reference)
    score = judge.support(sentence, set(judge.content_words(reference)))
    if numbers:
        return 5, f"numbers not in the reference: {', '.join(numbers)}"
    severity = 4 if score < 0.2 else 3 if score < 0.4 else 2 if score < 0.6 else 1
    return severity, f"{score:.0%} of its content words are in the reference"


REFERENCE_BLOCK = re.compile(r"<reference>\n?(.*?)\n?</reference>", re.S)


def baseline_severity_answer(prompt_text: str) -> str:
    match = REFERENCE_BLOCK.search(prompt_text)
    reference = match.group(1) if match else ""
    rate_part = prompt_text.split("Sentences to rate:", 1)[-1]
    lines = []
    for number, sentence in ANSWER_BLOCK.findall(rate_part):
        severity, why = baseline_severity(sentence, reference)
        lines.append(f"s{number} | {severity} | {why}")
    return "\n".join(lines)
