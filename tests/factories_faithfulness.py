"""A finished pre-labelling job built straight in the database, for the faithfulness report's tests."""

from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import HALLUCINATED_LABELS, DrawStrategy, GoldProvenance
from annotator.models import DrawnTurn, GoldLabel, TurnDraw
from autolabel.models import AutoLabelJob, JobTurn, LLMProfile, Prediction, PromptVersion
from tests.factories import DialogueFactory, TurnFactory


def finished_job(project, turns):
    """``turns``: a list of (generator model, [(predicted label, gold label or None), ...]), one per turn.

    Returns (job, [turn, ...]). A predicted label may also be a dict of the prediction's fields (a vote
    without a label: ``{"label": "", "hallucinated": True, "stage1_kind": "factual"}``).
    """
    profile, _ = LLMProfile.objects.get_or_create(name="faithfulness-test", defaults={"base_url": "http://127.0.0.1:9/v1"})
    prompt, _ = PromptVersion.objects.get_or_create(project=project, version=1)
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, model="judge",
                                      status=AutoLabelJob.Status.DONE, total_turns=len(turns), done_turns=len(turns))
    created = []
    for model, sentences in turns:
        dialogue = DialogueFactory(project=project, generator_model=model)
        turn = TurnFactory(dialogue=dialogue, sentences=[f"Sentence {n}." for n in range(len(sentences))])
        JobTurn.objects.create(job=job, turn=turn, done=True)
        for sentence, (predicted, gold) in zip(turn.sentences.order_by("index"), sentences):
            fields = predicted if isinstance(predicted, dict) else {
                "label": predicted, "hallucinated": predicted in HALLUCINATED_LABELS}
            Prediction.objects.create(job=job, sentence=sentence, **fields)
            if gold:
                GoldLabel.objects.create(sentence=sentence, label=gold, path=path_for_label(gold),
                                         provenance=GoldProvenance.AGREEMENT)
        created.append(turn)
    return job, created


def draw(job, turns, strategy=DrawStrategy.RANDOM, source_job_id=None):
    """A recorded draw of ``turns`` from ``job`` (as the draw action records it)."""
    record = TurnDraw.objects.create(project=job.project, strategy=strategy, size=len(turns), seed=1,
                                     source_job_id=job.pk if source_job_id is None else source_job_id)
    DrawnTurn.objects.bulk_create(DrawnTurn(draw=record, turn=turn, position=n) for n, turn in enumerate(turns))
    return record
