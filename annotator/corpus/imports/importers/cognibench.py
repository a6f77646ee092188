"""The public CogniBench release: ``dialogues.json`` and, optionally, ``labels.json``.

``dialogues.json`` is a list of records, one per judged turn::

    {"Unnamed: 0": 331, "id": "34494_en_0", "dialogue": "<user> ... <assistant> ...",
     "current_turn": "<user> ... \\n\\n<assistant> ...", "turn_index": 0, "reference": "...",
     "language": "english", "type": "fact", "topic": "...",
     "current_turn_processed": "First sentence.<irrelevant>\\nSecond.<>\\n", "num_spaces": 9,
     "num_irrelevant": 1}

``labels.json`` maps a record id to list fields (``factual_list``, ``hallu_list``,
``realiable_list`` [sic], ...) and ``sentence_label_dict``: lower-cased,
whitespace-normalised sentence -> ``[[criteria or label], sentence index]``.

The sentences are CogniBench's own: those of ``sentence_label_dict`` when the
record is labelled, else ``current_turn_processed`` cut at its markers. Each is
located in the assistant response (case and whitespace aside) so that it keeps
exact character offsets.
"""

from __future__ import annotations

import re
from pathlib import Path

from annotator.domain.vocabulary import Label
from annotator.corpus.imports.importers import MAX_INDEX, DialogueRecord, ImportFormatError, ImportSummary, SentenceRecord, TurnRecord, gold_from_label, refuse_unstorable_text, refuse_too_long
from annotator.corpus.imports.importers.reading import records_of, refuse_deep, refuse_not_a_number
from annotator.corpus.imports.importers.segmenting import record_language, refuse_bad_units, refuse_long_response, studio_units

# sentence_label_dict values -> our labels. An empty list is "misleading" when
# the sentence is in misleading_list, otherwise the sentence is unlabelled.
LABEL_MAP = {
    ("faithful",): Label.FAITHFUL,
    ("invented",): Label.INVENTED,
    ("irrelevant",): Label.IRRELEVANT,
    ("rational",): Label.SPECULATIVE,
    ("rational", "grounded"): Label.RELIABLE,
    ("rational", "grounded", "unequivocal"): Label.UNEQUIVOCAL,
}
CRITERIA_OF = {label: list(criteria) for criteria, label in LABEL_MAP.items()}
CRITERIA_OF[Label.MISLEADING] = []


def labels_are_cognibench(protocol) -> bool:
    """Whether CogniBench's files (its labels.json criteria) can spell this protocol's labels: else only a Project
    JSONL, which carries its protocol, holds the project's gold."""
    return set(protocol.labels) == set(CRITERIA_OF)

LIST_FIELDS = (
    "hallu_list", "irrelevant_list", "faithfulness_list", "factual_hallu_list", "cognitive_hallu_list",
    "misleading_list", "speculative_list", "realiable_list", "unequivocal_list", "factual_list", "cognitive_list",
)
# The list fields a sentence with each label belongs to (as in the release).
LISTS_OF = {
    Label.FAITHFUL: {"faithfulness_list", "factual_list"},
    Label.INVENTED: {"hallu_list", "factual_hallu_list", "factual_list"},
    Label.IRRELEVANT: {"irrelevant_list"},
    Label.MISLEADING: {"hallu_list", "cognitive_hallu_list", "misleading_list", "cognitive_list"},
    Label.SPECULATIVE: {"hallu_list", "cognitive_hallu_list", "speculative_list", "cognitive_list"},
    Label.RELIABLE: {"faithfulness_list", "realiable_list", "cognitive_list"},
    Label.UNEQUIVOCAL: {"faithfulness_list", "unequivocal_list", "cognitive_list"},
}
DIALOGUE_FIELDS = {"reference", "topic", "language", "dialogue"}
TURN_FIELDS = {"id", "turn_index", "current_turn"}
MARKERS = re.compile(r"<>|<irrelevant>")
ROLE_MARK = re.compile(r"<(user|assistant)>")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """How sentence_label_dict spells a sentence: lower case, whitespace runs as one space."""
    return _SPACE.sub(" ", text).strip().lower()


def _squeeze(text: str) -> str:
    return _SPACE.sub("", text).lower()


def split_id(record_id: str, turn_index: int) -> str:
    """'13001_en_3' -> dialogue '13001_en' (the suffix is the turn index)."""
    head, sep, tail = record_id.rpartition("_")
    if sep and tail == str(turn_index):
        return head
    return record_id


def parse_roles(text: str) -> list[dict]:
    """'<user> a <assistant> b ...' -> [{"role": "user", "text": "a"}, {"role": "assistant", "text": "b"}, ...]."""
    parts = ROLE_MARK.split(text)
    messages = []
    for position in range(1, len(parts) - 1, 2):
        messages.append({"role": parts[position], "text": parts[position + 1].strip()})
    return messages


class _Locator:
    """Finds sentences in a response ignoring case and whitespace, left to right."""

    def __init__(self, response: str):
        squeezed, positions = [], []
        for offset, char in enumerate(response):
            if char.isspace():
                continue
            for lowered in char.lower():
                squeezed.append(lowered)
                positions.append(offset)
        self.squeezed = "".join(squeezed)
        self.positions = positions
        self.cursor = 0

    def find(self, sentence: str) -> tuple[int, int] | None:
        needle = _squeeze(sentence)
        if not needle:
            return None
        at = self.squeezed.find(needle, self.cursor)
        if at < 0:
            return None
        self.cursor = at + len(needle)
        return self.positions[at], self.positions[at + len(needle) - 1] + 1


def _checked(value, raw, filename, record):
    """A record as the database can store it: nesting, NUL characters, NaN/Infinity refused by name."""
    refuse_deep(value, filename, record, raw)
    refuse_unstorable_text(raw, value, filename, record)
    refuse_not_a_number(value, filename, record, raw)
    return value


def _labels_load(labels_path: Path, filename: str) -> dict:
    """labels.json as a dict (looked up by record id); read one record at a time, never as one text."""
    labels = {}
    for record_id, value, raw in records_of(labels_path, dict, filename=filename):
        labels[record_id] = _checked(value, raw, filename, f"id {record_id}")
    return labels


def parse(dialogues_path, labels_path=None, summary: ImportSummary | None = None, progress=None, names=None,
          default_language: str = "", protocol=None):
    """Yield a TurnRecord per dialogues.json record (labels applied from labels.json).

    A record whose ``language`` is empty is in ``default_language`` (the project's).

    dialogues.json is read one record at a time (``reading.records_of``): memory stays flat
    whatever its size. labels.json is held whole: records are looked up in it by id. ``names``
    are the files' original names, for messages (an upload is stored under another name).
    ``protocol`` (the project's): labels.json's labels are CogniBench's, refused where it has others.
    """
    dialogues_path = Path(dialogues_path)
    names = list(names) if names else [dialogues_path.name] + ([Path(labels_path).name] if labels_path else [])
    dialogues_name = names[0]
    labels_name = names[1] if labels_path is not None and len(names) > 1 else ""
    summary = summary if summary is not None else ImportSummary()
    labels = _labels_load(Path(labels_path), labels_name) if labels_path is not None else {}
    _refuse_labels_of_another_protocol(labels, labels_name, protocol)
    seen_ids = set()
    for position, record, raw in records_of(dialogues_path, list, progress=progress, filename=dialogues_name):
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            where = f"#{position} (id {record['id']})"
        else:
            where = f"#{position}"
        _checked(record, raw, dialogues_name, where)
        turn = turn_record(record, position, dialogues_name, None, labels_name, summary, labels, default_language)
        seen_ids.add(turn.external_id)
        yield turn
    for record_id in labels:
        if record_id not in seen_ids:
            summary.inconsistencies.append(f"{labels_name}: {record_id}: no such record in {dialogues_name}")


def _refuse_labels_of_another_protocol(labels: dict, labels_name: str, protocol) -> None:
    """CogniBench's labels stored as the gold of a project whose protocol has other labels would be gold no step
    of its walk yields: refused before anything is read, naming the first labelled record."""
    if protocol is None or labels_are_cognibench(protocol):
        return
    labelled = next((record_id for record_id, record in labels.items()
                     if isinstance(record, dict) and record.get("sentence_label_dict")), None)
    if labelled is None:
        return
    raise ImportFormatError(
        labels_name, labelled, "sentence_label_dict",
        f"holds CogniBench's labels ({', '.join(sorted(CRITERIA_OF))}), but this project follows "
        f"{protocol.name}, whose labels are {', '.join(protocol.labels)}: import dialogues.json alone, "
        "or the gold as a Project JSONL file in this protocol's labels")


def _require(record, key, types, filename, where):
    if key not in record:
        raise ImportFormatError(filename, where, key, "is missing")
    value = record[key]
    if not isinstance(value, types) or isinstance(value, bool):
        raise ImportFormatError(filename, where, key, f"has the wrong type ({type(value).__name__})")
    return value


def turn_record(record, position, filename, label_record, labels_filename, summary, labels=None,
                default_language: str = "") -> TurnRecord:
    """One dialogues.json record; its labels are ``label_record``, or looked up by id in ``labels``.

    The units are CogniBench's own; a record that gives none (no sentence in ``current_turn_processed``
    or ``sentence_label_dict``) is cut by the segmenter of its language. CogniBench's units may leave
    text of the response out (its processed text drops characters): gaps are allowed in this format.
    """
    if not isinstance(record, dict):
        raise ImportFormatError(filename, f"#{position}", "(record)", "must be a JSON object")
    record_id = _require(record, "id", str, filename, f"#{position}")
    where = f"#{position} (id {record_id})"
    if not record_id.strip():
        raise ImportFormatError(filename, where, "id", "is empty")
    if label_record is None and labels:
        label_record = labels.get(record_id)
    turn_index = _require(record, "turn_index", int, filename, where)
    if not 0 <= turn_index <= MAX_INDEX:
        raise ImportFormatError(filename, where, "turn_index", f"is {turn_index}; must be 0 to {MAX_INDEX}")
    current_turn = _require(record, "current_turn", str, filename, where)
    processed = _require(record, "current_turn_processed", str, filename, where)
    reference = _require(record, "reference", str, filename, where)
    for optional in ("topic", "language", "dialogue", "type"):
        if optional in record and not isinstance(record[optional], str):
            raise ImportFormatError(filename, where, optional, f"has the wrong type ({type(record[optional]).__name__})")

    messages = parse_roles(current_turn)
    assistant = [m for m in messages if m["role"] == "assistant"]
    if not assistant:
        raise ImportFormatError(filename, where, "current_turn", "has no <assistant> part")
    response = assistant[-1]["text"]
    user_message = next((m["text"] for m in messages if m["role"] == "user"), "")
    history = _history(record.get("dialogue", ""), current_turn, turn_index)

    dialogue = DialogueRecord(
        external_id=split_id(record_id, turn_index),
        reference=reference,
        topic=record.get("topic", ""),
        language=record.get("language", ""),
        metadata={"dialogue": record["dialogue"]} if "dialogue" in record else {},
    )
    # Everything else is kept as it came, so the export can give it back.
    metadata = {key: value for key, value in record.items() if key not in DIALOGUE_FIELDS | TURN_FIELDS}
    metadata["id"] = record_id
    metadata["current_turn"] = current_turn

    language = record_language(dialogue.language, default_language, filename, where, "language")
    refuse_long_response(response, filename, where, "current_turn")
    if label_record is None:
        sentences = _processed_sentences(response, processed, filename, where)
    else:
        sentences = _labelled_sentences(response, label_record, labels_filename, record_id, summary)
        metadata["labels"] = {key: value for key, value in label_record.items() if key not in
                              set(LIST_FIELDS) | {"sentence_label_dict"}}
        if not metadata["labels"]:
            del metadata["labels"]
    given = bool(sentences)
    if given:
        refuse_bad_units(sentences, response, filename, where, gaps_allowed=True,
                         field_name="current_turn_processed" if label_record is None else "sentence_label_dict[{index}]")
    else:
        sentences = studio_units(response, language, summary, filename, where, "current_turn")
    turn = TurnRecord(
        dialogue=dialogue, index=turn_index, response=response, sentences=sentences, user_message=user_message,
        external_id=record_id, history=history, metadata=metadata, position=where,
    )
    sentence_field = ("current_turn" if not given else
                      "current_turn_processed" if label_record is None else "sentence_label_dict[{index}]")
    refuse_too_long(turn, filename, {"dialogue.external_id": "id", "turn.external_id": "id",
                                     "dialogue.topic": "topic", "dialogue.language": "language",
                                     "dialogue.reference": "reference", "turn.response": "current_turn",
                                     "sentence": sentence_field})
    return turn


def _history(dialogue_text: str, current_turn: str, turn_index: int) -> list[dict]:
    """The messages before the current turn in the whole-dialogue text."""
    if not dialogue_text:
        return []
    at = dialogue_text.find(current_turn.strip())
    if at >= 0:
        return parse_roles(dialogue_text[:at])
    messages = parse_roles(dialogue_text)
    return messages[: 2 * turn_index]


def _processed_sentences(response, processed, filename, where) -> list[SentenceRecord]:
    locator = _Locator(response)
    sentences = []
    parts = [part.strip() for part in MARKERS.split(processed)]
    for part in (p for p in parts if p):
        span = locator.find(part)
        if span is None:
            raise ImportFormatError(
                filename, where, "current_turn_processed",
                f"sentence {len(sentences)} ({part[:60]!r}) is not in the assistant response",
            )
        start, end = span
        sentences.append(SentenceRecord(len(sentences), start, end, response[start:end]))
    return sentences


def _labelled_sentences(response, label_record, filename, record_id, summary) -> list[SentenceRecord]:
    where = f"id {record_id}"
    if not isinstance(label_record, dict):
        raise ImportFormatError(filename, where, "(record)", "must be a JSON object")
    sld = label_record.get("sentence_label_dict")
    if not isinstance(sld, dict):
        raise ImportFormatError(filename, where, "sentence_label_dict", "is missing or not an object")
    lists = {}
    for name in LIST_FIELDS:
        value = label_record.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ImportFormatError(filename, where, name, "must be a list of strings")
        lists[name] = {_squeeze(item) for item in value}

    entries = []
    for key, value in sld.items():
        if (not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], list)
                or not isinstance(value[1], int) or isinstance(value[1], bool)):
            raise ImportFormatError(filename, where, f"sentence_label_dict[{key[:40]!r}]",
                                    "must be [[labels], sentence index]")
        entries.append((value[1], key, value[0]))
    entries.sort(key=lambda entry: entry[0])
    if [entry[0] for entry in entries] != list(range(len(entries))):
        raise ImportFormatError(filename, where, "sentence_label_dict", "sentence indexes are not 0, 1, 2 ...")

    locator = _Locator(response)
    sentences = []
    seen_in_lists = set()
    for index, key, raw_labels in entries:
        field_name = f"sentence_label_dict[{index}]"
        span = locator.find(key)
        if span is None:
            raise ImportFormatError(filename, where, field_name, f"{key[:60]!r} is not in the assistant response")
        start, end = span
        squeezed = _squeeze(key)
        memberships = {name for name, items in lists.items() if squeezed in items}
        seen_in_lists.add(squeezed)
        label = _label_of(raw_labels, memberships, filename, where, field_name)
        gold = gold_from_label(label, where=(filename, where, field_name)) if label else None
        extras = {"cognibench_key": key} if key != normalise(response[start:end]) else None
        sentences.append(SentenceRecord(index, start, end, response[start:end], gold=gold, extras=extras))
        if label is None:
            if memberships:
                summary.inconsistencies.append(
                    f"{filename}: {record_id}: sentence {index} has no label but is in {', '.join(sorted(memberships))}"
                )
            continue
        expected = LISTS_OF[label]
        missing, extra = expected - memberships, memberships - expected
        if missing or extra:
            problems = []
            if missing:
                problems.append("missing from " + ", ".join(sorted(missing)))
            if extra:
                problems.append("also in " + ", ".join(sorted(extra)))
            summary.inconsistencies.append(
                f"{filename}: {record_id}: sentence {index} labelled {label}: {'; '.join(problems)}"
            )
    for name in LIST_FIELDS:
        for item in label_record.get(name, []):
            if _squeeze(item) not in seen_in_lists:
                summary.inconsistencies.append(
                    f"{filename}: {record_id}: {name} has a sentence not in sentence_label_dict: {item[:60]!r}"
                )
    return sentences


def _label_of(raw_labels, memberships, filename, where, field_name) -> str | None:
    if not all(isinstance(item, str) for item in raw_labels):
        raise ImportFormatError(filename, where, field_name, "labels must be strings")
    if not raw_labels:
        return Label.MISLEADING.value if "misleading_list" in memberships else None
    key = tuple(item.strip().lower() for item in raw_labels)
    if key not in LABEL_MAP:
        raise ImportFormatError(filename, where, field_name, f"unknown label combination {raw_labels!r}")
    return LABEL_MAP[key].value
