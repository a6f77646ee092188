"""The faithfulness page, its CSV and its API endpoint: leads only, the report's numbers, never a 5xx."""

import csv
import io

import pytest
from django.urls import reverse

from annotator.domain.vocabulary import Role
from autolabel.faithfulness.report import faithfulness_report
from tests.factories import AssignmentFactory, ProjectFactory, member
from tests.factories_api import token_client
from tests.factories_faithfulness import draw, finished_job

pytestmark = pytest.mark.django_db

SENTENCES = [("invented", "invented"), ("faithful", "faithful"), ("speculative", "speculative"), ("reliable", "faithful")]


@pytest.fixture
def job():
    project = ProjectFactory(slug="fig8-pages")
    job, turns = finished_job(project, [("model-a" if n % 2 else "=<b>model-b", SENTENCES) for n in range(6)])
    draw(job, turns[:4])
    return job


def urls(job, job_id=None):
    args = [job.project.slug, job.pk if job_id is None else job_id]
    return (reverse("autolabel:job_faithfulness", args=args), reverse("autolabel:job_faithfulness_csv", args=args),
            f"/api/v1/projects/{args[0]}/autolabel-jobs/{args[1]}/faithfulness/")


def test_a_lead_reads_the_chart_table_and_gold_statement_from_the_job_page(client, job):
    lead = member(job.project, Role.LEAD)
    client.force_login(lead)
    detail = client.get(reverse("autolabel:job_detail", args=[job.project.slug, job.pk])).content.decode()
    page_url, csv_url, _ = urls(job)
    assert f'href="{page_url}"' in detail

    page = client.get(page_url).content.decode()
    assert page.count('<svg class="chart"') == 4
    assert "16 gold sentences on 4 turns drawn at random for this job correct the estimates." in page
    assert "Few turns" in page and f'href="{csv_url}"' in page
    overall = faithfulness_report(job)[0]["overall"]["hallucination_rate"]
    assert f"<strong>{100 * overall['corrected']:.1f} %</strong>" in page
    low, high = overall["corrected_ci95"]
    assert f"{100 * low:.1f} – {100 * high:.1f} %" in page
    # Model names are data: escaped in the chart (label and tooltips) and the table.
    assert "<b>model-b" not in page and "=&lt;b&gt;model-b" in page


def test_the_csv_has_one_row_per_model_and_measure_with_the_report_numbers(client, job):
    client.force_login(member(job.project, Role.LEAD))
    response = client.get(urls(job)[1])
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 3 * 4
    report = faithfulness_report(job)[0]
    first = rows[0]
    assert (first["generator_model"], first["measure"], first["sentences"]) == ("all models", "hallucination_rate", "24")
    assert float(first["corrected"]) == report["overall"]["hallucination_rate"]["corrected"]
    assert float(first["gold_only_low"]) == report["overall"]["hallucination_rate"]["gold_only_ci95"][0]
    # A model name a spreadsheet would run as a formula is neutralised.
    assert {row["generator_model"] for row in rows} == {"all models", "'=<b>model-b", "model-a"}


def test_the_api_answers_the_documented_json(job):
    url = reverse("api:autolabel-job-faithfulness", kwargs={"slug": job.project.slug, "pk": job.pk})
    assert url == urls(job)[2]
    response = token_client(member(job.project, Role.LEAD)).get(url)
    assert response.status_code == 200
    assert response.json() == faithfulness_report(job)[0]


def test_without_random_draws_the_page_points_to_the_draw_action(client):
    project = ProjectFactory()
    job, _ = finished_job(project, [("model-a", SENTENCES)])
    client.force_login(member(project, Role.LEAD))
    page = client.get(urls(job)[0]).content.decode()
    assert "No gold drawn at random for this job yet" in page
    assert "4 gold sentences on 1 turn were not drawn at random" in page
    checks = reverse("autolabel:job_checks", args=[project.slug, job.pk])
    assert "draw random turns for human annotation from this job" in page
    assert f'<a href="{checks}">human checks of this job</a>' in page
    job.job_turns.update(done=False)  # nothing finished yet: still a page, with nothing to show
    assert client.get(urls(job)[0]).status_code == 200


def test_annotators_other_leads_and_malformed_ids_get_nothing(client, job):
    annotator = member(job.project, Role.ANNOTATOR)
    stranger = member(ProjectFactory(), Role.LEAD)
    for user in (annotator, stranger):
        client.force_login(user)
        api = token_client(user)
        page_url, csv_url, api_url = urls(job)
        # Lead-only pages answer 404 to everyone else (they do not reveal that the job exists).
        assert client.get(page_url).status_code == 404
        assert client.get(csv_url).status_code == 404
        assert api.get(api_url).status_code == 404
    lead = member(job.project, Role.LEAD)
    client.force_login(lead)
    api = token_client(lead)
    other_job, _ = finished_job(ProjectFactory(), [("model-a", SENTENCES)])
    for job_id in (other_job.pk, 99999999999999999999):
        page_url, csv_url, api_url = urls(job, job_id)
        assert client.get(page_url).status_code == 404
        assert client.get(csv_url).status_code == 404
        assert api.get(api_url).status_code == 404
    for path in (f"/p/{job.project.slug}/autolabel/jobs/abc/faithfulness/",
                 f"/api/v1/projects/{job.project.slug}/autolabel-jobs/abc/faithfulness/"):
        assert client.get(path).status_code == 404
    assert client.post(urls(job)[0]).status_code == 405


def test_a_lead_blind_on_a_turn_of_the_project_is_refused(client, job):
    lead = member(job.project, Role.LEAD)
    AssignmentFactory(turn=job.job_turns.first().turn, annotator=lead)  # an unsubmitted slot: blind on that turn
    client.force_login(lead)
    page_url, csv_url, api_url = urls(job)
    refused = client.get(page_url)
    assert refused.status_code == 302 and refused["Location"] == reverse("project_detail", args=[job.project.slug])
    assert client.get(csv_url).status_code == 302
    assert token_client(lead).get(api_url).status_code == 403
