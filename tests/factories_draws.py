"""Helpers of the draw tests: a finished pre-labelling job whose votes are chosen by the test."""

from django.utils import timezone

from autolabel.models import AutoLabelJob, JobTurn, LLMProfile, Prediction, PromptVersion


def finished_job(project, turn_votes, *, samples=5, status=AutoLabelJob.Status.DONE):
    """A job of ``project`` with predictions: ``turn_votes`` maps each turn to one ``label_votes`` dict per
    sentence (in sentence order), or to one dict used for every sentence."""
    profile, _ = LLMProfile.objects.get_or_create(name="draws-test", defaults={"base_url": "http://127.0.0.1:1/v1"})
    prompt, _ = PromptVersion.objects.get_or_create(project=project, version=1)
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, samples=samples,
                                      status=status, total_turns=len(turn_votes),
                                      finished_at=timezone.now() if status in AutoLabelJob.FINISHED else None)
    for turn, votes in turn_votes.items():
        JobTurn.objects.create(job=job, turn=turn, done=True)
        sentences = list(turn.sentences.order_by("index"))
        per_sentence = votes if isinstance(votes, list) else [votes] * len(sentences)
        for sentence, label_votes in zip(sentences, per_sentence):
            label = max(label_votes, key=label_votes.get) if label_votes else ""
            Prediction.objects.create(job=job, sentence=sentence, label=label, label_votes=label_votes,
                                      hallucinated=label in ("invented", "misleading", "speculative"))
    return job


SURE = {"faithful": 5}
