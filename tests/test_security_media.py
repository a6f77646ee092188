"""Issue #14, item 1: nothing under the private files folder is reachable by URL.

Exports hold every annotator's labels and notes; uploads hold a source's gold. They were served
from MEDIA_URL with guessable names whenever DEBUG was on (the default of `make run`).
"""

import importlib

import pytest
from django.core.files.base import ContentFile
from django.test import override_settings
from django.urls import clear_url_caches, reverse

from annotator import models
from annotator.corpus.exports.services import export_job_execute
from annotator.storage import PrivateStorage, export_file_path, import_upload_path
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def urlconf_built_with_debug_on(settings, tmp_path):
    """The URL conf as `make run` builds it: DEBUG on when the module is imported."""
    import annotator.urls
    import config.urls

    settings.MEDIA_ROOT = tmp_path
    with override_settings(DEBUG=True):
        importlib.reload(annotator.urls)
        importlib.reload(config.urls)
        clear_url_caches()
        yield
    importlib.reload(annotator.urls)
    importlib.reload(config.urls)
    clear_url_caches()


def test_no_route_serves_stored_files_even_with_debug_on(client, urlconf_built_with_debug_on):
    project = ProjectFactory(slug="p")
    upload = PrivateStorage().save("imports/labels.json", ContentFile(b'{"secret": "gold"}'))
    export = PrivateStorage().save("exports/1-p-gold.jsonl", ContentFile(b'{"labels": "everyone"}\n'))
    client.force_login(member(project, Role.LEAD))
    for name in (upload, export):
        for prefix in ("/media/", "/"):
            response = client.get(prefix + name)
            assert response.status_code == 404, prefix + name
            assert b"secret" not in response.content and b"everyone" not in response.content


def test_stored_files_have_no_url_and_unguessable_names():
    with pytest.raises(ValueError):
        PrivateStorage().url("exports/x.jsonl")
    first, second = export_file_path(None, "p-gold.jsonl"), export_file_path(None, "p-gold.jsonl")
    assert first != second and first.startswith("exports/") and first.endswith("-p-gold.jsonl")
    # 18 random bytes: the name cannot be enumerated.
    assert len(first.split("/")[1].rsplit("-p-gold.jsonl")[0]) >= 24
    assert import_upload_path(None, "../../etc/labels.json").startswith("imports/")
    assert "/" not in import_upload_path(None, "../../etc/labels.json")[len("imports/"):]


def test_an_export_is_sent_only_to_the_projects_leads_as_an_attachment(client, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    project = ProjectFactory(slug="p")
    lead = member(project, Role.LEAD)
    job = models.ExportJob.objects.create(project=project, format="jsonl", created_by=lead)
    job = export_job_execute(job.pk)
    assert job.status == "done" and not job.file.name.startswith(f"exports/{job.pk}-")
    url = reverse("export_job_download", args=["p", job.pk])
    other_project_lead = member(ProjectFactory(slug="other"), Role.LEAD)
    for outsider in (member(project, Role.ANNOTATOR), member(project, Role.ADJUDICATOR), other_project_lead,
                     UserFactory()):
        client.force_login(outsider)
        assert client.get(url).status_code == 404
    client.force_login(lead)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Cache-Control"] == "no-store"
