"""A lead's data pages: turn list with filters, turn page with gold; nobody else sees them."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator import models
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    project = ProjectFactory(slug="p")
    batch = models.ImportBatch.objects.create(project=project, kind="jsonl", filename="first.jsonl", status="done")
    for n in range(60):
        dialogue = DialogueFactory(project=project, external_id=f"dlg-{n:03d}", batch=batch if n < 10 else None,
                                   topic="science" if n % 2 else "history",
                                   generator_model="model-b" if n % 3 == 0 else "model-a")
        TurnFactory(dialogue=dialogue, index=0)
    return project


def test_turn_list_filters_and_pages(client, project):
    client.force_login(member(project, Role.LEAD))
    url = reverse("turn_list", args=["p"])
    page = client.get(url).content.decode()
    assert "60 turns" in page and "dlg-000" in page and "dlg-055" not in page and "Page 1 of 2" in page
    assert "dlg-055" in client.get(url, {"page": 2}).content.decode()
    assert "30 turns" in client.get(url, {"topic": "science"}).content.decode()
    assert "20 turns" in client.get(url, {"model": "model-b"}).content.decode()
    batch = models.ImportBatch.objects.get()
    page = client.get(url, {"batch": batch.pk}).content.decode()
    assert "10 turns" in page
    page = client.get(url, {"q": "dlg-04"}).content.decode()
    assert "10 turns" in page
    # htmx asks for the table only.
    partial = client.get(url, {"topic": "science"}, HTTP_HX_REQUEST="true").content.decode()
    assert "30 turns" in partial and "<html" not in partial


def test_turn_page_shows_reference_history_sentences_and_gold(client, project):
    lead = member(project, Role.LEAD)
    turn = models.Turn.objects.get(dialogue__external_id="dlg-001")
    turn.history = [{"role": "user", "text": "An <b>earlier</b> question"}, {"role": "assistant", "text": "Its answer"}]
    turn.save()
    first = turn.sentences.get(index=0)
    models.GoldLabel.objects.create(sentence=first, label=Label.INVENTED, path=path_for_label(Label.INVENTED),
                                    provenance=GoldProvenance.IMPORTED)
    client.force_login(lead)
    page = client.get(reverse("turn_detail", args=["p", turn.pk])).content.decode()
    assert "The Amazon river flows through Brazil." in page  # reference
    assert "An &lt;b&gt;earlier&lt;/b&gt; question" in page  # history, escaped
    assert "The Amazon flows through Brazil." in page and "chip-invented" in page and "Imported" in page
    assert "no gold yet" in page


def test_annotators_and_outsiders_never_see_data_pages(client, project):
    turn = models.Turn.objects.first()
    urls = [reverse("turn_list", args=["p"]), reverse("turn_detail", args=["p", turn.pk]),
            reverse("import_list", args=["p"]), reverse("project_export", args=["p", "jsonl"])]
    for user in (member(project, Role.ANNOTATOR), member(project, Role.ADJUDICATOR), UserFactory()):
        client.force_login(user)
        for url in urls:
            assert client.get(url).status_code == 404, (user, url)
    # A lead of another project cannot reach this project's turn through their own project.
    other = ProjectFactory(slug="other")
    client.force_login(member(other, Role.LEAD))
    assert client.get(reverse("turn_detail", args=["other", turn.pk])).status_code == 404


def test_import_list_and_status_page(client, project):
    batch = models.ImportBatch.objects.get()
    batch.summary = {"line": "10 dialogues, 10 turns imported", "inconsistencies": ["x: something odd"]}
    batch.save()
    failed = models.ImportBatch.objects.create(project=project, kind="cognibench", filename="bad.json",
                                               status="failed", error="bad.json: record #3: field 'id': is missing")
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("import_list", args=["p"])).content.decode()
    assert "first.jsonl" in page and "10 dialogues, 10 turns imported" in page and "field &#x27;id&#x27;" in page
    page = client.get(reverse("import_status", args=["p", batch.pk])).content.decode()
    assert "10 dialogues, 10 turns imported" in page and "1 inconsistencies" in page and 'hx-trigger="every 1s"' not in page  # the nav badges poll on every page
    page = client.get(reverse("import_status", args=["p", failed.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "Nothing was imported" in page and "<html" not in page
    running = models.ImportBatch.objects.create(project=project, kind="jsonl", filename="big.jsonl", status="running")
    assert 'hx-trigger="every 1s"' in client.get(reverse("import_status", args=["p", running.pk])).content.decode()


@pytest.mark.parametrize("kind", ["import", "export"])
def test_a_job_no_worker_took_for_a_minute_says_to_start_one_and_keeps_polling(client, project, kind):
    if kind == "import":
        job = models.ImportBatch.objects.create(project=project, kind="jsonl", filename="late.jsonl", status="pending")
        url = reverse("import_status", args=["p", job.pk])
    else:
        job = models.ExportJob.objects.create(project=project, format="jsonl", status="pending")
        url = reverse("export_job_status", args=["p", job.pk])
    client.force_login(member(project, Role.LEAD))
    page = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Waiting for a worker" in page and "No worker has started this job" not in page
    type(job).objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=3))
    page = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "queued 3\xa0minutes ago" in page and "No worker has started this job yet" in page
    assert "celery -A config worker" in page and 'hx-trigger="every 1s"' in page  # it starts as soon as one runs
    type(job).objects.filter(pk=job.pk).update(status="running")
    assert "No worker has started" not in client.get(url, HTTP_HX_REQUEST="true").content.decode()
