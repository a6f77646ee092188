"""The lead's protocol page: pick a shipped protocol or upload / edit a document; a refusal lists every
problem by its path and saves nothing (never a 500); the live preview draws the tree of the edited text."""

import copy
import json
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotator.domain.protocol.document import COGNIBENCH, load_shipped
from annotator.domain.vocabulary import Role
from annotator.models import Project, ProtocolVersion
from annotator.projects.protocols import protocol_for

from .factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

FACE4RAG = load_shipped("face4rag")


def client_for(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def project():
    return ProjectFactory()


@pytest.fixture
def lead(project):
    return client_for(member(project, Role.LEAD))


def page(project):
    return reverse("project_protocol", args=[project.slug])


def test_only_a_lead_sees_the_page(project, lead):
    assert lead.get(page(project)).status_code == 200
    for role in (Role.ANNOTATOR, Role.ADJUDICATOR):
        assert client_for(member(project, role)).get(page(project)).status_code == 404
    assert page(project).encode() in lead.get(reverse("project_detail", args=[project.slug])).content


def test_the_page_shows_the_current_document_and_its_walkable_description(project, lead):
    html = lead.get(page(project)).content.decode()
    assert "CogniBench</strong> v1" in html and "(built-in)" in html
    assert json.dumps(COGNIBENCH.document, indent=2, ensure_ascii=False) in unescape(html)  # in the editor
    assert "data-description=" in html


def test_a_lead_picks_a_shipped_protocol(project, lead):
    answer = lead.post(page(project), {"source": "shipped", "shipped": "face4rag"})
    assert answer.status_code == 302
    assert protocol_for(Project.objects.get(pk=project.pk)) == FACE4RAG
    assert "project version 1" in lead.get(page(project)).content.decode()


def test_a_lead_uploads_a_document(project, lead):
    upload = SimpleUploadedFile("face4rag.json", json.dumps(FACE4RAG.document).encode(), content_type="application/json")
    answer = lead.post(page(project), {"source": "edited", "document": "", "file": upload})
    assert answer.status_code == 302 and protocol_for(Project.objects.get(pk=project.pk)) == FACE4RAG


def test_a_lead_uploads_a_yaml_document(project, lead):
    import yaml

    upload = SimpleUploadedFile("face4rag.yaml", yaml.safe_dump(FACE4RAG.document).encode())
    answer = lead.post(page(project), {"source": "edited", "file": upload})
    assert answer.status_code == 302 and protocol_for(Project.objects.get(pk=project.pk)) == FACE4RAG


def test_a_refused_document_lists_every_problem_by_path_and_saves_nothing(project, lead):
    document = copy.deepcopy(FACE4RAG.document)
    document["start"] = "consistency"
    document["labels"][9]["key"] = "e"
    answer = lead.post(page(project), {"source": "edited", "document": json.dumps(document)})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert "2 problems; nothing was saved" in html
    assert "<code>/start</code> unknown step &#x27;consistency&#x27;" in html
    assert "<code>/labels/9/key</code> key &#x27;e&#x27; attaches evidence" in html
    assert not ProtocolVersion.objects.exists()
    assert "consistency" in html  # the lead's text is kept in the editor, to fix


@pytest.mark.parametrize("data", [
    {"source": "edited", "document": "{not json"},
    {"source": "edited", "document": "[]"},
    {"source": "edited", "document": ""},
    {"source": "shipped", "shipped": "../../settings"},
    {"source": "nonsense"},
    {"source": "edited", "document": json.dumps(FACE4RAG.document), "label_mapping": "{oops"},
])
def test_malformed_posts_are_400_never_500(project, lead, data):
    assert lead.post(page(project), data).status_code == 400
    assert not ProtocolVersion.objects.exists()


def test_a_binary_upload_is_refused_with_its_reason(project, lead):
    upload = SimpleUploadedFile("x.json", b"\xff\xfe\x00garbage")
    answer = lead.post(page(project), {"source": "edited", "file": upload})
    assert answer.status_code == 400 and "not UTF-8" in answer.content.decode()


def test_the_preview_draws_the_edited_text_or_lists_its_problems(project, lead):
    url = reverse("project_protocol_preview", args=[project.slug])
    drawn = lead.post(url, {"source": "edited", "document": json.dumps(FACE4RAG.document)})
    assert drawn.status_code == 200
    html = drawn.content.decode()
    data = html.split('data-description="')[1].split('"')[0]
    assert json.loads(unescape(data)) == FACE4RAG.describe()
    broken = lead.post(url, {"source": "edited", "document": json.dumps({**FACE4RAG.document, "start": "x"})})
    assert "<code>/start</code> unknown step" in broken.content.decode()
    assert "not JSON" in lead.post(url, {"document": "{"}).content.decode()
    shipped = lead.post(url, {"source": "shipped", "shipped": "cognibench_clinical"}).content.decode()
    assert "Could acting on it harm a patient?" in shipped
    assert client_for(member(project, Role.ANNOTATOR)).post(url, {"document": "{}"}).status_code == 404


def test_a_new_version_maps_each_old_label_with_a_select_pre_filled_by_id(project, lead):
    """Issue 41, item 7: once annotated, the preview of a new document asks, per label of the current version, the
    label it carries over to (a select pre-filled with the label of the same id, "does not carry over" offered); the
    protocol is set from the selects, no JSON written."""
    from annotator.projects.protocol_mapping import MAPPING_FIELD, NOT_CARRIED
    from tests.test_protocol_per_project import annotate

    annotate(project)
    clinical = load_shipped("cognibench_clinical")
    preview = lead.post(reverse("project_protocol_preview", args=[project.slug]),
                        {"source": "edited", "document": json.dumps(clinical.document)}).content.decode()
    selects = preview.split('data-testid="label-mapping"')[1]
    for label in COGNIBENCH.labels:  # every current label has a select, pre-filled with the same id
        select = selects.split(f'name="{MAPPING_FIELD}{label}"')[1].split("</select>")[0]
        assert f'<option value="{label}" selected>' in select and f'value="{NOT_CARRIED}"' in select
        assert 'value="harmful"' in select  # the new version's own label is offered
    data = {"source": "edited", "document": json.dumps(clinical.document),
            **{f"{MAPPING_FIELD}{label}": label for label in COGNIBENCH.labels}, f"{MAPPING_FIELD}invented": "harmful",
            f"{MAPPING_FIELD}speculative": NOT_CARRIED}
    assert lead.post(page(project), data).status_code == 302
    version = Project.objects.get(pk=project.pk).protocol_version
    assert version.label_mapping["invented"] == "harmful" and version.label_mapping["speculative"] is None
    assert version.label_mapping["faithful"] == "faithful"


def test_a_label_left_unchosen_is_named_as_missing(project, lead):
    from annotator.projects.protocol_mapping import MAPPING_FIELD
    from tests.test_protocol_per_project import annotate

    annotate(project)
    mapping = {f"{MAPPING_FIELD}{label}": label for label in COGNIBENCH.labels} | {f"{MAPPING_FIELD}invented": ""}
    answer = lead.post(page(project), {"source": "shipped", "shipped": "cognibench_clinical", **mapping})
    assert answer.status_code == 400
    assert "<code>/label_mapping/invented</code> label &#x27;invented&#x27; of the current version needs a mapping" \
        in answer.content.decode()
    assert Project.objects.get(pk=project.pk).protocol_version_id is None


def test_the_editor_takes_yaml_as_a_loaded_file_leaves_it(project, lead):
    """The page loads a chosen .yaml file into the editor as it is; the preview and the set read it as YAML."""
    import yaml

    text = yaml.safe_dump(FACE4RAG.document, allow_unicode=True, sort_keys=False)
    preview = lead.post(reverse("project_protocol_preview", args=[project.slug]),
                        {"source": "edited", "document": text, "document_format": "yaml"}).content.decode()
    assert json.loads(unescape(preview.split('data-description="')[1].split('"')[0])) == FACE4RAG.describe()
    assert lead.post(page(project), {"source": "edited", "document": text}).status_code == 302  # read as YAML
    assert Project.objects.get(pk=project.pk).protocol_version.document == FACE4RAG.document
    refused = lead.post(page(project), {"source": "edited", "document": "name: [unclosed", "document_format": "yaml"})
    assert refused.status_code == 400 and "not YAML" in refused.content.decode()
