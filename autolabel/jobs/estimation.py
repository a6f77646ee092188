"""A job's estimate before it starts, from the real prompts the pipeline would send (labelling/estimate.py).

Read-only and sends nothing: the job form (htmx), the API, ``manage.py autolabel --estimate`` and
``job_create`` (which records it on the job, shown beside what the API reported after the run) call
``estimate_for``. The prompts of up to ``COUNTED_TURNS`` turns are built exactly as the runner builds them
(template, protocol, contrastive examples, language); a larger job is scaled from them by its sentence count,
counted in full.
"""

from __future__ import annotations

from annotator.domain.languages import language_name, text_language
from annotator.models import Sentence
from annotator.projects.protocols import protocol_of_version

from autolabel.jobs import selectors
from autolabel.labelling import estimate as estimator
from autolabel.labelling import kind_replies
from autolabel.labelling import prompting
from autolabel.labelling.pipeline import JobConfig, TurnSpec, plan_requests
from autolabel.labelling.stages import stages_of
from autolabel.models import PromptVersion

COUNTED_TURNS = 300


def _prompt_version(project, prompt_version):
    if prompt_version is not None:
        return prompt_version
    latest = PromptVersion.objects.filter(project=project).order_by("-version").first()
    return latest  # None: the default wording (a job would create version 1 with it)


def _specs(project, turns):
    rows = list(turns.order_by("pk").select_related("dialogue")[:COUNTED_TURNS])
    sentences: dict[int, list] = {}
    for sid, turn_id, index, text in (
        Sentence.objects.filter(turn_id__in=[t.pk for t in rows]).order_by("turn_id", "index")
        .values_list("pk", "turn_id", "index", "text")
    ):
        sentences.setdefault(turn_id, []).append((index + 1, sid, text))
    for turn in rows:
        yield TurnSpec(job_turn_id=0, turn_id=turn.pk, reference=turn.dialogue.reference,
                       question=turn.user_message, sentences=sentences.get(turn.pk, []),
                       language=language_name(text_language(turn.dialogue.language, project.default_language)))


def estimate_for(project, profile, *, turns=None, samples=5, use_n=True, batch_mode=False,
                 prompt_version=None) -> estimator.Estimate:
    """The estimate of a job on ``turns`` (default: every turn outside the qualification set) through
    ``profile``, as ``job_create`` would make it."""
    if turns is None:
        turns, _ = selectors.job_scope(project)
    version = _prompt_version(project, prompt_version)
    protocol = protocol_of_version(project.protocol_version)
    stages = stages_of(protocol)
    use_n = use_n and profile.supports_n
    config = JobConfig(samples, 1, use_n, version.stage1_template if version else prompting.DEFAULT_STAGE1_TEMPLATE,
                       version.stage2_template if version else prompting.DEFAULT_STAGE2_TEMPLATE,
                       selectors.prompt_examples(selectors.active_example_ids(project)), protocol=protocol)
    prompts = []
    for spec in _specs(project, turns):
        plans = plan_requests(spec, config, prompting.STAGE_1)
        stage1 = plans[0][2] if plans else []
        stage2 = None
        if stages.two_stage and spec.sentences:
            stage2 = prompting.build_messages(
                prompting.STAGE_2, config.stage2_template, spec.reference, spec.question,
                [(number, text) for number, _, text in spec.sentences], config.examples, language=spec.language,
                protocol=protocol)
        prompts.append(estimator.TurnPrompts(spec.numbers, stage1, stage2))
    endpoint = estimator.Endpoint(
        samples=samples, use_n=use_n, concurrency=profile.concurrency,
        input_price_per_million=profile.input_price_per_million,
        output_price_per_million=profile.output_price_per_million, latency_seconds=profile.latency_seconds,
        batch=batch_mode,
        # The longest reply as the format block's example writes it (with the values of non-choice steps).
        stage1_tag=max((prompting.example_tag(stages, reply) for reply in stages.replies), key=len, default=""),
        stage2_tag=max((kind_replies.stage2_example(protocol, reply) for reply in stages.stage_two_replies),
                       key=len, default=""),
    )
    total_turns = turns.count()
    total_sentences = Sentence.objects.filter(turn__in=turns).count() if total_turns > len(prompts) else None
    return estimator.estimate(prompts, endpoint, total_turns=total_turns, total_sentences=total_sentences)
