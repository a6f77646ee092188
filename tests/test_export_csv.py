"""The gold CSV export (`export_gold --format csv`, the project page's "Export gold CSV", the API's `fmt=csv`, a
background export job): one row per sentence for a spreadsheet, the protocol's steps as `path.<step>` columns,
a multiple step's answers joined by "|", a formula kept as text, for leads only."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotator import models
from annotator.corpus.exports.services import export_job_create, export_job_execute
from annotator.domain.vocabulary import GoldProvenance, Role
from tests.factories import member
from tests.factories_api import token_client
from tests.test_step_kinds_exports import HALLUDETECT, _error_types, _source_project, run

pytestmark = pytest.mark.django_db


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_command_writes_one_row_per_sentence_with_the_paths_steps_as_columns(tmp_path):
    project = _source_project()
    sentence = models.Sentence.objects.get(turn__dialogue__project=project, index=2)
    sentence.text = "=HYPERLINK(\"http://x\")"  # imported text a spreadsheet would run
    sentence.save(update_fields=["text"])
    out = tmp_path / "gold.csv"
    printed = run("export_gold", "--project", "hd", "--format", "csv", "--out", str(out))
    assert printed.strip() == f"export_gold: wrote the 1 turns' sentences of hd to {out}"
    text = out.read_text()
    header = next(csv.reader(io.StringIO(text)))
    assert header[:10] == ["dialogue", "generator_model", "language", "turn", "turn_index", "qualification",
                           "sentence", "start", "end", "text"]
    # Each step's ids, and a choice or multiple step's answers as the screens word them beside (issue 50, item 13).
    assert [column for column in header if column.startswith("path.")] == [
        "path.supported", "path.supported.name", "path.error_types", "path.error_types.name", "path.severity",
        "path.justification"]
    # The claims views' columns, always empty here (the protocol's own severity is path.severity), are left out.
    assert "severity" not in header and "error_type" not in header
    assert header[-2:] == ["prediction_label", "prediction_hallucinated"]
    first, second, third = rows_of(text)
    # Sentences numbered from 1, as the screens number them.
    assert (first["dialogue"], first["sentence"], first["gold_label"], first["hallucinated"]) == ("d-1", "1", "supported", "no")
    assert first["path.supported"] == "yes" and first["path.supported.name"] == "Yes, supported"
    assert first["path.severity"] == ""
    assert (second["gold_label"], second["gold_name"], second["hallucinated"]) == (
        "unsupported", HALLUDETECT.label_name("unsupported"), "yes")
    assert second["provenance"] == GoldProvenance.ADJUDICATION and second["decided_by"] == "lead-h"
    assert second["path.error_types"] == "|".join(_error_types()) and second["path.severity"] == "5"
    assert second["path.error_types.name"] == "Fabricated fact|Misattributed source"
    assert second["path.justification"] == "Smith v. Jones is not a real case: the adjudicator's words."
    assert third["gold_label"] == "" and third["path.supported"] == ""  # no gold: empty cells
    assert third["text"] == "'=HYPERLINK(\"http://x\")"  # kept as text, not run
    assert '"path.severity"' in text and ",5," in text  # an integer stays a number cell


def test_a_lead_downloads_it_from_the_project_page_and_the_api_an_annotator_never(client):
    project = _source_project()
    lead = get_user_model().objects.get(username="lead-h")
    url = reverse("project_export", args=[project.slug, "csv"])
    client.force_login(member(project, Role.ANNOTATOR, username="ann-c"))
    assert client.get(url).status_code == 404
    client.force_login(lead)
    assert "Export gold CSV" in client.get(reverse("project_detail", args=[project.slug])).content.decode()
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="hd-gold.csv"'
    assert len(rows_of(b"".join(response.streaming_content).decode())) == 3
    api = token_client(lead)
    answered = api.get(f"/api/v1/projects/{project.slug}/gold/export/?fmt=csv")
    assert answered.status_code == 200 and answered["Content-Type"] == "text/csv; charset=utf-8"
    assert [row["gold_label"] for row in rows_of(b"".join(answered.streaming_content).decode())] == [
        "supported", "unsupported", ""]
    refused = api.get(f"/api/v1/projects/{project.slug}/gold/export/?fmt=csv&min_severity=3")
    assert refused.status_code == 400 and "jsonl" in refused.json()["errors"]["min_severity"][0]


def test_a_background_export_job_writes_the_same_csv(client):
    project = _source_project()
    lead = get_user_model().objects.get(username="lead-h")
    job = export_job_create(project, "csv", lead)
    done = export_job_execute(job.pk)
    assert done.status == models.ExportJob.Status.DONE and done.get_format_display() == "Gold CSV"
    client.force_login(lead)
    download = client.get(reverse("export_job_download", args=[project.slug, job.pk]))
    assert download["Content-Disposition"] == 'attachment; filename="hd-gold.csv"'
    streamed = client.get(reverse("project_export", args=[project.slug, "csv"]))
    assert b"".join(download.streaming_content) == b"".join(streamed.streaming_content)


def test_the_csv_for_excel_with_each_annotators_label_and_the_claims_columns_when_they_can_hold_something(client):
    """Issue 50, item 13: a byte order mark on request (Excel reads UTF-8 only then), the annotators' own labels
    beside the gold on request, and the claims views' columns back once the project turns a view on."""
    project = _source_project()
    client.force_login(get_user_model().objects.get(username="lead-h"))
    page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
    assert 'data-testid="csv-export"' in page and 'name="bom"' in page and 'name="annotators"' in page
    url = reverse("project_export", args=[project.slug, "csv"])
    plain = b"".join(client.get(url).streaming_content)
    assert not plain.startswith(b"\xef\xbb\xbf")
    chosen = b"".join(client.get(url + "?bom=1&annotators=1").streaming_content)
    assert chosen.startswith(b"\xef\xbb\xbf") and chosen[3:].startswith(b'"dialogue"')
    rows = rows_of(chosen.decode("utf-8-sig"))
    assert [column for column in rows[0] if column.startswith("annotator.")] == ["annotator.ann-a", "annotator.ann-b"]
    unsupported_name = HALLUDETECT.label_name("unsupported")
    assert (rows[1]["annotator.ann-a"], rows[1]["annotator.ann-b"]) == (unsupported_name, unsupported_name)
    assert rows[0]["annotator.ann-a"] == ""  # no answer of theirs on that sentence
    assert client.get(url + "?bom=yes&annotators=").status_code == 200  # any value is on or off, never a 500
    api = token_client(get_user_model().objects.get(username="lead-h"))
    answered = b"".join(api.get(f"/api/v1/projects/{project.slug}/gold/export/?fmt=csv&bom=true&annotators=true")
                        .streaming_content)
    assert answered == chosen  # the API's options are the page's
    project.enable_severity = True
    project.save(update_fields=["enable_severity"])
    header = next(csv.reader(io.StringIO(b"".join(client.get(url).streaming_content).decode())))
    assert "severity" in header and "error_type" not in header
