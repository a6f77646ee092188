"""What the serializers of several resources share: the largest id, label, severity and metadata fields."""

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
