"""Writes on an assignment (shape only; the annotation services decide what is allowed) and their result."""

from rest_framework import serializers


from annotator.domain.protocol.document import ProtocolError
from annotator.domain.protocol.kinds import CHOICE, parse_value

from .common import MAX_ID, ProtocolValueField, StepAnswerField
from .work import AssignmentSerializer, SentenceAnnotationSerializer


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
    step = ProtocolValueField("step")
    answer = StepAnswerField()

    def validate(self, data):
        """A choice step's answer is one of the protocol's answers (as before step kinds); another kind's value is
        checked against its step (a 400 naming it)."""
        protocol = self.context.get("protocol")
        if protocol is None or data["step"] not in protocol.steps:
            return data
        step = protocol.step(data["step"])
        if step.kind == CHOICE:
            if not isinstance(data["answer"], str) or len(data["answer"]) > 40:
                raise serializers.ValidationError({"answer": [f"step {step.id!r} takes one of its answers: "
                                                              f"{', '.join(step.values)}."]})
            checked = ProtocolValueField("answer")  # the check and the message of a choice answer before kinds
            checked.bind("answer", self)
            try:
                checked.run_validation(data["answer"])
            except serializers.ValidationError as error:
                raise serializers.ValidationError({"answer": error.detail}) from None
            return data
        try:
            data["answer"] = parse_value(step, data["answer"])
        except ProtocolError as error:
            raise serializers.ValidationError({"answer": [str(error)]}) from None
        return data


class PickLabelSerializer(_SentenceActionSerializer):
    label = ProtocolValueField("label")


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
    next_step = serializers.CharField(
        allow_null=True,
        help_text="The step of the project's protocol to ask next for this sentence (project-defined, "
                  "GET /api/v1/projects/{slug}/protocol/); null when it has a label.",
    )
    replayed = serializers.BooleanField(help_text="True when the request id was seen before: nothing changed.")
