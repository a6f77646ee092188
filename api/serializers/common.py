"""What the serializers of several resources share: the largest id, label, severity and metadata fields."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.access import ANNOTATOR_METADATA
from annotator.domain.vocabulary import Label, Severity

# The largest id a request may name (ids are 64-bit integers in the database).
MAX_ID = 999_999_999_999_999_999


def blank_label(**kwargs):
    return serializers.ChoiceField(choices=Label.choices, allow_blank=True, read_only=True, **kwargs)


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
