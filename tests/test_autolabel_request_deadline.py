"""One deadline per request to an endpoint (issue 46, item 10): a server that trickles its answer one byte at a
time, never pausing long enough for a per-read timeout, is cut off at the request's deadline — the Test's
probe and a job's calls alike — and a Test never holds the worker thread that imports and exports need."""

import http.server
import threading

import pytest

from annotator.corpus.exports.services import export_job_create
from annotator.domain.vocabulary import Role
from annotator.models import ExportJob
from autolabel.endpoints import services
from autolabel.jobs import services as job_services
from autolabel.models import AutoLabelJob, EndpointTest, LLMProfile
from tests.conftest import wait_until
from tests.factories import ProjectFactory, member
from tests.factories_autolabel import plain_turns

BODY_BYTES = 30


class TrickleServer:
    """Answers 200 at once, then its body one byte every ``interval`` seconds; counts the bytes each request got."""

    def __init__(self, interval):
        self.sent = []
        self.stopped = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                index = len(server.sent)
                server.sent.append(0)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(BODY_BYTES))
                self.end_headers()
                for _ in range(BODY_BYTES):
                    if server.stopped.wait(interval):
                        return
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:  # the client hung up
                        return
                    server.sent[index] += 1

            do_GET = do_POST = _any

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def trickle():
    servers = []

    def make(interval):
        servers.append(TrickleServer(interval))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.mark.django_db
def test_a_test_ends_at_its_deadline_however_the_endpoint_trickles(trickle, settings):
    settings.LLM_ENDPOINT_TEST_TIMEOUT_SECONDS = 2
    server = trickle(interval=0.5)  # a byte every 0.5 s: never a read that waits 2 s
    endpoint = LLMProfile.objects.create(project=ProjectFactory(), name="slow", api_key_env="",
                                         base_url=server.base_url)
    test = services.endpoint_test_start(endpoint)
    assert services.endpoint_test_run(test.pk) == EndpointTest.Status.FAILED
    test.refresh_from_db()
    assert "no whole answer within 2 s (the deadline of one request)" in test.error
    assert test.error.startswith(f"chat: timed out: {server.base_url[7:-3]}")
    assert len(server.sent) == 2 and all(sent < BODY_BYTES for sent in server.sent)  # cut off, both


@pytest.mark.django_db
def test_a_jobs_request_ends_at_its_deadline_however_the_endpoint_trickles(trickle):
    server = trickle(interval=0.5)
    project = ProjectFactory()
    plain_turns(project, 1)
    endpoint = LLMProfile.objects.create(project=project, name="slow", api_key_env="", base_url=server.base_url,
                                         timeout_seconds=2, max_retries=0, supports_n=False)
    job = job_services.job_create(project=project, profile=endpoint, samples=1, threshold=1, enqueue=False)
    assert job_services.job_run(job.pk) == AutoLabelJob.Status.FAILED
    job.refresh_from_db()
    assert "no whole answer within 2 s (the deadline of one request)" in job.error
    assert server.sent and all(sent < BODY_BYTES for sent in server.sent)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_tests_under_way_leave_the_workers_thread_to_an_export(start_celery_worker, private_files, trickle):
    """One worker thread, two Tests of a slow endpoint under way: an export still runs, and ends first."""
    server = trickle(interval=1.0)  # 30 s a request, within the Test's deadline below
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    plain_turns(project, 3)
    start_celery_worker(concurrency=1, extra_env={"MEDIA_ROOT": str(private_files),
                                                  "LLM_ENDPOINT_TEST_TIMEOUT_SECONDS": "60"})
    try:
        endpoint = LLMProfile.objects.create(project=project, name="slow", api_key_env="", base_url=server.base_url)
        tests = [services.endpoint_test_start(endpoint, lead) for _ in range(2)]
        wait_until(lambda: len(server.sent) >= 2, timeout=60, message="both Tests to be waiting on the endpoint")
        export = export_job_create(project, "jsonl", lead)
        wait_until(lambda: ExportJob.objects.get(pk=export.pk).status in ("done", "failed"), timeout=60,
                   message="the export to run beside the Tests")
        assert ExportJob.objects.get(pk=export.pk).status == "done"
        assert EndpointTest.objects.filter(pk__in=[t.pk for t in tests], finished_at__isnull=True).count() == 2
    finally:
        server.close()  # the Tests end at once, and the worker with them
