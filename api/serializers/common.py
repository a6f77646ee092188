"""What the serializers of several resources share: the largest id, label, severity and metadata fields."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.access import ANNOTATOR_METADATA
from annotator.domain.protocol.kinds.common import (VALUE_ID_MAX, VALUE_INTEGER_BOUND, VALUE_LIST_MAX,
                                                     VALUE_TEXT_MAX, value_shape_problem)
from annotator.domain.vocabulary import Severity

# The largest id a request may name (ids are 64-bit integers in the database).
MAX_ID = 999_999_999_999_999_999


# Labels, steps and answers are project-defined: each project's protocol document names its own.
PROJECT_DEFINED = ("Project-defined: one of the {kind}s of the project's protocol "
                   "(GET /api/v1/projects/{{slug}}/protocol/).")


def blank_label(**kwargs):
    kwargs["help_text"] = " ".join([PROJECT_DEFINED.format(kind="label"), kwargs.get("help_text", "")]).strip()
    return serializers.CharField(allow_blank=True, read_only=True, **kwargs)


class ProtocolValueField(serializers.CharField):
    """A label, step or answer of the project's protocol: views put the protocol in the serializer's context
    (``{"protocol": protocol_for(project)}``); a value it does not have is a 400 naming the ones it has."""

    def __init__(self, kind: str, **kwargs):
        self.kind = kind
        kwargs.setdefault("max_length", 40)
        kwargs.setdefault("help_text", PROJECT_DEFINED.format(kind=kind))
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        protocol = self.context.get("protocol")
        if protocol is None or not value:
            return value
        known = (protocol.labels if self.kind == "label" else protocol.steps if self.kind == "step"
                 else tuple(dict.fromkeys(v for step in protocol.steps for v in protocol.answers(step))))
        if value not in known:
            raise serializers.ValidationError(
                f"{value!r} is not a {self.kind} of this project's protocol: one of {', '.join(known)}.")
        return value


# A step's answer in a decision path, by the step's kind (docs/protocols.md): a choice's answer or a text step's
# text (string), a scale's point (integer), a multiple step's chosen answers (array of strings). The bounds are
# the widest the protocol document allows (a text step's max_length, nine answers), so no value a walk can
# produce is refused here: the protocol checks the value against its step.
PATH_TEXT_MAX = VALUE_TEXT_MAX
PATH_CHOICES_MAX = VALUE_LIST_MAX
PATH_SCALE_BOUND = VALUE_INTEGER_BOUND
PATH_VALUE_SCHEMA = {"oneOf": [
    {"type": "string", "maxLength": PATH_TEXT_MAX},
    {"type": "integer", "minimum": -PATH_SCALE_BOUND, "maximum": PATH_SCALE_BOUND},
    {"type": "array", "items": {"type": "string", "maxLength": VALUE_ID_MAX}, "maxItems": PATH_CHOICES_MAX},
]}


@extend_schema_field(PATH_VALUE_SCHEMA)
class PathValueField(serializers.Field):
    """One step's value in a decision path: string, integer or array of strings (the step's kind says which;
    the protocol, not this field, checks that the value is the step's)."""

    default_error_messages = {
        "invalid": "A path value is a string (a choice's answer, a text), an integer (a scale's point) or an "
                   "array of strings (a multiple step's answers), not {kind}.",
        "too_long": f"A path's text is at most {PATH_TEXT_MAX} characters.",
        "out_of_range": f"A path's integer is between -{PATH_SCALE_BOUND} and {PATH_SCALE_BOUND}.",
        "nul": "A path's text may not contain a NUL character (\\u0000), which the database cannot store.",
        "surrogate": "A path's text may not contain a lone surrogate (\\ud800-\\udfff), which the database cannot "
                     "store.",
        "too_many": f"A path's list holds at most {PATH_CHOICES_MAX} answers, each a string of at most "
                    f"{VALUE_ID_MAX} characters.",
    }

    def to_internal_value(self, data):
        problem = value_shape_problem(data)
        if problem == "invalid":
            self.fail("invalid", kind="null" if data is None else type(data).__name__)
        if problem:
            self.fail(problem)
        return list(data) if isinstance(data, list) else data

    def to_representation(self, value):
        return value


class StepAnswerField(PathValueField):
    """An answer to a step of the project's protocol, of the step's kind (docs/protocols.md): a string for a
    choice step (one of its answers) or a text step, a list of answers for a multiple step, an integer for a
    scale. The shape of a path's value; ``AnswerStepSerializer.validate`` checks it against the step."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", PROJECT_DEFINED.format(kind="answer") + " A list of answers for a multiple "
                                       "step, an integer for a scale, the text for a text step.")
        super().__init__(**kwargs)


PATH_SCHEMA = {"type": "object", "additionalProperties": PATH_VALUE_SCHEMA}


@extend_schema_field(PATH_SCHEMA)
class PathField(serializers.DictField):
    """A decision path: step id -> the step's value (``PathValueField``), as stored and as exported."""

    child = PathValueField()

    def to_representation(self, value):
        return dict(value or {})


def severity_field():
    return serializers.ChoiceField(choices=Severity.choices, allow_null=True, read_only=True)


def metadata_field():
    return serializers.SerializerMethodField(
        help_text="Source metadata kept by the import. Leads get all of it (not on a turn they hold an "
                  "unsubmitted slot on); everyone else only the keys meant for annotators.")


def metadata_access(serializer):
    """The reader's ``annotator.access.MetadataAccess`` (views put it in the context); without one, what an
    annotator may see."""
    return serializer.context.get("metadata_access") or ANNOTATOR_METADATA


@extend_schema_field({"type": "string", "nullable": True})
class RecordIdField(serializers.Field):
    """The source's record id of a dialogue (``of="dialogue"``) or turn (``of="turn"``) reached from the object by
    ``turn`` (an attribute path to its Turn; None when the object is the Dialogue). Leads only, and not on a turn
    they hold an unsubmitted slot on (``annotator.access.MetadataAccess.record_id``): CogniBench's public labels
    are keyed by it. Everyone else gets null and names the turn by its ``turn`` id."""

    def __init__(self, *, of: str, turn: str | None, **kwargs):
        self.of, self.turn_path = of, turn
        kwargs.update(source="*", read_only=True, allow_null=True)
        kwargs.setdefault("help_text", "The source's record id: leads only (null for everyone else).")
        super().__init__(**kwargs)

    def to_representation(self, instance):
        if self.turn_path is None:  # the object is a Dialogue
            return metadata_access(self.parent).record_id(instance.external_id, dialogue_id=instance.pk)
        turn = instance
        for name in filter(None, self.turn_path.split(".")):
            turn = getattr(turn, name)
        value = turn.external_id if self.of == "turn" else turn.dialogue.external_id
        return metadata_access(self.parent).record_id(value, turn_id=turn.pk, dialogue_id=turn.dialogue_id)
