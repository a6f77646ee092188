"""Pages and admin of the auto-labeller, through the test client."""

import pytest
from django.urls import reverse

from annotator.models import Turn
from annotator.domain.vocabulary import Role
from autolabel.labelling import pipeline
from autolabel.jobs import progress
from autolabel.jobs import selectors
from autolabel.jobs import services
from autolabel.models import AutoLabelJob, ContrastiveExample, LLMProfile, Prediction, PromptVersion
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import ProjectFactory, UserFactory, member
from tests.factories_autolabel import DANUBE_TURN, gold_turn, plain_turns

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_job(profile):
    project = ProjectFactory()
    turn = gold_turn(project)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    services.job_run(job.pk)
    job.refresh_from_db()
    return project, turn, job


def test_lead_starts_a_job_from_the_project_page(client, profile):
    project = ProjectFactory()
    plain_turns(project, 2)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    assert "Auto-label" in client.get(reverse("project_detail", args=[project.slug])).content.decode()
    url = reverse("autolabel:job_list", args=[project.slug])
    page = client.get(url)
    assert page.status_code == 200 and "Start auto-label job" in page.content.decode()
    bad = client.post(url, {"profile": profile.pk, "samples": 3, "threshold": 4, "use_n": "on"})
    assert "cannot exceed" in bad.content.decode() and not AutoLabelJob.objects.exists()
    response = client.post(url, {"profile": profile.pk, "samples": 5, "threshold": 3, "use_n": "on"})
    job = AutoLabelJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("autolabel:job_detail", args=[project.slug, job.pk])
    assert (job.total_turns, job.samples, job.threshold, job.created_by) == (2, 5, 3, lead)


def test_annotators_and_strangers_cannot_see_jobs(client, finished_job):
    project, turn, job = finished_job
    client.force_login(member(project, Role.ANNOTATOR))
    for url in [reverse("autolabel:job_list", args=[project.slug]),
                reverse("autolabel:job_detail", args=[project.slug, job.pk]),
                reverse("autolabel:job_evaluation", args=[project.slug, job.pk]),
                reverse("autolabel:turn_predictions", args=[project.slug, turn.pk])]:
        assert client.get(url).status_code == 404
    assert client.post(reverse("autolabel:job_cancel", args=[project.slug, job.pk])).status_code == 404
    assert "Auto-label" not in client.get(reverse("project_detail", args=[project.slug])).content.decode()


def test_job_page_shows_progress_counters_and_predictions(client, finished_job):
    project, turn, job = finished_job
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    assert "1</strong> of 1 turns" in page and "Done" in page
    assert "The river was named after a Roman goddess" in page and "chip-invented" in page
    assert "Evaluation against gold" in page and "?partial=progress" not in page  # finished: no more polling
    assert "Cost <small class=\"muted\">in the currency of the endpoint's prices</small>" in page  # issue 50, 6
    listed = client.get(reverse("autolabel:job_list", args=[project.slug])).content.decode()
    assert "Cost <small class=\"muted\">(the endpoints' currency)</small>" in listed
    partial = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk]) + "?partial=progress",
                         HTTP_HX_REQUEST="true").content.decode()
    assert partial.strip().startswith('<section id="job-progress"')


def test_running_job_polls_and_can_be_cancelled(client, profile):
    project = ProjectFactory()
    plain_turns(project, 1)
    job = services.job_create(project=project, profile=profile, enqueue=False)
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in page and "Cancel job" in page
    response = client.post(reverse("autolabel:job_cancel", args=[project.slug, job.pk]), HTTP_HX_REQUEST="true")
    assert "Cancelled" in response.content.decode()
    job.refresh_from_db()
    assert job.status == "cancelled"


def test_evaluation_page(client, finished_job):
    project, _, job = finished_job
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk])).content.decode()
    assert "Hallucination detection by threshold" in page and "≥ 3 (job)" in page
    assert "4-way accuracy" in page and "Speculative" in page


def test_turn_predictions_partial_and_annotator_selector(client, finished_job):
    project, turn, job = finished_job
    client.force_login(member(project, Role.LEAD))
    partial = client.get(reverse("autolabel:turn_predictions", args=[project.slug, turn.pk])).content.decode()
    assert "LLM pre-labels" in partial and "Roman goddess" in partial and f"Job #{job.pk}" in partial
    # Annotators see pre-labels only when the project shows them (off by default, against anchoring).
    assert project.show_prelabels is False
    assert selectors.predictions_for_annotator(project, turn) == []
    project.show_prelabels = True
    project.save()
    assert len(selectors.predictions_for_annotator(project, turn)) == 5
    # Not for a turn of another project.
    other = ProjectFactory(show_prelabels=True)
    assert selectors.predictions_for_annotator(other, turn) == []
    # Exports read the latest finished job's prediction of each sentence.
    latest = selectors.latest_predictions_by_sentence(project)
    assert set(latest) == set(turn.sentences.values_list("pk", flat=True))
    assert {p.job_id for p in latest.values()} == {job.pk}


def test_imported_text_is_escaped_on_pages(client, profile):
    project = ProjectFactory()
    turn = gold_turn(project, sentences=[("<script>alert(1)</script> The Danube flows into the Black Sea.", "faithful")])
    job = services.job_create(project=project, profile=profile, samples=1, threshold=1, enqueue=False)
    services.job_run(job.pk)
    client.force_login(member(project, Role.LEAD))
    for url in [reverse("autolabel:job_detail", args=[project.slug, job.pk]),
                reverse("autolabel:turn_predictions", args=[project.slug, turn.pk])]:
        page = client.get(url).content.decode()
        assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page


def test_admin_action_on_turns_starts_a_job_on_exactly_those_turns(admin_client, profile):
    project = ProjectFactory()
    turns = plain_turns(project, 3)
    changelist = reverse("admin:annotator_turn_changelist")
    response = admin_client.post(changelist, {"action": "autolabel_selected", "_selected_action": [turns[0].pk, turns[2].pk]})
    assert response.status_code == 302
    start = admin_client.get(response["Location"]).content.decode()
    assert "2 selected turn(s)" in start
    response = admin_client.post(response["Location"], {"project": project.pk, "profile": profile.pk, "samples": 3,
                                                        "threshold": 2, "use_n": "on"})
    assert response.status_code == 302
    job = AutoLabelJob.objects.get()
    assert sorted(job.job_turns.values_list("turn_id", flat=True)) == [turns[0].pk, turns[2].pk]
    listing = admin_client.get(reverse("admin:autolabel_autolabeljob_changelist")).content.decode()
    assert "admin-progress" in listing and "hx-get" in listing and "htmx.min.js" in listing


def test_admin_action_refuses_turns_of_two_projects(admin_client):
    first, second = plain_turns(ProjectFactory(), 1)[0], plain_turns(ProjectFactory(), 1)[0]
    response = admin_client.post(reverse("admin:annotator_turn_changelist"),
                                 {"action": "autolabel_selected", "_selected_action": [first.pk, second.pk]}, follow=True)
    assert "exactly one project" in response.content.decode()


def test_admin_action_refuses_two_projects_however_many_turns_the_first_has(admin_client):
    """Issue 26, item 8: with several turns of one project ticked, a second project's turn went unseen until the
    start page refused the job. The refusal comes at once, naming the projects, before any page."""
    first_project, second_project = ProjectFactory(name="Alpha"), ProjectFactory(name="Beta")
    turns = plain_turns(first_project, 3) + plain_turns(second_project, 1)
    response = admin_client.post(reverse("admin:annotator_turn_changelist"),
                                 {"action": "autolabel_selected", "_selected_action": [t.pk for t in turns]})
    assert response.status_code == 302 and "job_start" not in response["Location"]
    page = admin_client.get(response["Location"]).content.decode()
    assert "turns of several projects (Alpha, Beta)" in page


def test_admin_start_form_on_a_project(admin_client, profile):
    project = ProjectFactory()
    plain_turns(project, 2)
    url = reverse("admin:autolabel_job_start")
    assert "Continue" in admin_client.get(url).content.decode()
    form = admin_client.get(url, {"project": project.pk}).content.decode()
    assert "Every non-qualification turn" in form
    admin_client.post(url, {"project": project.pk, "profile": profile.pk, "samples": 5, "threshold": 3})
    assert AutoLabelJob.objects.get().total_turns == 2


def test_api_key_is_never_stored_nor_shown(admin_client, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "sk-very-secret-value")
    profile = LLMProfile.objects.create(name="openai", base_url="https://api.example.org/v1", api_key_env="MY_LLM_KEY")
    page = admin_client.get(reverse("admin:autolabel_llmprofile_change", args=[profile.pk])).content.decode()
    assert "sk-very-secret-value" not in page and "MY_LLM_KEY" in page
    assert not any("secret" in str(getattr(profile, f.attname)) for f in LLMProfile._meta.concrete_fields)


def test_contrastive_candidates_become_examples_in_the_next_prompt(admin_client, profile):
    # A sentence no lexical rule gets right (a judgement the gold finds unequivocal, few of its words in the
    # reference): the baseline's miss the lead turns into an example.
    project = ProjectFactory()
    gold_turn(project, sentences=[*DANUBE_TURN, ("It is widely regarded as a symbol of Central Europe.", "unequivocal")])
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    services.job_run(job.pk)
    wrong = [p for p in Prediction.objects.filter(job=job).select_related("sentence__gold") if p.label != p.sentence.gold.label]
    assert wrong, "the baseline gets at least one Danube sentence wrong"
    url = reverse("admin:autolabel_contrastive_candidates")
    page = admin_client.get(url, {"project": project.pk}).content.decode()
    assert wrong[0].sentence.text in page
    response = admin_client.post(url, {"project": project.pk, "job": job.pk, "sentence": wrong[0].sentence_id})
    example = ContrastiveExample.objects.get()
    assert response.status_code == 302
    assert (example.wrong_label, example.right_label, example.source_job) == (wrong[0].label, wrong[0].sentence.gold.label, job)
    # Once an example, no longer a candidate; and the next job's prompt shows it.
    assert wrong[0].sentence.text not in admin_client.get(url, {"project": project.pk}).content.decode()
    example.explanation = "The reference never says where the name comes from."
    example.save()
    next_job = services.job_create(project=project, profile=profile, enqueue=False)
    config = services._job_config(next_job)
    assert [e.explanation for e in config.examples] == [example.explanation]
    spec = next(progress.iter_specs(next_job))
    stage1 = pipeline._messages(spec, config, 1, spec.numbers)[1]["content"]
    assert "The reference never says where the name comes from." in stage1 and wrong[0].sentence.text in stage1
    if example.right_label in {"misleading", "speculative", "reliable", "unequivocal"}:
        stage2 = pipeline._messages(spec, config, 2, spec.numbers)[1]["content"]
        assert f"Wrong: {example.wrong_label}" in stage2 and f"Right: {example.right_label}" in stage2


def test_prompt_versions_are_numbered_and_frozen_once_used(admin_client, finished_job):
    project, _, job = finished_job
    used = job.prompt_version
    change = admin_client.get(reverse("admin:autolabel_promptversion_change", args=[used.pk])).content.decode()
    assert 'name="stage1_template"' not in change  # read-only: it produced predictions
    admin_client.post(reverse("admin:autolabel_promptversion_add"), {
        "project": project.pk, "stage1_template": "Judge carefully. {{sentences}}", "stage2_template": "Classify. {{sentences}}",
        "notes": "shorter",
    })
    newest = PromptVersion.objects.filter(project=project).order_by("-version").first()
    assert newest.version == used.version + 1 and services.prompt_version_current(project) == newest


def test_staff_only_admin(client):
    client.force_login(UserFactory())
    assert client.get(reverse("admin:autolabel_job_start")).status_code == 302
    assert Turn.objects.count() == 0


def test_lead_turn_page_and_gold_export_carry_the_predictions(client, finished_job):
    import json

    from annotator.corpus.exports.exporters.jsonl import jsonl_lines

    project, turn, job = finished_job
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("turn_detail", args=[project.slug, turn.pk])).content.decode()
    partial_url = reverse("autolabel:turn_predictions", args=[project.slug, turn.pk])
    assert partial_url in page  # the turn page loads the pre-labels partial
    partial = client.get(partial_url, HTTP_HX_REQUEST="true").content.decode()
    assert f"Job #{job.pk}" in partial
    predictions = {p.sentence.index: p for p in Prediction.objects.filter(job=job).select_related("sentence")}
    exported = json.loads(next(iter(jsonl_lines(project))))
    assert predictions, "the baseline job labelled nothing"
    for sentence in exported["sentences"]:
        expected = predictions[sentence["index"]]
        assert sentence["prediction"]["label"] == expected.label
        assert sentence["prediction"]["hallucinated_votes"] == expected.hallucinated_votes
        assert sentence["prediction"]["job"] == job.pk


def test_annotators_get_no_predictions_partial(client, finished_job):
    project, turn, _ = finished_job
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.get(reverse("autolabel:turn_predictions", args=[project.slug, turn.pk])).status_code == 404


def test_a_staff_lead_starting_a_job_in_the_admin_lands_on_the_jobs_page_with_the_profile_chosen(client, profile):
    """Before, the job ran but the staff lead landed on a bare 403 (the admin's job list is not theirs to see)."""
    project = ProjectFactory()
    plain_turns(project, 2)
    lead = member(project, Role.LEAD)
    lead.is_staff = True
    lead.save(update_fields=["is_staff"])
    client.force_login(lead)
    url = reverse("admin:autolabel_job_start")
    LLMProfile.objects.exclude(pk=profile.pk).delete()  # the migration's default profile: one profile left
    form = client.get(url, {"project": project.pk}).content.decode()
    assert f'<option value="{profile.pk}" selected>' in form  # the only profile there is, preselected
    response = client.post(url, {"project": project.pk, "profile": profile.pk, "samples": 5, "threshold": 3},
                           follow=True)
    job = AutoLabelJob.objects.get()
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == reverse("autolabel:job_detail", args=[project.slug, job.pk])
    assert f"Job {job.pk} queued" in response.content.decode()
    other = LLMProfile.objects.create(name="another endpoint", base_url="http://127.0.0.1:9/v1")
    form = client.get(url, {"project": project.pk}).content.decode()
    assert f'<option value="{profile.pk}" selected>' in form and f'<option value="{other.pk}">' in form  # the last used


@pytest.mark.parametrize("shipped", ["face4rag", "cognibench_clinical"])
def test_a_job_on_an_example_protocol_is_started_on_the_page_and_the_api_with_that_protocol(client, db, shipped):
    """The pre-labeler prompts, parses and votes with the project's protocol (it refused any but CogniBench's
    before): a job starts on the page and through the API, and records the protocol version it labels with."""
    from annotator.domain.protocol.document import load_shipped
    from annotator.projects.protocol_services import protocol_set
    from autolabel.jobs.services import job_protocol
    from tests.factories_api import token_client

    profile = LLMProfile.objects.create(name="nowhere", base_url="http://127.0.0.1:9/v1", default_model="m")
    project = ProjectFactory()
    plain_turns(project, 2)
    lead = member(project, Role.LEAD)
    version = protocol_set(project, load_shipped(shipped).document, user=lead)
    client.force_login(lead)
    page = client.post(reverse("autolabel:job_list", args=[project.slug]),
                       {"profile": profile.pk, "samples": 5, "threshold": 3, "use_n": "on"}, follow=True)
    assert page.status_code == 200
    api = token_client(lead).post(f"/api/v1/projects/{project.slug}/autolabel-jobs/",
                                  {"profile": "nowhere", "samples": 5, "threshold": 3}, format="json")
    assert api.status_code in (201, 202), api.content
    jobs = list(AutoLabelJob.objects.order_by("pk"))
    assert len(jobs) == 2 and all(job.protocol_version_id == version.pk for job in jobs)
    assert job_protocol(jobs[0]).id == shipped and jobs[0].parameters["protocol"]["id"] == shipped
