"""Units of an imported turn: cut by the studio when the source gives none, checked when it gives some.

Every importer goes through here: a turn's units come from its source (JSONL ``sentences``,
CogniBench's own segmentation) or, when the source gives none (RefChecker always, JSONL without or
with an empty ``sentences`` list, CogniBench with no sentence in ``current_turn_processed`` or
``sentence_label_dict``), from the segmenter of the dialogue's language (``domain.segmentation``).
Whatever their origin, a turn gets at least one unit, and no unit is empty or only whitespace; the
import is refused otherwise, naming file, record and field.
"""

from __future__ import annotations

from django.conf import settings

from annotator.corpus.imports.importers import ImportFormatError, ImportSummary, SentenceRecord
from annotator.domain.languages import DEFAULT_LANGUAGE, LanguageError, language_code
from annotator.domain.segmentation import SegmentationError, segmenter_for, sentence_offsets


def record_language(value: str, default_language: str, filename: str, where: str, field_name: str) -> str:
    """The ISO 639-1 code of a record's ``language`` (the project's default when empty); refused by name."""
    try:
        return language_code(value, language_code(default_language or DEFAULT_LANGUAGE))
    except LanguageError as exc:
        raise ImportFormatError(filename, where, field_name, str(exc)) from None


def refuse_long_response(response: str, filename: str, where: str, field_name: str) -> None:
    """A response longer than IMPORT_MAX_RESPONSE_CHARS is refused before anything reads it further.

    A 7 MB response reached NLTK's regular-expression time limit and ended the import with a
    traceback; the real samples' longest response is 2,024 characters.
    """
    limit = settings.IMPORT_MAX_RESPONSE_CHARS
    if len(response) > limit:
        raise ImportFormatError(filename, where, field_name,
                                f"is {len(response):,} characters long; at most {limit:,} are accepted "
                                "(IMPORT_MAX_RESPONSE_CHARS)")


def studio_units(response: str, language: str, summary: ImportSummary | None, filename: str, where: str,
                 field_name: str) -> list[SentenceRecord]:
    """The units of ``response`` cut by the segmenter of ``language`` (a code), counted in ``summary``."""
    refuse_long_response(response, filename, where, field_name)
    try:
        spans = sentence_offsets(response, language)
    except SegmentationError as exc:
        raise ImportFormatError(filename, where, field_name, str(exc)) from None
    if not spans:
        raise ImportFormatError(filename, where, field_name,
                                "has no text to cut into units (empty or only whitespace); a turn needs at least one")
    name = segmenter_for(language)
    limit = settings.IMPORT_MAX_SENTENCE_CHARS
    for index, (start, end) in enumerate(spans):
        if end - start > limit:
            raise ImportFormatError(
                filename, where, field_name,
                f"sentence {index} is {end - start:,} characters long; at most {limit:,} are accepted "
                f"(IMPORT_MAX_SENTENCE_CHARS); {name} found no sentence end in it: give such a response with its "
                "units in the file",
            )
    if summary is not None:
        summary.segmented[name] = summary.segmented.get(name, 0) + 1
    return [SentenceRecord(index, start, end, response[start:end]) for index, (start, end) in enumerate(spans)]


def refuse_bad_units(sentences: list[SentenceRecord], response: str, filename: str, where: str,
                     field_name: str = "sentences[{index}].text", gaps_allowed: bool = False) -> None:
    """Refuse overlapping units, empty or whitespace-only units, and (unless ``gaps_allowed``) response text
    outside every unit.

    A unit ``"start": 0, "end": 0, "text": ""`` gave annotators an empty sentence while the response's
    text was never shown to be judged. Whitespace between units is no gap. One pass (it runs on every
    imported turn): the overlap check of the formats is here too.
    """
    previous_end = 0
    for position, sentence in enumerate(sentences):
        start, text = sentence.start, sentence.text
        if start < previous_end:
            raise ImportFormatError(filename, where, f"sentences[{position}].start", "overlaps the previous sentence")
        if not text or text.isspace():
            raise ImportFormatError(filename, where, field_name.format(index=sentence.index),
                                    f"unit {sentence.index} is empty or only whitespace; every unit must hold text")
        if start > previous_end and not gaps_allowed and not response[previous_end:start].isspace():
            _refuse_gap(response, previous_end, start, filename, where)
        previous_end = sentence.end
    if not gaps_allowed and previous_end < len(response) and not response[previous_end:].isspace():
        _refuse_gap(response, previous_end, len(response), filename, where)


def _refuse_gap(response, start, end, filename, where):
    text = response[start:end].strip()
    raise ImportFormatError(
        filename, where, "sentences",
        f"the response's text {text[:40]!r} (offsets {start}-{end}) is in no unit: units must cover the "
        f"response (whitespace between them aside); give it a unit, or leave out \"sentences\" to let the "
        f"studio cut the response",
    )
