"""Serializers: the shape of what goes in and out. Meaning is checked by the services."""

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.access import ANNOTATOR_METADATA
from annotator.models import (
    Adjudication,
    Assignment,
    Dialogue,
    GoldLabel,
    ImportBatch,
    Membership,
    Project,
    QualificationResult,
    Sentence,
    SentenceAnnotation,
    Turn,
)
from annotator.selectors.corpus import AgreementState
from annotator.domain.vocabulary import Answer, Label, Role, Severity, Step

User = get_user_model()
# The largest id a request may name (ids are 64-bit integers in the database).
MAX_ID = 999_999_999_999_999_999


def _blank_label(**kwargs):
    return serializers.ChoiceField(choices=Label.choices, allow_blank=True, read_only=True, **kwargs)


def _severity():
    return serializers.ChoiceField(choices=Severity.choices, allow_null=True, read_only=True)


def _metadata_field():
    return serializers.SerializerMethodField(
        help_text="Source metadata kept by the import. Leads get all of it (not on a turn they hold an "
                  "unsubmitted slot on); everyone else only the keys meant for annotators.")


def _metadata_access(serializer):
    """The reader's ``annotator.access.MetadataAccess`` (views put it in the context); without one, what an
    annotator may see."""
    return serializer.context.get("metadata_access") or ANNOTATOR_METADATA


class ProjectSerializer(serializers.ModelSerializer):
    my_role = serializers.SerializerMethodField(
        help_text="Your role in the project (from your membership; superusers are leads everywhere).")

    class Meta:
        model = Project
        fields = [
            "slug", "name", "guidelines", "overlap", "protocol_mode", "show_prelabels", "require_evidence",
            "qualification_pass_mark", "enable_triplets", "enable_severity", "enable_error_types",
            "severity_threshold", "error_types", "adjudicators_may_annotate", "created_at", "my_role",
        ]
        read_only_fields = fields

    def get_my_role(self, project) -> str | None:
        return getattr(project, "user_role", None)


class ProjectSettingsSerializer(serializers.ModelSerializer):
    """What a lead may change. Slug and creation date are fixed."""

    error_types = serializers.ListField(child=serializers.CharField(max_length=100), required=False)

    class Meta:
        model = Project
        fields = [
            "name", "guidelines", "overlap", "protocol_mode", "show_prelabels", "require_evidence",
            "qualification_pass_mark", "enable_triplets", "enable_severity", "enable_error_types",
            "severity_threshold", "error_types", "adjudicators_may_annotate",
        ]
        extra_kwargs = {
            "overlap": {"min_value": 1, "max_value": 10},
            "qualification_pass_mark": {"min_value": 0.0, "max_value": 1.0},
            "severity_threshold": {"min_value": 1, "max_value": 5},
        }


class MemberSerializer(serializers.ModelSerializer):
    user_id = serializers.IntegerField(source="user.id", read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["user_id", "username", "role", "joined_at"]
        read_only_fields = ["joined_at"]


class MemberAddSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)


class MemberRoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


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
        from annotator.services.imports import import_batch_progress

        return import_batch_progress(batch)


class DialogueSerializer(serializers.ModelSerializer):
    turn_count = serializers.IntegerField(read_only=True)
    metadata = _metadata_field()

    class Meta:
        model = Dialogue
        fields = [
            "id", "external_id", "batch", "topic", "language", "generator_model", "reference", "metadata",
            "turn_count",
        ]
        read_only_fields = fields

    def get_metadata(self, dialogue) -> dict:
        return _metadata_access(self).visible("dialogue", dialogue.metadata, dialogue_id=dialogue.pk)


class SentenceBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Sentence
        fields = ["id", "index", "text", "start", "end"]
        read_only_fields = fields


class TurnSerializer(serializers.ModelSerializer):
    dialogue_external_id = serializers.CharField(source="dialogue.external_id", read_only=True)
    sentences = SentenceBriefSerializer(many=True, read_only=True)
    metadata = _metadata_field()

    class Meta:
        model = Turn
        fields = [
            "id", "dialogue", "dialogue_external_id", "index", "external_id", "user_message",
            "assistant_response", "history", "metadata", "is_qualification", "sentences",
        ]
        read_only_fields = fields

    def get_metadata(self, turn) -> dict:
        return _metadata_access(self).visible("turn", turn.metadata, turn_id=turn.pk, dialogue_id=turn.dialogue_id)


class SentenceSerializer(serializers.ModelSerializer):
    """A sentence as an annotator sees it: text and position, no labels."""

    dialogue = serializers.IntegerField(source="turn.dialogue_id", read_only=True)
    dialogue_external_id = serializers.CharField(source="turn.dialogue.external_id", read_only=True)

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


class GoldSerializer(serializers.ModelSerializer):
    sentence_text = serializers.CharField(source="sentence.text", read_only=True)
    turn = serializers.IntegerField(source="sentence.turn_id", read_only=True)
    dialogue_external_id = serializers.CharField(source="sentence.turn.dialogue.external_id", read_only=True)
    decided_by = serializers.CharField(source="decided_by.username", read_only=True, default=None, allow_null=True)
    severity = _severity()

    class Meta:
        model = GoldLabel
        fields = [
            "id", "sentence", "sentence_text", "turn", "dialogue_external_id", "label", "path", "provenance",
            "reason", "severity", "error_type", "decided_by", "updated_at",
        ]
        read_only_fields = fields


class AssignmentSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.username", read_only=True)
    dialogue_external_id = serializers.CharField(source="turn.dialogue.external_id", read_only=True)

    class Meta:
        model = Assignment
        fields = [
            "id", "turn", "dialogue_external_id", "annotator", "status", "is_qualification", "version",
            "assigned_at", "started_at", "submitted_at",
        ]
        read_only_fields = fields


class SentenceAnnotationSerializer(serializers.ModelSerializer):
    label = _blank_label(help_text="Empty until the path reaches a label.")
    severity = _severity()

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


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()
    projects = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")


# --- writes on an assignment (shape only; the annotation services decide what is allowed) ---------

class _ActionSerializer(serializers.Serializer):
    request_id = serializers.CharField(
        max_length=64, required=False, allow_blank=True,
        help_text="Idempotency key (or send the `Idempotency-Key` header): a replay with the same key is "
                  "answered with the first result and changes nothing.",
    )
    expected_version = serializers.IntegerField(
        min_value=0, max_value=MAX_ID, required=False, allow_null=True,
        help_text="The assignment version you last saw; a different current version answers 409.",
    )


class _SentenceActionSerializer(_ActionSerializer):
    sentence = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Id of a sentence of the assignment's turn.")
    seconds = serializers.FloatField(min_value=0, required=False, default=0,
                                     help_text="Time spent on the sentence since the last action.")


class AnswerStepSerializer(_SentenceActionSerializer):
    step = serializers.ChoiceField(choices=[(s.value, s.label) for s in Step])
    answer = serializers.ChoiceField(choices=[(a.value, a.label) for a in Answer])


class PickLabelSerializer(_SentenceActionSerializer):
    label = serializers.ChoiceField(choices=Label.choices)


class UndoSerializer(_SentenceActionSerializer):
    pass


class NoteSerializer(_SentenceActionSerializer):
    note = serializers.CharField(allow_blank=True, max_length=5000, trim_whitespace=True)


class EvidenceAddSerializer(_SentenceActionSerializer):
    start = serializers.IntegerField(min_value=0, max_value=MAX_ID, help_text="Character offset into the dialogue's reference.")
    end = serializers.IntegerField(min_value=1, max_value=MAX_ID)


class EvidenceRemoveSerializer(_SentenceActionSerializer):
    evidence = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Id of the evidence span to remove.")


class SubmitSerializer(_ActionSerializer):
    pass


class EvidenceSpanSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    text = serializers.CharField()


class ActionResultSerializer(serializers.Serializer):
    assignment = AssignmentSerializer()
    annotation = SentenceAnnotationSerializer(allow_null=True)
    next_step = serializers.ChoiceField(
        choices=[(s.value, s.label) for s in Step], allow_null=True,
        help_text="The protocol question to ask next for this sentence; null when it has a label.",
    )
    replayed = serializers.BooleanField(help_text="True when the request id was seen before: nothing changed.")


# --- adjudication, agreement -------------------------------------------------------------------

class DisputedAnnotationSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(source="assignment_id")
    annotator = serializers.SerializerMethodField(help_text="Shown to leads only; adjudicators judge blind.")
    label = serializers.CharField()
    path = serializers.DictField(child=serializers.CharField())
    note = serializers.CharField()

    def get_annotator(self, annotation) -> str | None:
        return annotation.assignment.annotator.username if self.context.get("show_names") else None


class AdjudicationSerializer(serializers.ModelSerializer):
    sentence_text = serializers.CharField(source="sentence.text", read_only=True)
    sentence_index = serializers.IntegerField(source="sentence.index", read_only=True)
    dialogue_external_id = serializers.CharField(source="turn.dialogue.external_id", read_only=True)
    adjudicator = serializers.CharField(source="adjudicator.username", read_only=True, default=None, allow_null=True)
    label = _blank_label(help_text="Empty while open.")
    annotations = serializers.SerializerMethodField(help_text="The submitted answers that disagree.")

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
    path = serializers.DictField(child=serializers.CharField(), required=False,
                                 help_text="A complete protocol walk, e.g. {\"relevance\": \"irrelevant\"}.")
    label = serializers.ChoiceField(choices=Label.choices, required=False)
    side = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID,
                                    help_text="The assignment id whose answer you adopt.")
    evidence = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(min_value=0, max_value=MAX_ID), min_length=2, max_length=2),
        required=False, help_text="[[start, end], …] character offsets into the reference.",
    )


class AgreementReportSerializer(serializers.Serializer):
    """The numbers of the reports page (``annotator.selectors.agreement.project_agreement``)."""

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


class ImportUploadSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ImportBatch.Kind.choices)
    upload = serializers.FileField(help_text="CogniBench dialogues.json, a RefChecker *_answers.json or a .jsonl "
                                             "(at most IMPORT_MAX_UPLOAD_BYTES, 200 MB by default).")
    second_upload = serializers.FileField(required=False, help_text="CogniBench labels.json (optional).")

    def validate(self, data):
        from annotator.importers.uploads import uploads_problems

        # The same checks as the project page's form and the admin (kind, size, extension, content).
        problems = uploads_problems(data["kind"], data.get("upload"), data.get("second_upload"))
        if problems:
            raise serializers.ValidationError(problems)
        return data


# --- a lead's actions (shape only; the gold, assignment and qualification services decide) ----------

class GoldOverrideSerializer(serializers.Serializer):
    label = serializers.ChoiceField(choices=Label.choices)
    # Optional here on purpose: the gold service owns the rule that a reason is required.
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000,
                                   help_text="Why: required, kept in the gold history.")


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000,
                                   help_text="Why: kept in the assignment's history.")


class ReassignSerializer(serializers.Serializer):
    annotator = serializers.CharField(max_length=150, help_text="Username of an annotator of the project.")


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


class JobEvaluationSerializer(serializers.Serializer):
    """The evaluation page's numbers (``autolabel.selectors.job_evaluation``)."""

    job = serializers.IntegerField()
    model = serializers.CharField()
    prompt_version = serializers.IntegerField()
    sentences = serializers.IntegerField(help_text="Predicted sentences that have gold.")
    words = serializers.IntegerField()
    samples = serializers.IntegerField()
    threshold = serializers.IntegerField(help_text="The job's threshold (used for `cognitive`).")
    gold_sentences_in_scope = serializers.IntegerField()
    thresholds = serializers.DictField(
        child=serializers.DictField(),
        help_text="Per threshold 1..samples, per view (overall, factual, cognitive): word-weighted precision, "
                  "recall, f1 (null without data), correct_words, predicted_words, gold_words.")
    cognitive = serializers.DictField(help_text="Four-way accuracy at the job's threshold and its confusion "
                                                "matrix (rows: gold; columns: predicted).")
