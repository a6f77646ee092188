"""The body of the annotation page's background save (POST /a/<id>/sync/), validated by a DRF serializer.

The page (static/js/annotation_outbox.js) sends ``{"version": int, "changes": [change, …]}``, one change per
sentence: its request id, the steps taken (``answer`` / ``pick`` / ``undo``), the path shown after them, the
note and the evidence (None: unchanged) and the seconds spent. An answer's value is a string (a choice step's
answer, a text step's text), a list of strings (a multiple step's answers) or an integer (a scale's point); a
value the step's kind refuses is a 400 naming the step. Anything else is refused with a 400 naming the
change and the field (``change 2: note: …``), never a 500: JSON types are taken as they are (a number is not
a string, a boolean not a number), unknown keys are refused, and no text may hold a NUL character (PostgreSQL
cannot store one; the forms and the API refuse it too). The validated data are ``work.batch_save.SentenceChange``
objects, ready for ``annotation_save_batch``.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from functools import lru_cache

from rest_framework import serializers

from ..domain.protocol.document import ProtocolError
from ..domain.protocol.kinds import CHOICE, parse_value
from ..domain.protocol.kinds.common import value_shape_problem
from ..fastsql.joined import JoinedSelect
from ..models import Sentence
from ..projects.protocols import protocol_for_assignment
from .batch_save import SentenceChange
from .selectors import browser_offset_to_reference
from .sentence_save import STEP_ACTIONS, StepTaken

MAX_CHANGES = 100
MAX_STEPS = 200
MAX_SPANS = 100
MAX_ID = 2**31 - 1


class Strict(serializers.Serializer):
    """A JSON object with only the serializer's keys."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                raise serializers.ValidationError({key: ["Unknown key."] for key in unknown})
        return super().to_internal_value(data)


class JsonInteger(serializers.IntegerField):
    """A JSON integer: not a string of digits, a float or a boolean."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class JsonNumber(serializers.FloatField):
    """A finite JSON number (not a string or a boolean)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)) or not math.isfinite(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class JsonString(serializers.CharField):
    """A JSON string (a number is not turned into one); NUL refused by DRF's CharField."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        kwargs.setdefault("allow_blank", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class AnswerValue(serializers.Field):
    """A step's answer as JSON has it: a string (a choice's value or a text), a list of strings (a multiple
    step's values) or an integer (a scale's point). Its shape only: ``sentence_changes`` checks it against the
    step of the slot's protocol."""

    default_error_messages = {"invalid": "An answer is a string, a list of strings or an integer."}

    def to_internal_value(self, data):
        if value_shape_problem(data):
            self.fail("invalid")
        return list(data) if isinstance(data, list) else data

    def to_representation(self, value):
        return value


class StepSerializer(Strict):
    action = serializers.ChoiceField(choices=STEP_ACTIONS)
    step = JsonString(max_length=40, default="")
    value = AnswerValue(default="")
    at = JsonNumber(min_value=0, max_value=1e14, allow_null=True, default=None,
                    help_text="When the annotator answered, in milliseconds since 1970.")

    def to_internal_value(self, data):
        step = super().to_internal_value(data)
        at = step["at"]
        moment = datetime.fromtimestamp(at / 1000, tz=timezone.utc) if at is not None else None
        return StepTaken(step["action"], step["step"], step["value"], moment)


class EvidenceSpanSerializer(Strict):
    """A span of the reference as the page counts (UTF-16 code units); ``id`` and ``text`` are the page's copy."""

    start = JsonInteger(min_value=0, max_value=MAX_ID)
    end = JsonInteger(min_value=0, max_value=MAX_ID)
    id = JsonInteger(min_value=0, max_value=MAX_ID, required=False, allow_null=True)
    text = JsonString(required=False, allow_null=True)


class PathField(serializers.DictField):
    """The path the page shows after the steps (its shape; ``sentence_changes`` checks it against the slot's
    protocol: this serializer is built once for every slot)."""

    child = AnswerValue()

    def to_internal_value(self, data):
        if isinstance(data, dict) and any(not isinstance(key, str) or "\x00" in key for key in data):
            raise serializers.ValidationError("The steps of a path are strings without NUL characters.")
        return super().to_internal_value(data)


class ChangeSerializer(Strict):
    request_id = serializers.RegexField(r"^[A-Za-z0-9_-]{8,40}\Z", error_messages={
        "invalid": "8-40 letters, digits, '-' or '_'."})
    sentence = JsonInteger(min_value=0, max_value=MAX_ID)
    steps = serializers.ListField(child=StepSerializer(), max_length=MAX_STEPS, default=list)
    path = PathField(allow_null=True, default=None)
    note = JsonString(allow_null=True, default=None)
    evidence = serializers.ListField(child=EvidenceSpanSerializer(), max_length=MAX_SPANS, allow_null=True,
                                     default=None)
    seconds = JsonNumber(min_value=0, default=0.0)


class BatchSerializer(Strict):
    """The body's shape; ``sentence_changes`` then reads it against the slot (its turn's sentences, its reference)."""

    version = JsonInteger(min_value=0, max_value=MAX_ID)
    changes = serializers.ListField(child=ChangeSerializer(), min_length=1, max_length=MAX_CHANGES)

    def validate(self, data):
        ids = [change["request_id"] for change in data["changes"]]
        if len(set(ids)) != len(ids):
            raise serializers.ValidationError({"changes": ["request_id must be unique in the batch."]})
        return data


# Built once: a serializer instance builds its nested fields anew (deep copies of every declared field, for every
# change's serializer), which cost the sync request more than the validation itself (docs/benchmarks.md). The
# fields hold no state of a request, so one instance validates every body (``run_validation``, what ``is_valid``
# runs); the errors are the same nested ones ``is_valid`` gives.
_BATCH = BatchSerializer()


def validated_batch(assignment, data) -> tuple[int, list[SentenceChange]]:
    """The body's version and its changes, ready for ``annotation_save_batch``; ``ValidationError`` (DRF's) if not."""
    try:
        batch = _BATCH.run_validation(data)
    except serializers.ValidationError as error:
        detail = error.detail
        if isinstance(detail, list) and len(detail) == 1 and getattr(detail[0], "code", None) == "null":
            # As ``Serializer.errors`` words a body that is JSON null.
            detail = {"non_field_errors": ["No data provided"]}
        raise serializers.ValidationError(detail) from None
    return batch["version"], sentence_changes(assignment, batch["changes"])


def sentence_changes(assignment, changes: list[dict]) -> list[SentenceChange]:
    """The validated changes read against ``assignment``: sentences of its turn, evidence in reference offsets."""
    wanted = sorted({change["sentence"] for change in changes})
    sentences = {sentence.pk: sentence for sentence, _ in _sentences_of_turn(len(wanted)).fetch_all(
        [assignment.turn_id, *wanted])}
    reference = assignment.turn.dialogue.reference
    protocol = protocol_for_assignment(assignment)
    taken = []
    for position, change in enumerate(changes):
        sentence = sentences.get(change["sentence"])
        if sentence is None:
            raise serializers.ValidationError({"changes": {position: {"sentence": [
                f"Sentence {change['sentence']} is not part of this turn."]}}})
        if change["path"] is not None:
            try:
                protocol.validate(change["path"])  # a path the slot's protocol can produce
            except ProtocolError as error:
                raise serializers.ValidationError({"changes": {position: {"path": [str(error)]}}}) from None
        for number, step_taken in enumerate(change["steps"]):
            problem = _kind_value_problem(protocol, step_taken)
            if problem:
                raise serializers.ValidationError({"changes": {position: {"steps": {number: {"value": [problem]}}}}})
        evidence = change["evidence"]
        if evidence is not None:
            evidence = [(browser_offset_to_reference(reference, span["start"]),
                         browser_offset_to_reference(reference, span["end"])) for span in evidence]
        taken.append(SentenceChange(change["request_id"], sentence, change["steps"], change["path"],
                                    change["note"], evidence, change["seconds"]))
    return taken


def _kind_value_problem(protocol, taken) -> str:
    """Why the value of an answer to a multiple, scale or text step is not one the step takes ("" if it is).
    A choice step's answer is checked where it is replayed, as before step kinds (a 422 naming the sentence)."""
    if taken.action != "answer" or taken.step not in protocol.steps:
        return ""
    step = protocol.step(taken.step)
    if step.kind == CHOICE:
        return ""
    try:
        parse_value(step, taken.value)
    except ProtocolError as error:
        return str(error)
    return ""


@lru_cache(maxsize=MAX_CHANGES)
def _sentences_of_turn(count: int) -> JoinedSelect:
    """The sentences of a turn with ``count`` ids: a statement written once per count (fastsql/joined.py says why)."""
    return JoinedSelect(Sentence, "s", joins=[], extra_columns=[],
                        where=f"s.turn_id = %s AND s.id IN ({', '.join(['%s'] * count)})")


def first_error(errors, where: str = "") -> str:
    """The first of DRF's nested errors as one sentence naming where it is (``change 2: note: …``)."""
    if isinstance(errors, dict):
        key, value = next(iter(errors.items()))
        if key == "changes" and isinstance(value, dict):
            position, inner = next(iter(value.items()))
            return first_error(inner, f"change {int(position) + 1}: ")
        if key in ("steps", "evidence") and isinstance(value, dict):
            position, inner = next(iter(value.items()))
            return first_error(inner, f"{where}{key} {int(position) + 1}: ")
        name = "" if key == "non_field_errors" else f"{key}: "
        return first_error(value, f"{where}{name}")
    if isinstance(errors, list) and errors:
        return first_error(errors[0], where)
    return f"{where}{errors}"
