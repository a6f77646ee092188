"""A project's LLM endpoints (issue 40, items 1 and 2): the page its leads find from the project page, the Test
probe against the real offline baseline server, and every refusal of the site's rule on where requests and keys
may go: a host not allowed, a key not allowed for a host, a redirect to another host (a tiny local server in the
test), a response too large or too slow."""

import http.server
import threading

import pytest
from django.utils.html import escape

from annotator.domain.vocabulary import Role
from autolabel.endpoints import probe as probe_module
from autolabel.endpoints import services
from autolabel.jobs import llm
from autolabel.jobs import services as job_services
from autolabel.models import AutoLabelJob, EndpointTest, LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.factories import ProjectFactory, member
from tests.factories_autolabel import plain_turns

pytestmark = pytest.mark.django_db

KEY_VARIABLE = "TEST_ENDPOINTS_API_KEY"
KEY = "sk-test-never-shown-0451"


class TinyServer:
    """A local HTTP server whose answer the test chooses; it records the requests it received."""

    def __init__(self, answer):
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self):
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                server.requests.append((self.command, self.path, self.headers.get("Authorization")))
                answer(self)

            do_GET = do_POST = _any

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def tiny_servers():
    servers = []

    def make(answer):
        servers.append(TinyServer(answer))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def key_allowed_on_loopback(settings, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    settings.LLM_ENDPOINT_HOSTS = ["127.0.0.1", "localhost"]
    settings.LLM_API_KEY_HOSTS = {KEY_VARIABLE: ["127.0.0.1"]}


def form_data(**overrides):
    data = {"name": "mine", "base_url": "", "default_model": "baseline-lexical", "api_key_env": "",
            "input_price_per_million": "", "output_price_per_million": "", "supports_n": "on", "concurrency": "4",
            "timeout_seconds": "10"}
    return {**data, **overrides}


def test_a_lead_not_staff_finds_the_page_from_the_project_page_and_adds_tests_and_removes_an_endpoint(
        client, baseline_llm, key_allowed_on_loopback):
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    assert not lead.is_staff
    client.force_login(lead)
    project_page = client.get(f"/p/{project.slug}/").content.decode()
    url = f"/p/{project.slug}/autolabel/endpoints/"
    assert f'href="{url}"' in project_page
    response = client.post(url, form_data(base_url=baseline_llm.base_url, api_key_env=KEY_VARIABLE,
                                          input_price_per_million="2.5", output_price_per_million="10"))
    assert response.status_code == 302
    endpoint = LLMProfile.objects.get(project=project, name="mine")
    assert (endpoint.base_url, endpoint.api_key_env, str(endpoint.input_price_per_million)) == (
        baseline_llm.base_url, KEY_VARIABLE, "2.5000")
    page = client.get(url).content.decode()
    assert "mine" in page and KEY_VARIABLE in page and KEY not in page
    # The Test button records a test for a worker (no model call in the request); the page polls it.
    polled = client.post(f"{url}{endpoint.pk}/test/", HTTP_HX_REQUEST="true").content.decode()
    test = EndpointTest.objects.get(profile=endpoint)
    assert test.status == "queued" and "hx-trigger=\"every 1s\"" in polled
    services.endpoint_test_run(test.pk)  # the body of the task autolabel.test_endpoint
    result = client.get(f"/p/{project.slug}/autolabel/endpoint-tests/{test.pk}/", HTTP_HX_REQUEST="true")
    text = result.content.decode()
    test.refresh_from_db()
    endpoint.refresh_from_db()
    assert test.status == "done" and test.reply and "baseline-lexical" in test.models_listed
    assert "Answered" in text and escape(test.reply) in text and "every 1s" not in text
    assert endpoint.latency_seconds == test.latency_seconds > 0
    # The key went to the host it is allowed for.
    assert client.post(f"{url}{endpoint.pk}/remove/").status_code == 302
    assert not LLMProfile.objects.filter(pk=endpoint.pk).exists()


def test_an_endpoint_a_job_used_stays(client, baseline_llm):
    project = ProjectFactory()
    plain_turns(project, 1)
    lead = member(project, Role.LEAD)
    endpoint = LLMProfile.objects.create(project=project, name="used", base_url=baseline_llm.base_url, api_key_env="")
    job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)
    client.force_login(lead)
    page = client.post(f"/p/{project.slug}/autolabel/endpoints/{endpoint.pk}/remove/", follow=True).content.decode()
    assert "used by 1 job" in page and LLMProfile.objects.filter(pk=endpoint.pk).exists()


def test_only_the_projects_leads_see_its_endpoints_and_the_sites_stay_the_admins(client, baseline_llm):
    project, other = ProjectFactory(), ProjectFactory()
    site, _ = LLMProfile.objects.get_or_create(name="Offline baseline (local)", project=None,
                                               defaults={"base_url": baseline_llm.base_url})
    theirs = LLMProfile.objects.create(project=other, name="theirs", base_url=baseline_llm.base_url, api_key_env="")
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.get(f"/p/{project.slug}/autolabel/endpoints/").status_code == 404
    client.force_login(member(project, Role.LEAD))
    assert client.get(f"/p/{project.slug}/autolabel/endpoints/{theirs.pk}/").status_code == 404
    assert client.get(f"/p/{project.slug}/autolabel/endpoints/{site.pk}/").status_code == 404
    assert client.post(f"/p/{project.slug}/autolabel/endpoints/{site.pk}/remove/").status_code == 404
    # Another project's endpoint is not this project's to use.
    plain_turns(project, 1)
    with pytest.raises(job_services.JobError, match="another project"):
        job_services.job_create(project=project, profile=theirs, samples=1, threshold=1, enqueue=False)


def test_a_host_the_site_does_not_allow_is_refused_with_the_reason(client, settings):
    settings.LLM_ENDPOINT_HOSTS = ["127.0.0.1"]
    project = ProjectFactory()
    client.force_login(member(project, Role.LEAD))
    response = client.post(f"/p/{project.slug}/autolabel/endpoints/",
                           form_data(base_url="http://169.254.169.254/latest/v1"))
    assert response.status_code == 400
    assert "The address http://169.254.169.254:80 is not one the site allows" in response.content.decode()
    assert not LLMProfile.objects.filter(project=project).exists()


def test_a_key_is_refused_for_a_host_it_is_not_allowed_for(client, settings, monkeypatch, baseline_llm):
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    settings.LLM_ENDPOINT_HOSTS = ["127.0.0.1"]
    settings.LLM_API_KEY_HOSTS = {KEY_VARIABLE: ["api.example.com"]}
    project = ProjectFactory()
    client.force_login(member(project, Role.LEAD))
    url = f"/p/{project.slug}/autolabel/endpoints/"
    refused = client.post(url, form_data(base_url=baseline_llm.base_url, api_key_env=KEY_VARIABLE))
    assert refused.status_code == 400
    assert f"The key {KEY_VARIABLE} may not be sent to http://127.0.0.1:{baseline_llm.port}" in refused.content.decode()
    secret = client.post(url, form_data(base_url=baseline_llm.base_url, api_key_env="SECRET_KEY"))
    assert secret.status_code == 400 and "not an API-key variable" in secret.content.decode()


def test_a_rule_changed_after_the_endpoint_was_saved_stops_its_job_and_its_test(settings, monkeypatch, baseline_llm):
    """Checked where the request is built, not only on the form: the key never leaves for a host no longer
    allowed."""
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    settings.LLM_ENDPOINT_HOSTS = ["127.0.0.1"]
    settings.LLM_API_KEY_HOSTS = {KEY_VARIABLE: ["127.0.0.1"]}
    project = ProjectFactory()
    plain_turns(project, 1)
    endpoint = LLMProfile.objects.create(project=project, name="e", base_url=baseline_llm.base_url,
                                         api_key_env=KEY_VARIABLE)
    job = job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)
    test = services.endpoint_test_start(endpoint)
    settings.LLM_API_KEY_HOSTS = {KEY_VARIABLE: ["api.example.com"]}
    baseline_llm.configure()  # resets the server's request count
    assert job_services.job_run(job.pk) == AutoLabelJob.Status.FAILED
    job.refresh_from_db()
    assert f"The key {KEY_VARIABLE} may not be sent to http://127.0.0.1:{baseline_llm.port}" in job.error
    assert services.endpoint_test_run(test.pk) == EndpointTest.Status.FAILED
    test.refresh_from_db()
    assert "may not be sent" in test.error
    assert baseline_llm.stats()["chat_requests"] == 0
    settings.LLM_ENDPOINT_HOSTS = ["localhost"]
    with pytest.raises(job_services.JobError, match="is not one the site allows"):
        job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)


def test_a_redirect_to_another_host_is_not_followed_and_the_key_does_not_go_there(key_allowed_on_loopback,
                                                                                  tiny_servers):
    elsewhere = tiny_servers(lambda handler: handler.send_error(500))

    def redirect(handler):
        handler.send_response(307)
        handler.send_header("Location", f"http://localhost:{elsewhere.port}{handler.path}")
        handler.end_headers()

    redirecting = tiny_servers(redirect)
    project = ProjectFactory()
    plain_turns(project, 1)
    endpoint = LLMProfile.objects.create(project=project, name="r", base_url=f"http://127.0.0.1:{redirecting.port}/v1",
                                         api_key_env=KEY_VARIABLE, max_retries=0)
    test = services.endpoint_test_start(endpoint)
    assert services.endpoint_test_run(test.pk) == EndpointTest.Status.FAILED
    test.refresh_from_db()
    assert f"307 redirect from 127.0.0.1:{redirecting.port} to http://localhost:{elsewhere.port}" in test.error
    assert "not followed" in test.error
    job = job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)
    assert job_services.job_run(job.pk) == AutoLabelJob.Status.FAILED
    job.refresh_from_db()
    assert "307 redirect" in job.error and "not followed" in job.error
    assert elsewhere.requests == []
    assert redirecting.requests and all(auth == f"Bearer {KEY}" for _, _, auth in redirecting.requests)


def test_a_response_too_large_is_cut_off(key_allowed_on_loopback, tiny_servers, monkeypatch):
    monkeypatch.setattr(probe_module, "MAX_RESPONSE_BYTES", 10_000)
    monkeypatch.setattr(llm, "MAX_RESPONSE_BYTES", 10_000)

    def flood(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        handler.wfile.write(b'{"choices": [{"message": {"content": "' + b"x" * 50_000 + b'"}}]}')

    server = tiny_servers(flood)
    project = ProjectFactory()
    plain_turns(project, 1)
    endpoint = LLMProfile.objects.create(project=project, name="big", base_url=f"http://127.0.0.1:{server.port}/v1",
                                         api_key_env="", max_retries=0, supports_n=False)
    test = services.endpoint_test_start(endpoint)
    assert services.endpoint_test_run(test.pk) == EndpointTest.Status.FAILED
    test.refresh_from_db()
    assert f"response too large from 127.0.0.1:{server.port}: more than 10000 bytes" in test.error
    job = job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)
    assert job_services.job_run(job.pk) == AutoLabelJob.Status.FAILED
    job.refresh_from_db()
    assert "response too large" in job.error


def test_a_test_waits_a_bounded_time(key_allowed_on_loopback, tiny_servers, settings):
    settings.LLM_ENDPOINT_TEST_TIMEOUT_SECONDS = 0.5
    release = threading.Event()
    server = tiny_servers(lambda handler: release.wait(10))
    endpoint = LLMProfile.objects.create(project=ProjectFactory(), name="slow", api_key_env="",
                                         base_url=f"http://127.0.0.1:{server.port}/v1")
    test = services.endpoint_test_start(endpoint)
    try:
        assert services.endpoint_test_run(test.pk) == EndpointTest.Status.FAILED
    finally:
        release.set()
    test.refresh_from_db()
    assert f"timed out: 127.0.0.1:{server.port}" in test.error
    assert test.latency_seconds is None


def test_names_are_the_projects_own(client, baseline_llm):
    project = ProjectFactory()
    client.force_login(member(project, Role.LEAD))
    url = f"/p/{project.slug}/autolabel/endpoints/"
    site_name = "Offline baseline (local)"  # the site's profile of that name does not stop a project's
    LLMProfile.objects.get_or_create(name=site_name, project=None, defaults={"base_url": baseline_llm.base_url})
    assert client.post(url, form_data(name=site_name, base_url=baseline_llm.base_url)).status_code == 302
    again = client.post(url, form_data(name=site_name, base_url=baseline_llm.base_url))
    assert again.status_code == 400 and "The project has an endpoint of that name already." in again.content.decode()
    assert LLMProfile.objects.filter(name=site_name).count() == 2


def test_a_batch_file_too_large_is_not_read_and_names_the_file(key_allowed_on_loopback, tiny_servers, monkeypatch):
    """The Batch API's output and error files are read whole: past BATCH_MAX_FILE_BYTES the read stops and the
    job's reason names the file; a file within the limit is read as sent."""
    from autolabel.jobs import batch

    monkeypatch.setattr(batch, "BATCH_MAX_FILE_BYTES", 10_000)

    def files(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/jsonl")
        handler.end_headers()
        lines = 3 if "small" in handler.path else 2_000
        handler.wfile.write(b"".join(b'{"custom_id": "t-1-1-0", "response": {}}\n' for _ in range(lines)))

    server = tiny_servers(files)
    project = ProjectFactory()
    plain_turns(project, 1)
    endpoint = LLMProfile.objects.create(project=project, name="files", base_url=f"http://127.0.0.1:{server.port}/v1",
                                         api_key_env="", max_retries=0, supports_n=False)
    job = job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)
    client = batch._sync_client(job)
    try:
        assert len(batch._file_lines(client, "file-small", "here")) == 3
        with pytest.raises(batch.BatchFileTooLarge, match="batch file file-big from here is larger than 10000 bytes"):
            batch._file_lines(client, "file-big", "here")
    finally:
        client.close()


def test_a_projects_endpoint_is_tested_in_the_projects_own_protocol(client, baseline_llm):
    """Issue 50, item 6: a legal project's Test asked CogniBench's question (faithful / invented markers) and its
    reply showed CogniBench's words; the probe now asks in the project's protocol, and the reply speaks it."""
    from annotator.domain.protocol.document import load_shipped
    from annotator.projects.protocol_services import protocol_set

    project = ProjectFactory()
    protocol_set(project, load_shipped("halludetect").document)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    url = f"/p/{project.slug}/autolabel/endpoints/"
    assert client.post(url, form_data(base_url=baseline_llm.base_url)).status_code == 302
    endpoint = LLMProfile.objects.get(project=project, name="mine")
    client.post(f"{url}{endpoint.pk}/test/", HTTP_HX_REQUEST="true")
    test = EndpointTest.objects.get(profile=endpoint)
    services.endpoint_test_run(test.pk)
    test.refresh_from_db()
    assert test.status == "done", test.error
    assert test.reply in ("<s1>yes</s1>", "<s1>no</s1>"), test.reply  # HalluDetect's first step: supported?
    assert not any(word in test.reply for word in ("faithful", "invented", "factual", "cognitive")), test.reply
