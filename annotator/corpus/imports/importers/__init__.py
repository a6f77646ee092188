"""Parsing of import files into plain records (no database).

Each format module (``cognibench``, ``refchecker``, ``jsonl``) turns a file into
``TurnRecord`` objects and raises ``ImportFormatError`` naming the file, the
record and the field at fault. ``annotator.corpus.imports.services`` writes records to
the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from annotator.domain.gold_paths import gold_path_problem
from annotator.domain.protocol.document import COGNIBENCH, Protocol
from annotator.domain.storable import UNSTORABLE_ESCAPE, unstorable_path
from annotator.domain.vocabulary import GoldProvenance, TripletLabel

# Keys of Turn.metadata / ClaimTriplet.metadata the application itself uses to
# keep what a file carried and the schema has no column for (annotations made
# in another project), so that an export can give it back.
IMPORTED_SENTENCE_EXTRAS = "_imported_sentences"
IMPORTED_TRIPLET_EXTRAS = "_imported_annotations"


class ImportFormatError(ValueError):
    """A malformed input file. The message names the file, the record and the field."""

    def __init__(self, filename: str, record, field_name: str, problem: str):
        self.filename = filename
        self.record = record
        self.field = field_name
        self.problem = problem
        super().__init__(f"{filename}: record {record}: field {field_name!r}: {problem}")

    def renamed(self, names: dict[str, str]) -> "ImportFormatError":
        """The same error naming the file as its uploader knows it (stored uploads have random names)."""
        return ImportFormatError(names.get(self.filename, self.filename), self.record, self.field, self.problem)


# The largest index (turn, sentence, triplet) an integer column holds on every database.
MAX_INDEX = 2**31 - 1

# JSON carries NUL and lone surrogates only as escapes: the walk runs only when the raw text holds one.
_UNSTORABLE_ESCAPE_BYTES = re.compile(UNSTORABLE_ESCAPE.pattern.encode())


def refuse_unstorable_text(raw: bytes | str, data, filename: str, record=None) -> None:
    """Raise ImportFormatError if a string (or key) of ``data`` holds text no database can store.

    A NUL character (PostgreSQL text cannot hold one) or a lone surrogate (not UTF-8 at all) failed
    half-way through an import with a driver error naming nothing. JSON can only carry either as an
    escape, so the walk runs only when ``raw`` (the text ``data`` was parsed from) contains one.
    ``record`` names the record when ``data`` is one (a JSONL line); otherwise the first step of
    the path into ``data`` does.
    """
    pattern = _UNSTORABLE_ESCAPE_BYTES if isinstance(raw, bytes) else UNSTORABLE_ESCAPE
    if not pattern.search(raw):
        return
    found = unstorable_path(data)
    if found is None:
        return
    path, problem = found
    if record is None:
        if not path:
            record = "(file)"
        else:
            first, path = path[0], path[1:]
            # Named as the importers' other errors name records: "#3 (id x)" in a list, "id x" in a mapping.
            if isinstance(data, dict):
                record = f"id {first}"
            else:
                item = data[first]
                record = f"#{first} (id {item['id']})" if isinstance(item, dict) and "id" in item else f"#{first}"
    field_name = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")
    raise ImportFormatError(filename, record, field_name or "(value)", problem)


def refuse_too_long(record: TurnRecord, filename: str, field_names: dict[str, str]) -> None:
    """Raise ImportFormatError if a short field of ``record`` is longer than its column.

    PostgreSQL refuses such a value half-way through an import with a driver error naming nothing,
    SQLite keeps it silently: refused here, on both. ``field_names`` gives, per attribute below,
    the name of the field in the format being read.
    """
    for attribute, value in (
        ("dialogue.external_id", record.dialogue.external_id),
        ("dialogue.topic", record.dialogue.topic),
        ("dialogue.language", record.dialogue.language),
        ("dialogue.generator_model", record.dialogue.generator_model),
        ("turn.external_id", record.external_id),
    ):
        limit = _column_lengths()[attribute]
        if len(value) > limit:
            raise ImportFormatError(filename, record.position, field_names.get(attribute, attribute),
                                    f"is {len(value)} characters long; at most {limit} fit")
    refuse_long_texts(record, filename, field_names)


def refuse_long_texts(record: TurnRecord, filename: str, field_names: dict[str, str]) -> None:
    """Raise ImportFormatError if the reference, the response or a sentence is longer than the settings allow.

    A 15 MB "sentence" was accepted and then sent whole to every annotator's screen and to the
    pre-labeler. ``field_names["sentence"]`` names a sentence's field, with ``{index}`` in it.
    """
    from django.conf import settings

    reference_limit = settings.IMPORT_MAX_REFERENCE_CHARS
    if len(record.dialogue.reference) > reference_limit:
        raise ImportFormatError(
            filename, record.position, field_names.get("dialogue.reference", "dialogue.reference"),
            f"is {len(record.dialogue.reference):,} characters long; at most {reference_limit:,} are accepted "
            "(IMPORT_MAX_REFERENCE_CHARS)",
        )
    response_limit = settings.IMPORT_MAX_RESPONSE_CHARS
    if len(record.response) > response_limit:
        raise ImportFormatError(
            filename, record.position, field_names.get("turn.response", "turn.response"),
            f"is {len(record.response):,} characters long; at most {response_limit:,} are accepted "
            "(IMPORT_MAX_RESPONSE_CHARS)",
        )
    sentence_limit = settings.IMPORT_MAX_SENTENCE_CHARS
    for sentence in record.sentences:
        if len(sentence.text) > sentence_limit:
            field_name = field_names.get("sentence", "sentences[{index}].text").format(index=sentence.index)
            raise ImportFormatError(
                filename, record.position, field_name,
                f"sentence {sentence.index} is {len(sentence.text):,} characters long; at most {sentence_limit:,} "
                "are accepted (IMPORT_MAX_SENTENCE_CHARS)",
            )


@cache
def _column_lengths() -> dict[str, int]:
    from annotator.models import Dialogue, Turn

    lengths = {f"dialogue.{name}": Dialogue._meta.get_field(name).max_length
               for name in ("external_id", "topic", "language", "generator_model")}
    lengths["turn.external_id"] = Turn._meta.get_field("external_id").max_length
    return lengths


@dataclass(slots=True)
class GoldRecord:
    label: str
    path: dict
    provenance: str = GoldProvenance.IMPORTED
    reason: str = ""
    severity: int | None = None
    error_type: str = ""


@dataclass(slots=True)
class SentenceRecord:
    index: int
    start: int
    end: int
    text: str
    gold: GoldRecord | None = None
    # What the file said about this sentence that has no column of its own
    # (another project's annotations, adjudication, the original wording of a key).
    extras: dict | None = None


@dataclass(slots=True)
class TripletRecord:
    index: int
    head: str
    relation: str
    tail: str
    reference_label: str = ""
    source: str = "imported"
    sentence_index: int | None = None
    metadata: dict = field(default_factory=dict)
    gold: GoldRecord | None = None  # the triplet's gold (label, provenance, reason), as the export writes it


@dataclass(slots=True)
class DialogueRecord:
    external_id: str
    reference: str = ""
    topic: str = ""
    language: str = ""
    generator_model: str = ""
    metadata: dict = field(default_factory=dict)


@dataclass(slots=True)
class TurnRecord:
    dialogue: DialogueRecord
    index: int
    response: str
    sentences: list[SentenceRecord]
    user_message: str = ""
    external_id: str = ""
    history: list = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    triplets: list[TripletRecord] = field(default_factory=list)
    is_qualification: bool = False
    # Where the record sits in its file, for messages ("line 12", "id 13001_en_3").
    position: str = ""


@cache
def canonical_paths(protocol: Protocol) -> dict[str, dict]:
    """Each label's one path (labels reached by several paths have none: their path must be given)."""
    return {label: path for label in protocol.labels if (path := protocol.path_for_label(label)) is not None}


# CogniBench's (files without a protocol header, and the CogniBench importer); checking a path against the
# label's one path is the fast common case.
CANONICAL_PATHS = canonical_paths(COGNIBENCH)
PROVENANCES = frozenset(GoldProvenance.values)


def gold_from_label(label: str, path=None, *, where, protocol: Protocol = COGNIBENCH) -> GoldRecord:
    """A GoldRecord for ``label``; ``path`` is checked against ``protocol`` (or derived from the label)."""
    canonical = canonical_paths(protocol).get(label)
    if canonical is not None and (path is None or path == canonical):
        return GoldRecord(label=label, path=dict(canonical))
    filename, record, field_name = where
    if label not in protocol.labels:
        raise ImportFormatError(filename, record, field_name, f"unknown label {label!r}")
    if path == {} and canonical is not None:
        return GoldRecord(label=label, path=dict(canonical))
    if path is None:
        raise ImportFormatError(filename, record, field_name + ".path", "must be an object of step: answer "
                                "(this label is reached by several paths: give its path, or {} for none)")
    # The answers that were decided, each on one walk that yields the label (a text nobody decided, a step an
    # older version's answer does not carry to, are absent): annotator/domain/gold_paths.py.
    problem = gold_path_problem(protocol, label, path)
    if problem is not None:
        raise ImportFormatError(filename, record, field_name + ".path", problem)
    return GoldRecord(label=label, path=protocol.ordered(path))


def triplet_label(value, *, where) -> str:
    if value in (None, ""):
        return ""
    try:
        return TripletLabel(value).value
    except ValueError:
        filename, record, field_name = where
        allowed = ", ".join(TripletLabel.values)
        raise ImportFormatError(filename, record, field_name, f"unknown triplet label {value!r} ({allowed})") from None


@dataclass
class ImportSummary:
    """What an import did, and what it found wrong without refusing the file."""

    files: list[str] = field(default_factory=list)
    dialogues: int = 0
    turns: int = 0
    sentences: int = 0
    labels: int = 0
    triplets: int = 0
    duplicates: int = 0
    unlabelled: int = 0
    # Turns imported without a reference text (RefChecker's files often have none): said in the summary, and
    # the annotation screen says what to judge them against instead of showing an empty pane.
    without_reference: int = 0
    # Gold labels of an older protocol version that do not carry over to the file's (exported with label null
    # and ``given_under``): kept with their sentence as a note, not imported as gold.
    not_carried_over: int = 0
    inconsistencies: list[str] = field(default_factory=list)
    # Turns whose source gave no units, cut by the studio: segmenter name -> turns.
    segmented: dict[str, int] = field(default_factory=dict)
    # The project's protocol replaced by the file's (its header line): what it was and what it is now, said first.
    protocol_changed: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.dialogues or self.turns or self.sentences or self.labels or self.triplets
                    or self.protocol_changed)

    def line(self) -> str:
        text = (
            f"{self.dialogues} dialogues, {self.turns} turns, {self.sentences} sentences, "
            f"{self.labels} labels, {self.triplets} triplets imported; "
            f"{self.duplicates} duplicate turns skipped; {self.unlabelled} sentences unlabelled; "
            f"{len(self.inconsistencies)} inconsistencies"
        )
        if self.segmented:
            text += "; " + self.segmented_line()
        if self.without_reference:
            text += (f"; warning: {self.without_reference} turn{'s' if self.without_reference != 1 else ''} without a "
                     "reference (annotators judge them against the question and the dialogue)")
        if self.not_carried_over:
            text += (f"; {self.not_carried_over} gold label{'s' if self.not_carried_over != 1 else ''} given under "
                     "an older protocol version that do not carry over to the file's kept as notes, not as gold")
        if self.protocol_changed:
            text = f"{self.protocol_changed}; {text}"
        if not self.changed and self.duplicates:
            text += " - nothing changed: every turn was already imported"
        elif not self.changed:
            text += " - nothing changed"
        return text

    def segmented_line(self) -> str:
        total = sum(self.segmented.values())
        by = ", ".join(f"{turns} by {name}" for name, turns in sorted(self.segmented.items()))
        return f"{total} turns cut into units by the studio ({by})"

    def as_dict(self) -> dict:
        return {
            "files": self.files,
            "dialogues": self.dialogues,
            "turns": self.turns,
            "sentences": self.sentences,
            "labels": self.labels,
            "triplets": self.triplets,
            "duplicates": self.duplicates,
            "unlabelled": self.unlabelled,
            "without_reference": self.without_reference,
            "not_carried_over": self.not_carried_over,
            "inconsistencies": self.inconsistencies,
            "segmented": dict(self.segmented),
            "protocol_changed": self.protocol_changed,
            "line": self.line(),
        }
