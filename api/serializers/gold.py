"""Gold labels, adjudication, agreement, and a lead's override (shape only; the gold service decides)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.models import Adjudication, Assignment, GoldLabel

from .common import MAX_ID, PathField, ProtocolValueField, RecordIdField, blank_label, severity_field


class GoldSerializer(serializers.ModelSerializer):
    sentence_text = serializers.CharField(source="sentence.text", read_only=True)
    turn = serializers.IntegerField(source="sentence.turn_id", read_only=True)
    dialogue_external_id = RecordIdField(of="dialogue", turn="sentence.turn")
    decided_by = serializers.CharField(source="decided_by.username", read_only=True, default=None, allow_null=True)
    severity = severity_field()
    path = PathField(read_only=True, help_text="The decision path of the gold label: step -> the step's value.")

    class Meta:
        model = GoldLabel
        fields = [
            "id", "sentence", "sentence_text", "turn", "dialogue_external_id", "label", "path", "provenance",
            "reason", "severity", "error_type", "decided_by", "updated_at",
        ]
        read_only_fields = fields


class DisputedAnnotationSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(source="assignment_id")
    annotator = serializers.SerializerMethodField(help_text="Shown to leads only; adjudicators judge blind.")
    label = serializers.CharField()
    path = PathField()
    note = serializers.CharField()

    def get_annotator(self, annotation) -> str | None:
        return annotation.assignment.annotator.username if self.context.get("show_names") else None


class AdjudicationSerializer(serializers.ModelSerializer):
    sentence_text = serializers.CharField(source="sentence.text", read_only=True)
    sentence_index = serializers.IntegerField(source="sentence.index", read_only=True)
    dialogue_external_id = RecordIdField(of="dialogue", turn="turn")
    adjudicator = serializers.CharField(source="adjudicator.username", read_only=True, default=None, allow_null=True)
    label = blank_label(help_text="Empty while open.")
    annotations = serializers.SerializerMethodField(help_text="The submitted answers that disagree.")
    path = PathField(read_only=True, help_text="The adjudicator's decision path (empty while open).")

    class Meta:
        model = Adjudication
        fields = [
            "id", "sentence", "sentence_index", "sentence_text", "turn", "dialogue_external_id", "status",
            "annotations", "adjudicator", "label", "path", "chosen_assignment", "reason", "created_at",
            "resolved_at", "annotated_by_you",
        ]
        read_only_fields = fields

    annotated_by_you = serializers.BooleanField(
        read_only=True, help_text="You annotated this turn, so someone else must decide it.")

    @extend_schema_field(DisputedAnnotationSerializer(many=True))
    def get_annotations(self, adjudication):
        rows = [
            a for a in adjudication.sentence.annotations.all()
            if a.assignment.status == Assignment.Status.SUBMITTED and not a.assignment.is_qualification
        ]
        return DisputedAnnotationSerializer(rows, many=True, context=self.context).data


class ResolveSerializer(serializers.Serializer):
    """Exactly one of path, label or side (the service says so if not)."""

    reason = serializers.CharField(help_text="Why: required, kept in the gold history.")
    path = PathField(required=False,
                     help_text="A complete walk of the project's protocol: step -> the step's value (a choice's "
                               "answer, a multiple step's answers, a scale's point, a text), ending on a label "
                               "(GET /api/v1/projects/{slug}/protocol/).")
    label = ProtocolValueField("label", required=False)
    side = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID,
                                    help_text="The assignment id whose answer you adopt.")
    evidence = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(min_value=0, max_value=MAX_ID), min_length=2, max_length=2),
        required=False, help_text="[[start, end], …] character offsets into the reference.",
    )
    texts = serializers.DictField(
        child=serializers.CharField(max_length=5000, trim_whitespace=False), required=False,
        help_text="The gold text of text steps (step -> text) you wrote or picked from a side: it replaces the "
                  "decision's own text there (text never decides gold).")

    def validate_texts(self, texts):
        # A key is a step id of the protocol (the service names one that is not a text step); a NUL is refused
        # here, naming the field, like every text of the API.
        if any("\x00" in step or len(step) > 40 for step in texts):
            raise serializers.ValidationError("A step id has at most 40 characters and no NUL (\\x00).")
        return texts


class AgreementReportSerializer(serializers.Serializer):
    """The numbers of the reports page (``annotator.reports.agreement.project_agreement``)."""

    project = serializers.CharField()
    batch = serializers.CharField(allow_null=True)
    labels = serializers.ListField(child=serializers.CharField())
    measures = serializers.ListField(child=serializers.DictField(),
                                     help_text="Per variable (final label, then each protocol step): alpha, "
                                               "percent agreement, kappa, units.")
    confusion = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))
    pairs = serializers.ListField(child=serializers.DictField())
    annotators = serializers.ListField(child=serializers.DictField())
    batches = serializers.ListField(child=serializers.DictField())
    weekly = serializers.ListField(child=serializers.DictField())


class GoldOverrideSerializer(serializers.Serializer):
    label = ProtocolValueField("label")
    # Optional here on purpose: the gold service owns the rule that a reason is required.
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000,
                                   help_text="Why: required, kept in the gold history.")
