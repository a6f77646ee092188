"""What the serializers of several resources share: the largest id, label, severity and metadata fields."""

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
