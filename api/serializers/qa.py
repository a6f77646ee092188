"""Qualification: the set of turns, the pass mark and the annotators' attempts."""

from rest_framework import serializers

from annotator.models import QualificationResult

from .common import MAX_ID


class QualificationAttemptSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.username", read_only=True)
    score = serializers.FloatField(read_only=True, help_text="correct / total (sentence accuracy).")
    retry_allowed_by = serializers.CharField(source="retry_allowed_by.username", read_only=True, default=None,
                                             allow_null=True)

    class Meta:
        model = QualificationResult
        fields = ["id", "annotator", "attempt", "correct", "total", "score", "passed", "retry_allowed",
                  "retry_allowed_by", "created_at"]
        read_only_fields = fields


class QualificationAnnotatorSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    attempts = QualificationAttemptSerializer(many=True, help_text="Latest first.")


class QualificationSerializer(serializers.Serializer):
    turns = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of the qualification turns.")
    pass_mark = serializers.FloatField(help_text="Share of sentences to get right, in (0, 1].")
    results = QualificationAnnotatorSerializer(many=True, help_text="Per annotator, by username.")


class QualificationSetSerializer(serializers.Serializer):
    turns = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
                                  help_text="Ids of turns whose every sentence has gold and nobody annotates "
                                            "as real work; [] clears the set.")
    pass_mark = serializers.FloatField(help_text="Share of sentences to get right, in (0, 1].")
