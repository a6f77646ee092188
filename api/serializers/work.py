"""Assignments and sentence annotations, and a lead's actions on an assignment (shape only; the services decide)."""

from rest_framework import serializers

from annotator.models import Assignment, SentenceAnnotation

from .common import PathField, RecordIdField, blank_label, severity_field
from .corpus import TurnSerializer


class AssignmentSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.username", read_only=True)
    dialogue_external_id = RecordIdField(of="dialogue", turn="turn")

    class Meta:
        model = Assignment
        fields = [
            "id", "turn", "dialogue_external_id", "annotator", "status", "is_qualification", "version",
            "assigned_at", "started_at", "submitted_at",
        ]
        read_only_fields = fields


class SentenceAnnotationSerializer(serializers.ModelSerializer):
    label = blank_label(help_text="Empty until the path reaches a label.")
    severity = severity_field()
    path = PathField(read_only=True, help_text="The answers so far: step -> the step's value.")

    class Meta:
        model = SentenceAnnotation
        fields = [
            "id", "assignment", "sentence", "path", "label", "note", "severity", "justification", "error_type",
            "seconds_spent", "updated_at",
        ]
        read_only_fields = fields


class AssignmentDetailSerializer(AssignmentSerializer):
    """An assignment with its turn and the holder's own answers."""

    turn_detail = TurnSerializer(source="turn", read_only=True)
    annotations = SentenceAnnotationSerializer(source="sentence_annotations", many=True, read_only=True)

    class Meta(AssignmentSerializer.Meta):
        fields = AssignmentSerializer.Meta.fields + ["turn_detail", "annotations"]
        read_only_fields = fields


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000,
                                   help_text="Why: kept in the assignment's history.")


class ReassignSerializer(serializers.Serializer):
    annotator = serializers.CharField(max_length=150, help_text="Username of an annotator of the project.")
