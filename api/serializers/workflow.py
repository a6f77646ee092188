"""Writes on an assignment (shape only; the annotation services decide what is allowed) and their result."""

from rest_framework import serializers


from annotator.domain.step_kinds import CHOICE

from .common import MAX_ID, PathValueField, ProtocolValueField
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
    answer = PathValueField(help_text=(
        "The step's value, by the step's kind: a choice's answer (project-defined: one of the answers of the "
        "project's protocol, GET /api/v1/projects/{slug}/protocol/), a multiple step's answers (an array, in any "
        "order), a scale's point (an integer) or a text step's text."))

    def validate(self, data):
        """A choice step's answer is one the protocol has (a 400 naming them, as before step kinds); another kind's
        value is checked against its step by the protocol when it is answered."""
        protocol = self.context.get("protocol")
        if protocol is not None and protocol.step_kind(data["step"]) == CHOICE:
            known = tuple(dict.fromkeys(v for step in protocol.steps for v in protocol.answers(step)))
            if not isinstance(data["answer"], str) or data["answer"] not in known:
                raise serializers.ValidationError({"answer": [
                    f"{data['answer']!r} is not a answer of this project's protocol: one of {', '.join(known)}."]})
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
