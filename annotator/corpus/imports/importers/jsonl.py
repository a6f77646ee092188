"""The project's own JSONL format: one turn per line (docs/jsonl-format.md).

The exporter (``annotator.corpus.exports.exporters.jsonl``) writes exactly what this module
reads, so a project's export imported into a new project exports to the same
bytes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson

from annotator.domain.storable import SURROGATE_ESCAPE, surrogate_problem, unstorable_path
from annotator.json_input import nesting_exceeds
from annotator.domain.vocabulary import GoldProvenance, TripletSource
from annotator.domain.protocol.document import COGNIBENCH, Protocol, ProtocolDocumentError
from annotator.projects.protocol_reading import load_protocol_bounded
from annotator.corpus.imports.importers import MAX_INDEX, IMPORTED_TRIPLET_EXTRAS, PROVENANCES, GoldRecord, DialogueRecord, ImportFormatError, ImportSummary, SentenceRecord, TripletRecord, TurnRecord, canonical_paths, gold_from_label, refuse_unstorable_text, refuse_too_long, triplet_label
from annotator.corpus.imports.importers.kind_values import kind_value_problem
from annotator.corpus.imports.importers.reading import refuse_deep
from annotator.corpus.imports.importers.segmenting import record_language, refuse_bad_units, studio_units

TOP_LEVEL_KEYS = {"dialogue", "turn", "sentences", "triplets"}
# One turn per line: a line longer than this is refused (a 700-word reference and ten sentences take ~10 KB).
MAX_LINE_BYTES = 16_000_000


class _Checker:
    """Type checks that raise ImportFormatError naming file, record and field."""

    def __init__(self, filename, record, protocol: Protocol = COGNIBENCH, summary: ImportSummary | None = None):
        self.filename, self.record, self.protocol, self.summary = filename, record, protocol, summary
        self.canonical = canonical_paths(protocol)

    def fail(self, field_name, problem):
        raise ImportFormatError(self.filename, self.record, field_name, problem)

    def get(self, obj, key, types, field_name, default=None, required=False):
        if key not in obj or obj[key] is None:
            if required:
                self.fail(field_name, "is missing")
            return default
        value = obj[key]
        if not isinstance(value, types) or (types is int and isinstance(value, bool)):
            names = types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types)
            self.fail(field_name, f"must be {_article(names)}, not {type(value).__name__}")
        return value


def _article(names):
    names = {"str": "string", "int": "integer", "dict": "object", "list": "list", "bool": "boolean"}.get(names, names)
    return ("an " if names[0] in "aeiou" else "a ") + names


def record_from_object(obj, filename: str, line: int, summary: ImportSummary | None = None,
                       protocol: Protocol = COGNIBENCH, default_language: str = "") -> TurnRecord:
    """One line's object as a TurnRecord, its labels checked against ``protocol``; raises ImportFormatError.

    ``default_language`` (the project's) applies to a dialogue whose ``language`` is empty.
    """
    where = f"line {line}"
    check = _Checker(filename, where, protocol, summary)
    if not isinstance(obj, dict):
        check.fail("(line)", "must be a JSON object")
    d = check.get(obj, "dialogue", dict, "dialogue", required=True)
    t = check.get(obj, "turn", dict, "turn", required=True)
    dialogue_id = check.get(d, "id", str, "dialogue.id", required=True)
    if not dialogue_id.strip():
        check.fail("dialogue.id", "is empty")
    dialogue = DialogueRecord(
        external_id=dialogue_id,
        reference=check.get(d, "reference", str, "dialogue.reference", ""),
        topic=check.get(d, "topic", str, "dialogue.topic", ""),
        language=check.get(d, "language", str, "dialogue.language", ""),
        generator_model=check.get(d, "generator_model", str, "dialogue.generator_model", ""),
        metadata=check.get(d, "metadata", dict, "dialogue.metadata", {}),
    )
    index = check.get(t, "index", int, "turn.index", required=True)
    if not 0 <= index <= MAX_INDEX:
        check.fail("turn.index", f"is {index}; must be 0 to {MAX_INDEX}")
    response = check.get(t, "response", str, "turn.response", required=True)
    metadata = dict(check.get(t, "metadata", dict, "turn.metadata", {}))
    for key in obj:
        if key not in TOP_LEVEL_KEYS:
            metadata[key] = obj[key]  # unknown fields are kept, not dropped
    history = _history(check, check.get(t, "history", list, "turn.history", []))

    language = record_language(dialogue.language, default_language, filename, where, "dialogue.language")
    raw_sentences = check.get(obj, "sentences", list, "sentences")
    if not raw_sentences:  # none given, or an empty list: the studio cuts the response
        sentences = studio_units(response, language, summary, filename, where, "turn.response")
    else:  # (the response's length is checked with the other texts: refuse_too_long)
        sentences = [_sentence(check, raw, position, response) for position, raw in enumerate(raw_sentences)]
        refuse_bad_units(sentences, response, filename, where)  # overlaps, empty units, uncovered text

    triplets = [
        _triplet(check, raw, position, len(sentences))
        for position, raw in enumerate(check.get(obj, "triplets", list, "triplets", []))
    ]
    record = TurnRecord(
        dialogue=dialogue, index=index, response=response, sentences=sentences,
        user_message=check.get(t, "user_message", str, "turn.user_message", ""),
        external_id=check.get(t, "id", str, "turn.id", ""),
        history=history, metadata=metadata, triplets=triplets,
        is_qualification=check.get(t, "is_qualification", bool, "turn.is_qualification", False),
        position=where,
    )
    refuse_too_long(record, filename, _FIELD_NAMES if raw_sentences else _FIELD_NAMES_SPLIT)
    return record


_FIELD_NAMES = {"dialogue.external_id": "dialogue.id", "turn.external_id": "turn.id"}
# Without "sentences" the response is split here: a sentence too long is the response's.
_FIELD_NAMES_SPLIT = {**_FIELD_NAMES, "sentence": "turn.response"}
HISTORY_ROLES = ("user", "assistant")


def _history(check, history: list) -> list:
    """The messages before the turn: each ``{"role": "user" | "assistant", "text": "..."}`` (as exported)."""
    for position, message in enumerate(history):
        field_name = f"turn.history[{position}]"
        if not isinstance(message, dict):
            check.fail(field_name, f"must be an object with role and text, not {_type_name(message)}")
        role = message.get("role")
        if role not in HISTORY_ROLES:
            check.fail(f"{field_name}.role", f"must be one of {', '.join(HISTORY_ROLES)}, not {role!r}")
        check.get(message, "text", str, f"{field_name}.text", required=True)
    return history


def _type_name(value) -> str:
    return "null" if value is None else type(value).__name__


# The shape of an exported sentence with gold and nothing else (fast path).
_PLAIN_SENTENCE_KEYS = frozenset({"index", "start", "end", "text", "gold", "annotations", "adjudication"})
_PLAIN_GOLD_KEYS = frozenset({"label", "path", "provenance", "reason", "severity", "error_type", "decided_by"})


def _sentence(check, raw, position, response) -> SentenceRecord:
    """One sentence; the common shape is checked by a fast path, anything else by the full checks."""
    if (type(raw) is dict and raw.keys() <= _PLAIN_SENTENCE_KEYS and not raw.get("annotations")
            and raw.get("adjudication") is None):
        index, start, end, text = raw.get("index"), raw.get("start"), raw.get("end"), raw.get("text")
        if (type(index) is int and type(start) is int and type(end) is int and type(text) is str
                and index == position and 0 <= start <= end <= len(response) and response[start:end] == text):
            gold = raw.get("gold")
            if gold is None:
                return SentenceRecord(index, start, end, text)
            if (type(gold) is dict and gold.keys() <= _PLAIN_GOLD_KEYS and not gold.get("reason")
                    and gold.get("severity") is None and not gold.get("error_type") and not gold.get("decided_by")):
                label = gold.get("label")
                canonical = check.canonical.get(label)
                provenance = gold.get("provenance", GoldProvenance.IMPORTED)
                if canonical is not None and gold.get("path", canonical) == canonical and provenance in PROVENANCES:
                    return SentenceRecord(index, start, end, text,
                                          gold=GoldRecord(label, dict(canonical), provenance))
    return _sentence_checked(check, raw, position, response)


def _sentence_checked(check, raw, position, response) -> SentenceRecord:
    field_name = f"sentences[{position}]"
    if not isinstance(raw, dict):
        check.fail(field_name, "must be an object")
    index = check.get(raw, "index", int, f"{field_name}.index", required=True)
    if index != position:
        check.fail(f"{field_name}.index", f"is {index}; sentences must be numbered 0, 1, 2 ... in order")
    start = check.get(raw, "start", int, f"{field_name}.start", required=True)
    end = check.get(raw, "end", int, f"{field_name}.end", required=True)
    text = check.get(raw, "text", str, f"{field_name}.text", required=True)
    if not 0 <= start <= end <= len(response):
        check.fail(f"{field_name}.start", f"offsets {start}-{end} fall outside the response ({len(response)} characters)")
    if response[start:end] != text:
        check.fail(f"{field_name}.text", f"differs from the response between offsets {start} and {end}")
    gold = None
    extras = {}
    raw_gold = check.get(raw, "gold", dict, f"{field_name}.gold")
    given = _given_under(check, raw_gold, f"{field_name}.gold") if raw_gold is not None else None
    if given is not None and raw_gold.get("label") is None:
        # An older version's gold that does not carry over to the file's protocol: kept with the sentence (and
        # exported again), counted in the summary, never a label.
        extras["gold"] = raw_gold
        if check.summary is not None:
            check.summary.not_carried_over += 1
        raw_gold = None
    elif given is not None:
        extras["gold_given_under"] = given
    if raw_gold is not None:
        label = check.get(raw_gold, "label", str, f"{field_name}.gold.label", required=True)
        gold = gold_from_label(label, raw_gold.get("path"), where=(check.filename, check.record, f"{field_name}.gold"),
                               protocol=check.protocol)
        provenance = check.get(raw_gold, "provenance", str, f"{field_name}.gold.provenance", GoldProvenance.IMPORTED)
        if provenance not in PROVENANCES:
            check.fail(f"{field_name}.gold.provenance", f"unknown provenance {provenance!r}")
        gold.provenance = provenance
        gold.reason = check.get(raw_gold, "reason", str, f"{field_name}.gold.reason", "")
        severity = check.get(raw_gold, "severity", int, f"{field_name}.gold.severity")
        if severity is not None and not 1 <= severity <= 5:
            check.fail(f"{field_name}.gold.severity", "must be 1 to 5")
        gold.severity = severity
        gold.error_type = check.get(raw_gold, "error_type", str, f"{field_name}.gold.error_type", "")
    decided_by = check.get(raw_gold or {}, "decided_by", str, f"{field_name}.gold.decided_by")
    if decided_by:
        extras["decided_by"] = decided_by
    annotations = check.get(raw, "annotations", list, f"{field_name}.annotations", [])
    for position, annotation in enumerate(annotations):
        _check_kind_values(check, annotation, f"{field_name}.annotations[{position}]")
    if annotations:
        extras["annotations"] = annotations
    adjudication = check.get(raw, "adjudication", dict, f"{field_name}.adjudication")
    _check_kind_values(check, adjudication, f"{field_name}.adjudication")
    if adjudication:
        extras["adjudication"] = adjudication
    # A pre-label of the exporting project's job: kept with the sentence (and exported again), never a label.
    prediction = check.get(raw, "prediction", dict, f"{field_name}.prediction")
    if prediction:
        extras["prediction"] = prediction
    extras.update(check.get(raw, "metadata", dict, f"{field_name}.metadata", {}))
    return SentenceRecord(index, start, end, text, gold=gold, extras=extras or None)


def _check_kind_values(check, record, field_name: str) -> None:
    """An imported answer or adjudication (kept as written) holds no kind value its step refuses."""
    if isinstance(record, dict) and (problem := kind_value_problem(check.protocol, record.get("path"))):
        step, message = problem
        check.fail(f"{field_name}.path.{step}", message)


def _given_under(check, raw_gold: dict, field_name: str) -> dict | None:
    """A gold's ``given_under`` (docs/jsonl-format.md): the older protocol version it was decided under, and the
    label and path it was given as there; None without one."""
    given = check.get(raw_gold, "given_under", dict, f"{field_name}.given_under")
    if given is None:
        return None
    version = check.get(given, "version", int, f"{field_name}.given_under.version", required=True)
    if version < 1:
        check.fail(f"{field_name}.given_under.version", f"is {version}; a protocol version is 1 or more")
    check.get(given, "label", str, f"{field_name}.given_under.label", required=True)
    check.get(given, "path", dict, f"{field_name}.given_under.path")
    return given


def _triplet(check, raw, position, sentence_count) -> TripletRecord:
    field_name = f"triplets[{position}]"
    if not isinstance(raw, dict):
        check.fail(field_name, "must be an object")
    sentence_index = check.get(raw, "sentence_index", int, f"{field_name}.sentence_index")
    if sentence_index is not None and not 0 <= sentence_index < sentence_count:
        check.fail(f"{field_name}.sentence_index", f"no sentence {sentence_index} in this turn")
    metadata = dict(check.get(raw, "metadata", dict, f"{field_name}.metadata", {}))
    annotations = check.get(raw, "annotations", list, f"{field_name}.annotations", [])
    if annotations:
        metadata[IMPORTED_TRIPLET_EXTRAS] = annotations
    index = check.get(raw, "index", int, f"{field_name}.index", position)
    if not 0 <= index <= MAX_INDEX:
        check.fail(f"{field_name}.index", f"is {index}; must be 0 to {MAX_INDEX}")
    return TripletRecord(
        index=index,
        head=check.get(raw, "head", str, f"{field_name}.head", required=True),
        relation=check.get(raw, "relation", str, f"{field_name}.relation", required=True),
        tail=check.get(raw, "tail", str, f"{field_name}.tail", required=True),
        reference_label=triplet_label(
            raw.get("reference_label"), where=(check.filename, check.record, f"{field_name}.reference_label")
        ),
        source=_triplet_source(check, raw, field_name),
        sentence_index=sentence_index,
        metadata=metadata,
        gold=_triplet_gold(check, raw, field_name),
    )


def _triplet_gold(check, raw, field_name) -> GoldRecord | None:
    gold = check.get(raw, "gold", dict, f"{field_name}.gold")
    if gold is None:
        return None
    label = triplet_label(check.get(gold, "label", str, f"{field_name}.gold.label", required=True),
                          where=(check.filename, check.record, f"{field_name}.gold.label"))
    if not label:
        check.fail(f"{field_name}.gold.label", "is empty")
    provenance = check.get(gold, "provenance", str, f"{field_name}.gold.provenance", GoldProvenance.IMPORTED)
    if provenance not in PROVENANCES:
        check.fail(f"{field_name}.gold.provenance", f"unknown provenance {provenance!r}")
    return GoldRecord(label, {}, provenance, reason=check.get(gold, "reason", str, f"{field_name}.gold.reason", ""))


def _triplet_source(check, raw, field_name):
    source = check.get(raw, "source", str, f"{field_name}.source", TripletSource.IMPORTED)
    if source not in TripletSource.values:
        check.fail(f"{field_name}.source", f"unknown source {source!r}; one of {', '.join(TripletSource.values)}")
    return source


def _check_dialogue(record, line_number, first_seen, filename, summary):
    """Lines of one dialogue repeat its fields; the first line wins, a different repetition is reported."""
    d = record.dialogue
    fingerprint = hash((d.reference, d.topic, d.language, d.generator_model))
    seen = first_seen.setdefault(d.external_id, (line_number, fingerprint))
    if seen[1] != fingerprint and summary is not None:
        summary.inconsistencies.append(
            f"{filename}: line {line_number}: dialogue {d.external_id!r} differs from its line {seen[0]} "
            "(reference, topic, language or model); the first line's values are kept"
        )


def protocol_header(path: Path, name: str | None = None) -> Protocol | None:
    """The protocol of the file's header line (``{"protocol": {...}}``, first line), or None without one.
    A header whose document does not hold is refused, its problems named."""
    path = Path(path)
    with open(path, "rb") as handle:
        first = handle.readline(MAX_LINE_BYTES + 1)
    if not first.lstrip().startswith(b'{"protocol"'):
        return None
    try:
        obj = _loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ImportFormatError(name or path.name, "line 1", "protocol", f"not valid JSON: {exc}") from None
    if not isinstance(obj, dict) or set(obj) != {"protocol"}:
        return None  # a turn that happens to have a "protocol" field first: read as a turn
    try:
        return load_protocol_bounded(obj["protocol"])  # the limits of every route (PROTOCOL_MAX_CHARS, _DEPTH)
    except ProtocolDocumentError as refused:
        problems = "; ".join(f"{where}: {message}" for where, message in refused.problems)
        raise ImportFormatError(name or path.name, "line 1", "protocol", f"the protocol document does not hold: {problems}") from None


# Nesting the standard parser reads without a RecursionError (a deeper line is refused by orjson's message).
_FALLBACK_MAX_DEPTH = 100
_SURROGATE_ESCAPE_BYTES = re.compile(SURROGATE_ESCAPE.pattern.encode())


def _loads(raw: bytes):
    """orjson's reading (2.5x the standard parser). It refuses a lone surrogate without saying where (line 3:
    "no low surrogate in string"): such a line is read again by the standard parser, so that
    ``refuse_unstorable_text`` (the header: the protocol's validation) names the field."""
    try:
        return orjson.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as refused:
        if _SURROGATE_ESCAPE_BYTES.search(raw) is None:
            raise
        failed = refused
    try:
        text = raw.decode("utf-8")
        data = None if nesting_exceeds(text, _FALLBACK_MAX_DEPTH) else json.loads(text)
    except ValueError:  # not UTF-8, not JSON
        data = None
    if data is not None and unstorable_path(data, surrogate_problem) is not None:
        return data  # refused by the caller, naming the field: never a line orjson refused for another reason
    raise failed  # orjson's words


def parse(path: Path, summary: ImportSummary, progress=None, name: str | None = None, protocol: Protocol | None = None,
          default_language: str = ""):
    """Yield the records of a JSONL file; blank lines are allowed. ``name`` names the file in messages.

    Labels are checked against the file's header protocol, else ``protocol`` (the project's), else CogniBench's.
    ``default_language`` (the project's) applies to dialogues whose ``language`` is empty."""
    path = Path(path)
    filename = name or path.name
    header = protocol_header(path, filename)
    protocol = header or protocol or COGNIBENCH
    total = path.stat().st_size
    done = 0
    first_seen: dict[str, tuple[int, int]] = {}
    with open(path, "rb") as handle:
        line_number = 0
        while raw_line := handle.readline(MAX_LINE_BYTES + 1):
            line_number += 1
            done += len(raw_line)
            if len(raw_line) > MAX_LINE_BYTES and not raw_line.endswith(b"\n"):
                # Refused before it is read whole or parsed: memory stays bounded whatever the file.
                raise ImportFormatError(filename, f"line {line_number}", "(line)",
                                        f"longer than {MAX_LINE_BYTES // 1_000_000} MB; one turn per line is expected")
            if not raw_line.strip() or (line_number == 1 and header is not None):
                continue
            try:
                obj = _loads(raw_line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ImportFormatError(filename, f"line {line_number}", "(line)", f"not valid JSON: {exc}") from None
            refuse_deep(obj, filename, f"line {line_number}", raw_line)
            refuse_unstorable_text(raw_line, obj, filename, f"line {line_number}")
            record = record_from_object(obj, filename, line_number, summary, protocol, default_language)
            _check_dialogue(record, line_number, first_seen, filename, summary)
            yield record
            if progress is not None and line_number % 1000 == 0:
                progress(done, total)
    if progress is not None:
        progress(total, total)
