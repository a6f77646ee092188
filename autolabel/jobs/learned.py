"""The learned judge as a pre-labelling job: created like an LLM job, run by the worker without any endpoint.

A job whose labeller is a trained judge (``autolabel.learned``) instead of an endpoint profile is written by
``services.learned_job_create``, beside ``job_create``, with this module's name and estimate for it. ``run_learned``
is its runner, chosen by ``services.job_run`` as the LLM runners are. It reads the job's turns page by page
(``progress.iter_specs``), predicts every sentence's label probabilities, and writes predictions through
``progress.flush`` (lease, counters, cancel) as the LLM runners do. A prediction's label is the judge's one
rule (``learned.decision``); its votes are ``decision.SAMPLES`` votes shared by the probabilities that vote that
label, so the evaluation, the calibration, the comparison of two jobs and the smallest-margin draw read it as an
LLM's samples; its ``confidence`` is the probability of its label.

The job form offers the judge as one of its endpoints (``judge_offer``: the latest judge usable in the project's
protocol version, or why none may label), and its estimate says what such a job sends: nothing (``learned_estimate``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from annotator.access import BLIND_REPORT_MESSAGE
from annotator.models import Sentence
from annotator.projects.protocols import protocol_of_version

from autolabel.evaluation.scores import decision
from autolabel.jobs import selectors
from autolabel.jobs.progress import FLUSH_TURNS, flush, iter_specs
from autolabel.labelling.estimate import Estimate
from autolabel.labelling.pipeline import TurnOutcome
from autolabel.learned.data import job_votes
from autolabel.learned.features import Example
from autolabel.learned.decision import THRESHOLD, judge_decision, votes_for
from autolabel.learned.store import judge_model_load, judge_refusal
from autolabel.models import AutoLabelJob, LearnedJudge

MODEL_NAME = "learned judge"
# How many judges the form looks through for one usable in the current protocol version (the latest first).
OFFER_LOOKBACK = 20


@dataclass(frozen=True)
class JudgeOffer:
    """The learned judge the job form offers: the judge, how the form names it, and why it may not label here
    ("" when it may)."""

    judge: LearnedJudge
    label: str
    refusal: str


def judge_label(judge: LearnedJudge) -> str:
    """"Learned judge (trained <date>, <n> gold sentences, protocol vN)": what a lead chooses it by."""
    trained = judge.finished_at or judge.created_at
    version = f"v{judge.protocol_version.number}" if judge.protocol_version_id else "built-in"
    return (f"Learned judge (trained {trained:%Y-%m-%d %H:%M}, {judge.gold_sentences} gold sentences, "
            f"protocol {version})")


def judge_offer(project, *, blind: bool = False) -> JudgeOffer | None:
    """The judge the job form offers for ``project``: its latest trained judge usable in the project's current
    protocol version; else its latest trained judge with the reason it is refused; None when none was trained.
    ``blind``: the lead holds an unsubmitted slot in the project (a judge learned from all of its gold is refused
    to them, as its page is)."""
    judges = list(LearnedJudge.objects.filter(project=project, status=LearnedJudge.Status.DONE)
                  .select_related("protocol_version")[:OFFER_LOOKBACK])
    if not judges:
        return None
    refusals = [(judge, judge_refusal(judge, project, project.protocol_version_id)) for judge in judges]
    judge, refusal = next(((judge, refusal) for judge, refusal in refusals if not refusal), refusals[0])
    if blind and not refusal:
        refusal = BLIND_REPORT_MESSAGE
    return JudgeOffer(judge, judge_label(judge), refusal)


def learned_estimate(project) -> Estimate:
    """What a learned-judge job over the project's turns sends: nothing (no service, no tokens, no cost); the
    turns and sentences it labels."""
    turns, _ = selectors.job_scope(project)
    count = turns.count()
    return Estimate(turns=count, sentences=Sentence.objects.filter(turn__in=turns).count(), requests=0,
                    prompt_tokens=0, completion_tokens=0, cost=Decimal("0.000000"), seconds=None,
                    counted_turns=count, stage2_upper_bound=False)


def _outcomes(model, protocol, specs, votes_job_id) -> list[TurnOutcome]:
    votes = job_votes(votes_job_id, [spec.turn_id for spec in specs])
    rows = [(spec, sentence_id, Example(text, spec.reference, spec.question, number - 1, len(spec.sentences),
                                        tuple(votes.get(sentence_id, ()))))
            for spec in specs for number, sentence_id, text in spec.sentences]
    outcomes = {spec.turn_id: TurnOutcome(spec) for spec in specs}
    if not rows:
        return list(outcomes.values())
    probabilities = model.predict_proba([example for _, _, example in rows])
    for (spec, sentence_id, _), row in zip(rows, probabilities):
        sample_votes = votes_for(row, model.labels, protocol)  # they vote the rule's label (learned.decision)
        decided = decision(sample_votes, THRESHOLD, protocol)
        family = protocol.family_of(decided.label) if decided.label else None
        outcomes[spec.turn_id].predictions.append({
            "sentence_id": sentence_id, "label": decided.label, "hallucinated": decided.hallucinated,
            "hallucinated_votes": decided.hallucinated_votes, "abstentions": 0,
            "stage1_kind": family.id if family else ("" if decided.label else decided.kind),
            "label_votes": decided.label_votes, "sample_votes": sample_votes,
            "confidence": judge_decision(row, model.labels, protocol).confidence,
        })
    return list(outcomes.values())


def run_learned(job: AutoLabelJob, owner: str) -> bool:
    """Predict the job's turns with its judge. Returns True if the job was cancelled."""
    judge = job.learned_judge
    model = judge_model_load(judge, job.project, job.protocol_version_id)
    protocol = protocol_of_version(job.protocol_version)
    batch = []
    for spec in iter_specs(job):
        batch.append(spec)
        if len(batch) >= FLUSH_TURNS:
            if flush(job, owner, _outcomes(model, protocol, batch, judge.votes_job_id)).cancel_requested:
                return True
            batch = []
    return flush(job, owner, _outcomes(model, protocol, batch, judge.votes_job_id)).cancel_requested
