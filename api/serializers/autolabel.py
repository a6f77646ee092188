"""Automatic labelling: a job's evaluation against gold."""

from rest_framework import serializers


class JobEvaluationSerializer(serializers.Serializer):
    """The evaluation page's numbers (``autolabel.evaluation.selectors.job_evaluation``)."""

    job = serializers.IntegerField()
    model = serializers.CharField()
    prompt_version = serializers.IntegerField()
    sentences = serializers.IntegerField(help_text="Predicted sentences that have gold.")
    words = serializers.IntegerField()
    samples = serializers.IntegerField()
    threshold = serializers.IntegerField(help_text="The job's threshold (used for the confusion matrices).")
    gold_sentences_in_scope = serializers.IntegerField()
    thresholds = serializers.DictField(
        child=serializers.DictField(),
        help_text="Per threshold 1..samples, per evaluation view of the project's protocol (ids project-defined; "
                  "CogniBench: any_hallucination, pooled over all hallucinated words, and one view per family): "
                  "word-weighted precision, recall, f1 (null when undefined; 0 when nothing is predicted of what "
                  "there is), correct_words, predicted_words, gold_words; the macro (CogniBench: "
                  "cognibench_overall): f1 = mean of its views' unrounded F1 and <view>_f1 of each (CogniBench "
                  "Table 3 'Overall'); overall: the pooled view (every hallucination label, over every label), "
                  "derived from the protocol's hallucination group when no view is it, on any protocol (it is not "
                  "CogniBench's Overall). F1 = 2 correct / (predicted + gold) from the counts, rounded once.")
    baselines = serializers.DictField(
        child=serializers.DictField(),
        help_text="flag_every_sentence and flag_none, with the same views as a threshold (flag none: F1 0).")
    kind_steps = serializers.ListField(
        child=serializers.DictField(), required=False,
        help_text="Only for a protocol with steps of another kind than choice: per such step (step, question, kind, "
                  "metric, pairs), a multiple step's per-answer precision/recall/f1 and micro average, a scale's mae "
                  "and quadratic-weighted kappa, a text step's counts (not scored).")
    calibration = serializers.DictField(
        help_text="At the job's threshold, for binary (the protocol's hallucination group or not) and label "
                  "(n-way, over the protocol's labels): n, bins (10 "
                  "equal-width: low, high, count, correct, confidence, accuracy), ece, brier, accuracy, "
                  "mean_confidence; abstained: sentences where every sample abstained.")
    rater = serializers.DictField(
        help_text="The pre-labeler as a rater: annotators (usernames), sentences, and per variable (label and each "
                  "protocol step) kappa_gold, kappa_annotators, alpha_humans, alpha_with_prelabeler, each with n.")
    comparison = serializers.DictField(
        required=False,
        help_text="With ?compare=: a and b (job ids), turns, sentences, words, only_a, only_b, resamples, seed, and per "
                  "view f1 and 95 % ci of a and b, and difference (b - a) with its ci and share_b_better.")
    views = serializers.ListField(child=serializers.DictField(), help_text="The protocol's evaluation views, in order: "
                                  "id and name (project-defined, from the protocol's document), and scope: the gold "
                                  "labels the view counts when narrower than every label, else null.")
    macro = serializers.DictField(allow_null=True, help_text="The protocol's macro: id, name and the views it "
                                  "averages (null when the protocol has none).")
    protocol = serializers.DictField(help_text="The protocol the figures were computed under: id, version, name.")
    confusion = serializers.DictField(
        child=serializers.DictField(),
        help_text="Per family of the protocol (by its project-defined id): family, name, accuracy at the job's "
                  "threshold over the sentences whose gold is in the family, accuracy_when_<family id> (among those "
                  "predicted in it), total, correct, rows (its labels), columns (its labels, 'not <family>', "
                  "'no label') and matrix (rows: gold; columns: predicted).")
    cognitive = serializers.DictField(required=False, help_text="The confusion of the family whose id is this "
                                      "key, under CogniBench's protocol (as in `confusion`; every family is also at "
                                      "the top level under its id unless the id is one of this report's own keys).")
