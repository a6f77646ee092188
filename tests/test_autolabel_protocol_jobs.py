"""Pre-labelling jobs on the example protocols, run by a real Celery worker against the offline baseline
server: the predictions carry the project's own labels, the second request is asked for the steps the
document marks, and the job keeps the protocol version it was created with. Contrastive examples take
labels of the project's protocol only."""

import pytest
from django.core.exceptions import ValidationError

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.projects.protocol_services import protocol_set
from autolabel.jobs import services
from autolabel.models import AutoLabelJob, ContrastiveExample, LLMProfile, Prediction, SampleReply
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.conftest import wait_until
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

REFERENCE = ("The Danube rises in the Black Forest of Germany and flows 2850 kilometres into the Black Sea. "
             "Vienna and Budapest stand on its banks.")
SENTENCES = [
    "The Danube rises in the Black Forest of Germany.",  # supported, factual
    "It was named after a Roman goddess of pearls and silver fish in 1312.",  # unsupported, factual
    "Therefore the Danube is probably the most important trade route in the whole world.",  # reasoning
]


def project_following(shipped):
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    version = protocol_set(project, load_shipped(shipped).document, user=lead)
    project.refresh_from_db()
    dialogue = DialogueFactory(project=project, reference=REFERENCE)
    for _ in range(2):
        TurnFactory(dialogue=dialogue, sentences=SENTENCES, user_message="Tell me about the Danube.")
    return project, version


def job_state(job):
    job.refresh_from_db()
    return job


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
@pytest.mark.slow
def test_a_worker_labels_a_face4rag_and_a_clinical_project_with_their_own_labels(start_celery_worker, baseline_llm):
    profile = LLMProfile.objects.create(name="baseline", base_url=baseline_llm.base_url, api_key_env="",
                                        supports_n=True, concurrency=2, timeout_seconds=10, max_retries=2)
    face4rag, face4rag_version = project_following("face4rag")
    clinical, clinical_version = project_following("cognibench_clinical")
    start_celery_worker(concurrency=1)
    jobs = [services.job_create(project=project, profile=profile, samples=3, threshold=2)
            for project in (face4rag, clinical)]
    for job in jobs:
        wait_until(lambda job=job: job_state(job).status == AutoLabelJob.Status.DONE, timeout=90,
                   message=f"job {job.pk} to finish")
    face4rag_job, clinical_job = (job_state(job) for job in jobs)
    assert (face4rag_job.protocol_version_id, clinical_job.protocol_version_id) == (face4rag_version.pk, clinical_version.pk)
    assert face4rag_job.problems == {} and clinical_job.problems == {} and face4rag_job.abstentions == 0

    def by_index(job):
        return {p.sentence.index: p for p in Prediction.objects.filter(job=job, sentence__turn__dialogue__project=job.project)
                .select_related("sentence").order_by("sentence__turn_id")}

    face = by_index(face4rag_job)
    assert (face[0].label, face[0].hallucinated) == ("consistent", False)
    assert (face[1].label, face[1].hallucinated, face[1].stage1_kind) == ("hallucination", True, "hallucination_error")
    # The reasoning sentence went on to the second request (the fallacy step), and every label there is an error.
    assert face[2].hallucinated and face[2].stage1_kind == "logical_fallacy"
    assert face[2].label in {"overgeneralization", "causal_confusion", "condition_confusion", "inclusion", ""}
    assert SampleReply.objects.filter(job=face4rag_job, stage=2).exists()
    assert SampleReply.objects.filter(job=face4rag_job, stage=1).first().votes["2"] == "no hallucination"

    clinic = by_index(clinical_job)
    assert (clinic[0].label, clinic[0].stage1_kind) == ("faithful", "factual")
    assert clinic[1].hallucinated and clinic[1].label in {"invented", "harmful"}
    assert clinic[2].stage1_kind == "cognitive" and clinic[2].label in {"misleading", "speculative"}
    labels = set(Prediction.objects.filter(job__in=jobs).values_list("label", flat=True)) - {""}
    assert labels <= set(load_shipped("face4rag").labels) | set(load_shipped("cognibench_clinical").labels)


@pytest.mark.django_db
def test_a_job_keeps_the_protocol_version_it_was_created_with():
    project, version = project_following("face4rag")
    profile = LLMProfile.objects.create(name="nowhere", base_url="http://127.0.0.1:9/v1")
    job = services.job_create(project=project, profile=profile, samples=1, threshold=1, enqueue=False)
    protocol_set(project, load_shipped("cognibench_clinical").document)  # the project moves on
    job = AutoLabelJob.objects.get(pk=job.pk)
    assert job.protocol_version_id == version.pk and services.job_protocol(job).id == "face4rag"
    builtin = ProjectFactory()
    TurnFactory(dialogue=DialogueFactory(project=builtin), sentences=["A."])
    job = services.job_create(project=builtin, profile=profile, samples=1, threshold=1, enqueue=False)
    assert job.protocol_version is None and services.job_protocol(job).id == "cognibench"


@pytest.mark.django_db
def test_contrastive_example_labels_are_checked_against_the_projects_protocol():
    project, _ = project_following("face4rag")
    sentence = project.dialogues.first().turns.first().sentences.first()
    example = ContrastiveExample(project=project, sentence=sentence, wrong_label="invented", right_label="conflation")
    with pytest.raises(ValidationError) as refused:
        example.full_clean()
    assert list(refused.value.message_dict) == ["wrong_label"]
    assert "'invented' is not a label of the project's protocol" in refused.value.message_dict["wrong_label"][0]
    example.wrong_label = "consistent"
    example.full_clean()


@pytest.mark.django_db
def test_batch_mode_on_face4rag_asks_the_second_request_and_agrees_with_real_time(profile, baseline_llm, monkeypatch):
    from autolabel.jobs import batch

    monkeypatch.setattr(batch, "BATCH_POLL_SECONDS", 0.05)
    project, _ = project_following("face4rag")
    by_batch = services.job_create(project=project, profile=profile, samples=3, threshold=2, batch_mode=True, enqueue=False)
    assert services.job_run(by_batch.pk) == AutoLabelJob.Status.DONE
    assert baseline_llm.stats()["batches"] == 2  # the reasoning sentences entered the fallacy step
    live = services.job_create(project=project, profile=profile, samples=3, threshold=2, enqueue=False)
    services.job_run(live.pk)
    labels = {job.pk: dict(Prediction.objects.filter(job=job).values_list("sentence_id", "label")) for job in (by_batch, live)}
    assert labels[by_batch.pk] == labels[live.pk]
    assert {"consistent", "hallucination"} <= set(labels[live.pk].values())
