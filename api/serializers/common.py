"""What the serializers of several resources share: the largest id, label, severity and metadata fields."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.access import ANNOTATOR_METADATA
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


@extend_schema_field({"oneOf": [{"type": "string", "maxLength": 5000}, {"type": "integer"},
                                {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 9}]})
class StepAnswerField(serializers.Field):
    """An answer to a step of the project's protocol, of the step's kind (docs/protocols.md): a string for a
    choice step (one of its answers) or a text step, a list of answers for a multiple step, an integer for a
    scale. Its shape here; ``AnswerStepSerializer.validate`` checks it against the step."""

    default_error_messages = {"invalid": "An answer is a string, a list of strings or an integer."}

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", PROJECT_DEFINED.format(kind="answer") + " A list of answers for a multiple "
                                       "step, an integer for a scale, the text for a text step.")
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, str) and len(data) <= 5000 and "\x00" not in data:
            return data
        if isinstance(data, int) and not isinstance(data, bool) and abs(data) <= 10**6:
            return data
        if isinstance(data, list) and len(data) <= 9 and all(
                isinstance(value, str) and len(value) <= 40 and "\x00" not in value for value in data):
            return list(data)
        self.fail("invalid")

    def to_representation(self, value):
        return value


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
