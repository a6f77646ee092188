"""The estimate before a job starts: the pure estimator (labelling/estimate.py), and ``manage.py autolabel
--estimate`` counting the real prompts of the pipeline with no endpoint running (issue 40, item 3)."""

import socket
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.projects.protocols import protocol_for
from autolabel.labelling import estimate as e
from autolabel.labelling import prompting
from autolabel.labelling.stages import stages_of
from autolabel.models import AutoLabelJob, LLMProfile
from tests.factories import ProjectFactory
from tests.factories_autolabel import DANUBE_TURN, gold_turn

MESSAGES = [{"role": "system", "content": "x" * 8}, {"role": "user", "content": "y" * 40}]


def endpoint(**kwargs):
    values = {"samples": 5, "use_n": True, "concurrency": 4, "stage1_tag": "abcd", "stage2_tag": "ab"}
    return e.Endpoint(**{**values, **kwargs})


def test_tokens_are_four_characters_each_and_one_a_character_in_chinese():
    assert e.text_tokens("") == 0
    assert e.text_tokens("abcd") == 1 and e.text_tokens("abcde") == 2
    assert e.text_tokens("多瑙河") == 3 and e.text_tokens("多瑙河 flows") == 3 + 2
    # 4 framing tokens a message, 3 to prime the reply: 3 + (4 + 2) + (4 + 10)
    assert e.message_tokens(MESSAGES) == 23
    # "<s1>abcd</s1>\n<s2>abcd</s2>\n": 28 characters
    assert e.reply_tokens([1, 2], "abcd") == 7


def test_with_n_the_prompt_is_billed_once_per_stage_and_without_n_once_per_sample():
    turn = e.TurnPrompts([1, 2], MESSAGES, MESSAGES)
    with_n = e.estimate([turn], endpoint())
    assert (with_n.turns, with_n.sentences, with_n.requests) == (1, 2, 2)
    assert with_n.prompt_tokens == 2 * 23
    # Stage 1 replies: 5 samples x 7 tokens; stage 2 ("<s1>ab</s1>\n<s2>ab</s2>\n", 24 characters): 5 x 6.
    assert with_n.completion_tokens == 35 + 30
    without_n = e.estimate([turn], endpoint(use_n=False))
    assert without_n.requests == 10 and without_n.prompt_tokens == 10 * 23
    assert without_n.completion_tokens == with_n.completion_tokens
    assert with_n.stage2_upper_bound


def test_a_protocol_without_a_second_stage_sends_one_request_per_turn():
    one_stage = e.estimate([e.TurnPrompts([1], MESSAGES, None)] * 3, endpoint())
    assert one_stage.requests == 3 and not one_stage.stage2_upper_bound


def test_cost_at_the_prices_per_million_half_in_batch_and_time_at_latency_and_concurrency():
    turns = [e.TurnPrompts([1, 2], MESSAGES, None)] * 10
    priced = e.estimate(turns, endpoint(input_price_per_million=Decimal("2.5"), output_price_per_million=10,
                                        latency_seconds=1.5, concurrency=4))
    assert priced.prompt_tokens == 230 and priced.completion_tokens == 350
    assert priced.cost == Decimal("0.004075")  # (230 x 2.5 + 350 x 10) / 1e6
    assert priced.seconds == 3 * 1.5  # 10 requests, 4 at once: 3 rounds
    batch = e.estimate(turns, endpoint(input_price_per_million=Decimal("2.5"), output_price_per_million=10,
                                       latency_seconds=1.5, batch=True))
    assert batch.cost == Decimal("0.002038") and batch.seconds is None
    assert e.estimate(turns, endpoint()).seconds is None  # latency never measured


def test_a_sample_of_turns_is_scaled_to_the_job_by_sentences():
    sample = e.estimate([e.TurnPrompts([1, 2], MESSAGES, None)] * 2, endpoint(),
                        total_turns=100, total_sentences=400)
    assert (sample.turns, sample.sentences, sample.counted_turns) == (100, 400, 2)
    assert sample.requests == 2 * 100 and sample.prompt_tokens == 23 * 2 * 100
    assert sample.as_dict()["cost"] == "0.000000"


@pytest.mark.django_db
def test_the_estimate_command_counts_the_real_prompts_and_sends_nothing():
    with socket.socket() as s:  # a port nobody listens on: the command must not need it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    profile = LLMProfile.objects.create(name="nowhere", base_url=f"http://127.0.0.1:{port}/v1", api_key_env="",
                                        input_price_per_million=2, output_price_per_million=8, latency_seconds=2.0,
                                        concurrency=2)
    project = ProjectFactory()
    turn = gold_turn(project, sentences=DANUBE_TURN)
    out = StringIO()
    call_command("autolabel", "--project", project.slug, "--profile", profile.name, "--estimate", "--samples", "5",
                 stdout=out)
    text = out.getvalue()
    # The figures by hand, from the prompts the pipeline builds for this turn.
    protocol = protocol_for(project)
    sentences = [(s.index + 1, s.text) for s in turn.sentences.order_by("index")]
    stage1 = prompting.build_messages(1, prompting.DEFAULT_STAGE1_TEMPLATE, turn.dialogue.reference,
                                      turn.user_message, sentences, language="English", protocol=protocol)
    stage2 = prompting.build_messages(2, prompting.DEFAULT_STAGE2_TEMPLATE, turn.dialogue.reference,
                                      turn.user_message, sentences, language="English", protocol=protocol)
    prompt_tokens = e.message_tokens(stage1) + e.message_tokens(stage2)
    stages = stages_of(protocol)
    numbers = [n for n, _ in sentences]
    reply_tokens = 5 * (e.reply_tokens(numbers, max((r.text for r in stages.replies), key=len))
                        + e.reply_tokens(numbers, max(stages.stage_two_labels, key=len)))
    assert f"turns 1, sentences {len(sentences)}, requests 2" in text
    assert f"prompt tokens {prompt_tokens}, reply tokens {reply_tokens}" in text
    cost = (Decimal(prompt_tokens) * 2 + Decimal(reply_tokens) * 8) / 1_000_000
    assert f"cost {cost.quantize(Decimal('0.000001'))}" in text
    assert "time 2.0 s" in text
    assert not AutoLabelJob.objects.exists()


@pytest.mark.django_db
def test_the_job_form_the_api_and_the_job_give_the_same_estimate(client):
    from rest_framework.test import APIClient

    from annotator.domain.vocabulary import Role
    from autolabel.jobs import services
    from tests.factories import member

    profile = LLMProfile.objects.create(name="priced", base_url="http://127.0.0.1:9/v1", api_key_env="",
                                        input_price_per_million=3, output_price_per_million=15)
    project = ProjectFactory()
    gold_turn(project, sentences=DANUBE_TURN)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    query = {"profile": profile.pk, "samples": "4", "threshold": "2", "use_n": "on"}
    form = client.get(f"/p/{project.slug}/autolabel/estimate/", query, HTTP_HX_REQUEST="true").content.decode()
    api = APIClient()
    api.force_authenticate(lead)
    answer = api.post(f"/api/v1/projects/{project.slug}/autolabel-jobs/estimate/",
                      {"profile": "priced", "samples": 4, "threshold": 2}, format="json")
    assert answer.status_code == 200
    figures = answer.json()
    assert figures["requests"] == 2 and figures["prompt_tokens"] > 0
    assert f'estimate-prompt-tokens">{figures["prompt_tokens"]}<' in form
    assert f'estimate-cost">{figures["cost"]}' in form
    job = services.job_create(project=project, profile=profile, samples=4, threshold=2, enqueue=False)
    assert job.estimate["prompt_tokens"] == figures["prompt_tokens"] and job.estimate["cost"] == figures["cost"]
    page = client.get(f"/p/{project.slug}/autolabel/jobs/{job.pk}/").content.decode()
    assert "Estimated before the run" in page and str(figures["prompt_tokens"]) in page
    # Bad options: the field named, never a 500; nothing is created.
    bad = client.get(f"/p/{project.slug}/autolabel/estimate/", {**query, "samples": "abc"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 200 and "Samples: Enter a whole number." in bad.content.decode()
    assert client.get(f"/p/{project.slug}/autolabel/estimate/", {**query, "samples": "abc"}).status_code == 400
    refused = api.post(f"/api/v1/projects/{project.slug}/autolabel-jobs/estimate/", {"profile": "nobody"},
                       format="json")
    assert refused.status_code == 400 and "nobody" in str(refused.json())
    assert AutoLabelJob.objects.count() == 1


@pytest.mark.django_db
def test_the_estimate_box_waits_for_a_profile_names_the_prices_currency_and_says_under_a_second(client):
    """Issue 50, item 6: the untouched form showed "Endpoint profile: This field is required." in red, the cost had
    no currency, and a fast endpoint's time read "about 0.0 s"."""
    from annotator.domain.vocabulary import Role
    from tests.factories import member

    one = LLMProfile.objects.create(name="one", base_url="http://127.0.0.1:9/v1", api_key_env="")
    fast = LLMProfile.objects.create(name="fast", base_url="http://127.0.0.1:9/v1", api_key_env="",
                                     input_price_per_million=Decimal("2.5"), output_price_per_million=10,
                                     latency_seconds=0.02)
    assert one.pk != fast.pk  # two profiles and no job yet: the form chooses none for the lead
    project = ProjectFactory()
    gold_turn(project, sentences=DANUBE_TURN)
    client.force_login(member(project, Role.LEAD))
    url = f"/p/{project.slug}/autolabel/estimate/"
    untouched = client.get(url, {"profile": "", "samples": "5", "threshold": "3"}, HTTP_HX_REQUEST="true")
    body = untouched.content.decode()
    assert untouched.status_code == 200 and "This field is required" not in body and 'role="alert"' not in body
    assert "Choose an endpoint profile: the estimate follows." in body
    chosen = client.get(url, {"profile": fast.pk, "samples": "5", "threshold": "3", "use_n": "on"},
                        HTTP_HX_REQUEST="true").content.decode()
    assert ("in the currency of the endpoint's prices (2.5 a million prompt tokens, 10 a million reply tokens)"
            in chosen)
    assert 'estimate-time">under a second (0.02 s a request' in chosen and "0.0 s" not in chosen
    assert [e.duration_words(s) for s in (0.04, 12.4, 600, 4 * 3600)] == [
        "under a second", "about 12 s", "about 10 min", "about 4.0 h"]


@pytest.mark.django_db
def test_a_lead_prelabels_the_turns_of_one_import_from_the_jobs_page(client):
    """Issue 50, item 6: labelling some turns only was an admin action ("ask one"); the lead chooses an import."""
    from annotator.domain.vocabulary import Role
    from annotator.models import ImportBatch
    from tests.factories import member

    profile = LLMProfile.objects.create(name="only", base_url="http://127.0.0.1:9/v1", api_key_env="")
    project = ProjectFactory()
    first = ImportBatch.objects.create(project=project, kind="jsonl", filename="first.jsonl", status="done")
    second = ImportBatch.objects.create(project=project, kind="jsonl", filename="second.jsonl", status="done")
    gold_turn(project, sentences=DANUBE_TURN)
    gold_turn(project, sentences=DANUBE_TURN)
    chosen = gold_turn(project, sentences=DANUBE_TURN)
    chosen.dialogue.batch = second
    chosen.dialogue.save(update_fields=["batch"])
    client.force_login(member(project, Role.LEAD))
    url = f"/p/{project.slug}/autolabel/"
    page = client.get(url).content.decode()
    assert "ask one" not in page and f'<option value="{second.pk}">Only the turns of import #2: second.jsonl' in page
    assert first.pk != second.pk
    query = {"profile": profile.pk, "samples": "5", "threshold": "3", "use_n": "on"}
    every = client.get(f"{url}estimate/", query, HTTP_HX_REQUEST="true").content.decode()
    some = client.get(f"{url}estimate/", {**query, "turns_of_import": second.pk}, HTTP_HX_REQUEST="true").content.decode()
    assert 'estimate-turns">3<' in every and 'estimate-turns">1<' in some
    started = client.post(url, {**query, "turns_of_import": second.pk})
    assert started.status_code == 302
    job = AutoLabelJob.objects.get()
    assert job.total_turns == 1
