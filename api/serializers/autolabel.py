"""Automatic labelling: a job's evaluation against gold."""

from rest_framework import serializers


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
