"""RefChecker's human-annotation files (e.g. ``dolly_gpt4_answers.json``).

Each file is a list of ``{"id", "response", "<extractor>_response_kg": [{"triplet": [h, r, t],
"human_label": "Entailment" | "Neutral" | "Contradiction"}, ...]}``. A response becomes a turn
(one dialogue per record, cut into units by the studio: ``segmenting.studio_units``, in the language of an
optional ``language`` field, else the project's default language); each triplet is stored
with its human label as ``reference_label``. The dialogue id is ``<file stem>/<id>`` because ids
repeat across RefChecker's files; a file named ``<dataset>_<model>_answers.json`` also gives the
topic (dataset) and the generator model. Optional ``question`` / ``reference`` / ``context``
fields fill the user message and the reference; any other field is kept in the turn's metadata.
"""

from __future__ import annotations

import re
from pathlib import Path

from annotator.domain.vocabulary import TripletSource
from annotator.corpus.imports.importers import DialogueRecord, ImportFormatError, ImportSummary, TripletRecord, TurnRecord, refuse_unstorable_text, refuse_too_long, triplet_label
from annotator.corpus.imports.importers.reading import records_of, refuse_deep, refuse_not_a_number
from annotator.corpus.imports.importers.segmenting import record_language, studio_units

KG_FIELD = re.compile(r"^(?P<extractor>.+)_response_kg$")
FILE_NAME = re.compile(r"^(?P<dataset>[a-z0-9]+)_(?P<model>.+)_answers$", re.IGNORECASE)
KNOWN = {"id", "response", "question", "reference", "context", "language"}


def parse(paths, summary: ImportSummary | None = None, progress=None, names=None, default_language: str = ""):
    """Yield a TurnRecord per record of each file, read one record at a time.

    ``names`` are the files' original names (an upload is stored under another name): ids,
    the dataset and the model come from them.
    """
    summary = summary if summary is not None else ImportSummary()
    paths = [Path(p) for p in paths]
    names = list(names) if names else [p.name for p in paths]
    total = sum(p.stat().st_size for p in paths)
    offset = 0
    for path, name in zip(paths, names):
        named = Path(name)
        match = FILE_NAME.match(named.stem)
        for position, record, raw in records_of(path, list, progress=progress, offset=offset, total=total,
                                                filename=named.name):
            record_id = record.get("id") if isinstance(record, dict) else None
            where = f"#{position} (id {record_id})" if isinstance(record_id, (str, int)) else f"#{position}"
            refuse_deep(record, named.name, where, raw)
            refuse_unstorable_text(raw, record, named.name, where)
            refuse_not_a_number(record, named.name, where, raw)
            yield turn_record(record, position, named, match, summary, default_language)
        offset += path.stat().st_size


def _text(record, key, filename, where, required=False):
    if key not in record or record[key] is None:
        if required:
            raise ImportFormatError(filename, where, key, "is missing")
        return ""
    value = record[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key == "id":
        return str(value)
    if not isinstance(value, str):
        raise ImportFormatError(filename, where, key, f"must be a string, not {type(value).__name__}")
    return value


def turn_record(record, position, path: Path, name_match, summary, default_language: str = "") -> TurnRecord:
    filename = path.name
    if not isinstance(record, dict):
        raise ImportFormatError(filename, f"#{position}", "(record)", "must be a JSON object")
    record_id = _text(record, "id", filename, f"#{position}", required=True)
    where = f"#{position} (id {record_id})"
    response = _text(record, "response", filename, where, required=True)
    # RefChecker's files carry no language: the project's default (English when it has none) cuts the response.
    language = record_language(_text(record, "language", filename, where), default_language, filename, where,
                               "language")
    sentences = studio_units(response, language, summary, filename, where, "response")

    triplets, metadata = [], {}
    for key, value in record.items():
        kg = KG_FIELD.match(key)
        if not kg:
            if key not in KNOWN:
                metadata[key] = value
            continue
        if not isinstance(value, list):
            raise ImportFormatError(filename, where, key, "must be a list of {triplet, human_label}")
        for number, item in enumerate(value):
            field_name = f"{key}[{number}]"
            if not isinstance(item, dict):
                raise ImportFormatError(filename, where, field_name, "must be an object")
            triplet = item.get("triplet")
            if (not isinstance(triplet, list) or len(triplet) != 3
                    or not all(isinstance(part, str) for part in triplet)):
                raise ImportFormatError(filename, where, f"{field_name}.triplet", "must be [head, relation, tail] strings")
            label = triplet_label(item.get("human_label"), where=(filename, where, f"{field_name}.human_label"))
            extra = {k: v for k, v in item.items() if k not in {"triplet", "human_label"}}
            triplets.append(
                TripletRecord(
                    index=len(triplets), head=triplet[0], relation=triplet[1], tail=triplet[2],
                    reference_label=label, source=TripletSource.IMPORTED,
                    metadata={"kg_field": key, "extractor": kg.group("extractor"), **extra},
                )
            )
    metadata["source_file"] = filename
    metadata["id"] = record_id
    dialogue = DialogueRecord(
        external_id=f"{path.stem}/{record_id}",
        reference=_text(record, "reference", filename, where) or _text(record, "context", filename, where),
        topic=name_match.group("dataset") if name_match else "",
        language=_text(record, "language", filename, where),
        generator_model=name_match.group("model") if name_match else "",
    )
    turn = TurnRecord(
        dialogue=dialogue, index=0, response=response, sentences=sentences,
        user_message=_text(record, "question", filename, where), external_id=record_id,
        metadata=metadata, triplets=triplets, position=where,
    )
    # The dataset and the model come from the file's name (<dataset>_<model>_answers.json).
    refuse_too_long(turn, filename, {"dialogue.external_id": "id", "turn.external_id": "id",
                                     "dialogue.topic": "(file name)", "dialogue.generator_model": "(file name)",
                                     "dialogue.reference": "reference" if record.get("reference") else "context",
                                     "dialogue.language": "language", "turn.response": "response",
                                     "sentence": "response"})
    return turn
