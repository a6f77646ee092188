"""The corpus: import batches, dialogues, turns and sentences."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.models import Dialogue, ImportBatch, Sentence, Turn
from annotator.corpus.selectors import AgreementState

from .common import RecordIdField, metadata_access, metadata_field


class ImportProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


class ImportBatchSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None, allow_null=True)
    live_progress = serializers.SerializerMethodField(help_text="Turns done so far while the job runs.")

    class Meta:
        model = ImportBatch
        fields = [
            "id", "kind", "filename", "sha256", "status", "progress", "total", "summary", "error",
            "created_by", "created_at", "finished_at", "live_progress",
        ]
        read_only_fields = fields

    @extend_schema_field(ImportProgressSerializer)
    def get_live_progress(self, batch):
        from annotator.corpus.imports.services import import_batch_progress

        return import_batch_progress(batch)


class ImportUploadSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ImportBatch.Kind.choices)
    upload = serializers.FileField(help_text="CogniBench dialogues.json, a RefChecker *_answers.json or a .jsonl "
                                             "(at most IMPORT_MAX_UPLOAD_BYTES, 200 MB by default).")
    second_upload = serializers.FileField(required=False, help_text="CogniBench labels.json (optional).")

    def validate(self, data):
        from annotator.corpus.imports.importers.uploads import uploads_problems

        # The same checks as the project page's form and the admin (kind, size, extension, content).
        problems = uploads_problems(data["kind"], data.get("upload"), data.get("second_upload"))
        if problems:
            raise serializers.ValidationError(problems)
        return data


class DialogueSerializer(serializers.ModelSerializer):
    external_id = RecordIdField(of="dialogue", turn=None)
    turn_count = serializers.IntegerField(read_only=True)
    metadata = metadata_field()

    class Meta:
        model = Dialogue
        fields = [
            "id", "external_id", "batch", "topic", "language", "generator_model", "reference", "metadata",
            "turn_count",
        ]
        read_only_fields = fields

    def get_metadata(self, dialogue) -> dict:
        return metadata_access(self).visible("dialogue", dialogue.metadata, dialogue_id=dialogue.pk)


class SentenceBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Sentence
        fields = ["id", "index", "text", "start", "end"]
        read_only_fields = fields


class TurnSerializer(serializers.ModelSerializer):
    dialogue_external_id = RecordIdField(of="dialogue", turn="")
    external_id = RecordIdField(of="turn", turn="")
    sentences = SentenceBriefSerializer(many=True, read_only=True)
    metadata = metadata_field()

    class Meta:
        model = Turn
        fields = [
            "id", "dialogue", "dialogue_external_id", "index", "external_id", "user_message",
            "assistant_response", "history", "metadata", "is_qualification", "sentences",
        ]
        read_only_fields = fields

    def get_metadata(self, turn) -> dict:
        return metadata_access(self).visible("turn", turn.metadata, turn_id=turn.pk, dialogue_id=turn.dialogue_id)


class SentenceSerializer(serializers.ModelSerializer):
    """A sentence as an annotator sees it: text and position, no labels."""

    dialogue = serializers.IntegerField(source="turn.dialogue_id", read_only=True)
    dialogue_external_id = RecordIdField(of="dialogue", turn="turn")

    class Meta:
        model = Sentence
        fields = ["id", "turn", "dialogue", "dialogue_external_id", "index", "text", "start", "end"]
        read_only_fields = fields


class LabelledSentenceSerializer(SentenceSerializer):
    """A sentence as an adjudicator or lead sees it: with gold and the agreement state."""

    gold_label = serializers.SerializerMethodField()
    agreement_state = serializers.ChoiceField(choices=AgreementState.choices, read_only=True)

    class Meta(SentenceSerializer.Meta):
        fields = SentenceSerializer.Meta.fields + ["gold_label", "agreement_state"]
        read_only_fields = fields

    def get_gold_label(self, sentence) -> str | None:
        gold = getattr(sentence, "gold", None) if hasattr(sentence, "gold") else None
        return gold.label if gold else None
