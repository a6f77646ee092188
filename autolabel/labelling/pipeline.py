"""The per-turn pipeline, pure: prompt build -> reply parse -> vote -> predictions.

Plain functions over plain data: no database, no network. The runners (realtime.py,
batch.py) read a turn into a ``TurnSpec``, ask ``plan_requests`` what to send, turn each
endpoint reply into sample rows with ``rows_from_result``, and vote the samples into
prediction rows with ``outcome_predictions``; progress.py writes the rows.

A protocol with non-choice steps (multiple, scale, text) stores each sample's values of them in its vote
(``sample_votes[i]["values"]``, step -> value): the Prediction has no field of its own for them (no migration),
and ``kind_votes.decide_kinds`` decides them from those votes, as the evaluation re-decides the label at every
threshold from the same votes.

Calls per turn: stage 1 costs ``samples`` requests (one with ``n``); stage 2 the same
again, only for turns in which a sample's stage-1 reading entered a step the protocol marks
for a second request (stages.py). Never one request per sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotator.domain.protocol.document import Protocol, default_protocol

from autolabel.labelling import parsing
from autolabel.labelling import prompting
from autolabel.labelling.replies import CallResult
from autolabel.labelling.stages import stage_two_numbers, stages_of
from autolabel.labelling.voting import decide


@dataclass
class TurnSpec:
    job_turn_id: int
    turn_id: int
    reference: str
    question: str
    sentences: list[tuple[int, int, str]]  # (number, sentence id, text); number = index + 1
    existing: dict = field(default_factory=dict)  # (stage, sample_index) -> {"votes": ..., "error": ...}
    language: str = ""  # the English name of the answer's language ("Chinese"), stated in the prompt

    @property
    def numbers(self):
        return [number for number, _, _ in self.sentences]


@dataclass
class TurnOutcome:
    spec: TurnSpec
    rows: list[dict] = field(default_factory=list)  # new SampleReply rows
    requests: int = 0
    retries: int = 0
    faults: int = 0
    predictions: list[dict] = field(default_factory=list)
    abstentions: int = 0
    problems: dict = field(default_factory=dict)


@dataclass
class JobConfig:
    samples: int
    threshold: int
    use_n: bool
    stage1_template: str
    stage2_template: str
    examples: list
    protocol: Protocol = field(default_factory=default_protocol)  # the protocol the job labels with


def _messages(spec: TurnSpec, config: JobConfig, stage: int, numbers, entries=None) -> list[dict]:
    texts = {number: text for number, _, text in spec.sentences}
    template = config.stage1_template if stage == prompting.STAGE_1 else config.stage2_template
    return prompting.build_messages(stage, template, spec.reference, spec.question,
                                    [(n, texts[n]) for n in numbers], config.examples, language=spec.language,
                                    protocol=config.protocol, entries=entries)


def _stage1_tags(spec: TurnSpec, sample: int | None = None) -> list[tuple[str, str]]:
    """(number, tag) of the stored stage-1 samples (only ``sample``'s when given), in sample order."""
    return [(number, tag) for (stage, index), row in sorted(spec.existing.items())
            if stage == prompting.STAGE_1 and sample in (None, index)
            for number, tag in (row.get("votes") or {}).items()]


def second_stage_numbers(spec: TurnSpec, protocol: Protocol | None = None) -> list[int]:
    """The sentences stage 2 asks about: those a stored stage-1 sample's reading sent there."""
    return stage_two_numbers(stages_of(protocol), _stage1_tags(spec))


def second_stage_entries(spec: TurnSpec, protocol: Protocol | None = None, sample: int | None = None) -> dict[int, list[str]]:
    """For each sentence stage 2 asks about, the steps its stage-1 readings entered (in sample order, once each).

    With ``sample``: that sample's own entry for the sentences its reading sent there, and every sample's for the
    others (asked because another sample sent them; this sample's answer on them is not read)."""
    stages = stages_of(protocol)

    def entered(tags):
        found: dict[int, list[str]] = {}
        for number, tag in tags:
            reading = stages.stage1_reading(tag) if tag else None
            if reading is not None and reading.entry is not None and reading.entry not in found.get(int(number), []):
                found.setdefault(int(number), []).append(reading.entry)
        return found

    every = entered(_stage1_tags(spec))
    return every if sample is None else {**every, **entered(_stage1_tags(spec, sample))}


def plan_requests(spec: TurnSpec, config: JobConfig, stage: int) -> list[tuple[list[int], list[int], list[dict]]]:
    """The requests a turn still needs for ``stage``: (sample indices, sentence numbers, messages).

    With ``n`` the missing samples go in one request when they are consecutive
    (sample i is always seed i); otherwise one request per sample. Stage 2 tells each sentence's entry step
    (prompting.entries_block): when the samples' stage-1 readings entered different steps, each sample is
    asked on its own, with its own entries, so that it continues its own path.
    """
    numbers = spec.numbers if stage == prompting.STAGE_1 else second_stage_numbers(spec, config.protocol)
    if not numbers:
        return []
    missing = [i for i in range(config.samples) if (stage, i) not in spec.existing]
    if not missing:
        return []
    if stage == prompting.STAGE_2:
        entries = {i: second_stage_entries(spec, config.protocol, sample=i) for i in missing}
        if any(found != entries[missing[0]] for found in entries.values()):
            return [([i], numbers, _messages(spec, config, stage, numbers, entries[i])) for i in missing]
        messages = _messages(spec, config, stage, numbers, entries[missing[0]])
    else:
        messages = _messages(spec, config, stage, numbers)
    if config.use_n and len(missing) > 1 and missing == list(range(missing[0], missing[-1] + 1)):
        return [(missing, numbers, messages)]
    return [([i], numbers, messages) for i in missing]


def rows_from_result(stage: int, indices: list[int], numbers: list[int], result: CallResult,
                     protocol: Protocol | None = None) -> list[dict]:
    """SampleReply rows for the samples one request covered. Tokens go on the first row."""
    rows = []
    for position, index in enumerate(indices):
        row = {"stage": stage, "sample_index": index, "raw_reply": "", "votes": {}, "problems": {}, "error": "",
               "prompt_tokens": 0, "completion_tokens": 0}
        if position == 0:
            row["prompt_tokens"], row["completion_tokens"] = result.prompt_tokens, result.completion_tokens
        if result.error:
            row["error"] = result.error
        elif position < len(result.choices):
            choice = result.choices[position]
            parsed = parsing.parse_reply(choice.text, stage, numbers, truncated=choice.truncated, protocol=protocol)
            row["raw_reply"] = choice.text or ""
            row["votes"] = {str(n): parsing.tag_to_json(tag) for n, tag in parsed.tags.items()}
            row["problems"] = parsed.problems
        else:
            row["error"] = "the endpoint returned fewer choices than asked for"
        rows.append(row)
    return rows


def outcome_predictions(spec: TurnSpec, config: JobConfig, outcome: TurnOutcome):
    """Vote over the samples of a turn (stored and new rows) into prediction rows."""
    stage_rows = {key: row for key, row in spec.existing.items()}
    for row in outcome.rows:
        stage_rows[(row["stage"], row["sample_index"])] = row
    protocol = config.protocol
    stages = stages_of(protocol)
    order = stages.tie_break_order()
    for number, sentence_id, _ in spec.sentences:
        votes = []
        for index in range(config.samples):
            s1_row = stage_rows.get((prompting.STAGE_1, index)) or {}
            s2_row = stage_rows.get((prompting.STAGE_2, index)) or {}
            s1 = parsing.tag_from_json((s1_row.get("votes") or {}).get(str(number)), prompting.STAGE_1, protocol)
            s2 = parsing.tag_from_json((s2_row.get("votes") or {}).get(str(number)), prompting.STAGE_2, protocol)
            label, hallucinated, family = parsing.sample_label(s1, s2, protocol)
            vote = {"label": label, "hallucinated": hallucinated, "kind": family or None}
            if stages.has_kind_steps:  # its non-choice steps' values (a choice-only protocol's votes unchanged)
                vote["values"] = parsing.sample_values(s1, s2, protocol)
            votes.append(vote)
        decision = decide(votes, config.threshold, label_order=order)
        outcome.abstentions += decision.abstentions
        outcome.predictions.append({
            "sentence_id": sentence_id, "label": decision.label, "hallucinated": decision.hallucinated,
            "hallucinated_votes": decision.hallucinated_votes, "abstentions": decision.abstentions,
            "stage1_kind": decision.kind, "label_votes": decision.label_votes, "sample_votes": votes,
        })
    for row in outcome.rows:
        for problem, count in (row.get("problems") or {}).items():
            outcome.problems[problem] = outcome.problems.get(problem, 0) + count
