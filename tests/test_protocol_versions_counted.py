"""Work done under two versions of a project's protocol: gold and agreement count old labels as the mapping carries
them over, leave out the ones mapped to null, and the reports say so. Driven through the entry points: the
annotation screen's sync and submit, the API's protocol PUT and adjudication, the reports page and its API."""

import copy
import json
import uuid

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotator.domain.protocol.document import COGNIBENCH
from annotator.domain.vocabulary import Role
from annotator.models import Adjudication, Assignment, GoldLabel
from annotator.work.assignment import assignment_next
from tests.factories import ProjectFactory, member
from tests.factories_workspace import annotators, project_with_turns

pytestmark = pytest.mark.django_db


def renamed_document() -> dict:
    """CogniBench's document as a version 2 in which "invented" is called "made_up"."""
    text = json.dumps(COGNIBENCH.document).replace('"invented"', '"made_up"')
    document = json.loads(text)
    document["version"] = 2
    return document


V2 = renamed_document()
# "invented" carries over as "made_up"; "irrelevant" does not carry over (v2's relevance means something else).
MAPPING = {label: label for label in COGNIBENCH.labels} | {"invented": "made_up", "irrelevant": None}


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def label_turn(project, user, labels, protocol_document):
    """``user`` takes the turn the project gives next, labels its sentences through the screen's sync, submits."""
    from annotator.domain.protocol.document import load_protocol

    protocol = load_protocol(protocol_document)
    client = browser(user)
    assignment = Assignment.objects.get(pk=assignment_next(project, user).pk)
    sentences = list(assignment.turn.sentences.order_by("index"))
    changes = []
    for sentence, label in zip(sentences, labels):
        path = protocol.path_for_label(label)
        changes.append({"request_id": uuid.uuid4().hex, "sentence": sentence.pk, "path": path,
                        "steps": [{"action": "answer", "step": s, "value": v, "at": 1_700_000_000_000}
                                  for s, v in path.items()]})
    saved = client.post(f"/a/{assignment.pk}/sync/", json.dumps({"version": 0, "changes": changes}),
                        content_type="application/json")
    assert saved.status_code == 200, saved.content
    submitted = client.post(f"/a/{assignment.pk}/submit/", {"version": saved.json()["version"],
                                                            "request_id": uuid.uuid4().hex}, HTTP_HX_REQUEST="true")
    assert submitted.status_code == 200 and "HX-Redirect" in submitted, submitted.content
    return assignment, sentences


def new_version(project, lead):
    api = APIClient()
    api.force_authenticate(lead)
    response = api.put(f"/api/v1/projects/{project.slug}/protocol/", {"document": V2, "label_mapping": MAPPING},
                       format="json")
    assert response.status_code == 200, response.content


@pytest.fixture
def two_versions():
    """One turn of three sentences, overlap 2: the first annotator under CogniBench (version 1), the second under
    version 2, after the lead moved the project on."""
    project, _ = project_with_turns(1, overlap=2)
    first, second = annotators(project, 2)
    lead = member(project, Role.LEAD)
    _, sentences = label_turn(project, first, ["faithful", "invented", "irrelevant"], COGNIBENCH.document)
    assert not GoldLabel.objects.exists()  # one annotator of two: nothing to compare yet
    new_version(project, lead)
    label_turn(project, second, ["faithful", "made_up", "faithful"], V2)
    return project, lead, sentences


def test_gold_counts_an_old_label_as_the_mapping_carries_it_over(two_versions):
    project, _, sentences = two_versions
    gold = {g.sentence_id: g for g in GoldLabel.objects.all()}
    assert gold[sentences[0].pk].label == "faithful"
    # "invented" (version 1) and "made_up" (version 2) agree: the mapping says they mean the same.
    assert gold[sentences[1].pk].label == "made_up"
    assert gold[sentences[1].pk].path == {"relevance": "relevant", "kind": "factual", "faithfulness": "made_up"}
    assert "counted as the mapping to version 2 carries them over" in gold[sentences[1].pk].reason
    assert "version 1" in gold[sentences[1].pk].reason
    # "irrelevant" does not carry over: that answer is left out, so the sentence has no agreement: a dispute.
    assert sentences[2].pk not in gold
    assert Adjudication.objects.filter(sentence=sentences[2], status=Adjudication.Status.OPEN).exists()


def test_an_adjudicator_cannot_side_with_an_answer_that_does_not_carry_over(two_versions):
    project, lead, sentences = two_versions
    dispute = Adjudication.objects.get(sentence=sentences[2])
    old_slot = Assignment.objects.get(turn=dispute.turn, protocol_version__number=1)
    api = APIClient()
    api.force_authenticate(lead)
    url = f"/api/v1/projects/{project.slug}/adjudications/{dispute.pk}/resolve/"
    refused = api.post(url, {"side": old_slot.pk, "reason": "the first annotator"}, format="json")
    assert refused.status_code == 400 and "does not carry over" in json.dumps(refused.json())
    new_slot = Assignment.objects.get(turn=dispute.turn, protocol_version__isnull=True)
    assert api.post(url, {"side": new_slot.pk, "reason": "the second annotator"}, format="json").status_code == 200
    assert GoldLabel.objects.get(sentence=sentences[2]).label == "faithful"


def test_agreement_compares_carried_labels_and_says_what_it_left_out(two_versions):
    project, lead, _ = two_versions
    api = APIClient()
    api.force_authenticate(lead)
    report = api.get(f"/api/v1/projects/{project.slug}/reports/agreement/").json()["agreement"]
    final = next(m for m in report["measures"] if m["variable"] == "label")
    # Two sentences compared (faithful/faithful, invented→made_up/made_up), both agreeing; the third left out.
    assert final["units"] == 2 and final["percent"] == 1.0
    faithfulness = next(m for m in report["measures"] if m["variable"] == "faithfulness")
    assert faithfulness["units"] == 2 and faithfulness["percent"] == 1.0  # per step: the carried label's path
    assert report["older_versions"] == [{"version": 1, "counted": 2, "left_out": 1, "left_out_labels": ["irrelevant"]}]
    html = browser(lead).get(f"/p/{project.slug}/reports/").content.decode()
    assert ("Project version 1: 2 submitted answers counted in every figure below with the label the mapping "
            "carries them over to; 1 left out, since irrelevant does not carry over.") in html


def test_a_project_that_never_changed_its_protocol_reports_no_older_versions():
    project, _ = project_with_turns(1, overlap=2)
    first, second = annotators(project, 2)
    lead = member(project, Role.LEAD)
    label_turn(project, first, ["faithful", "invented", "irrelevant"], COGNIBENCH.document)
    label_turn(project, second, ["faithful", "invented", "faithful"], COGNIBENCH.document)
    api = APIClient()
    api.force_authenticate(lead)
    report = api.get(f"/api/v1/projects/{project.slug}/reports/agreement/").json()["agreement"]
    assert report["older_versions"] == []
    assert next(m for m in report["measures"] if m["variable"] == "label")["units"] == 3
    assert 'data-testid="older-versions"' not in browser(lead).get(f"/p/{project.slug}/reports/").content.decode()


def test_two_steps_of_mapping_compose():
    """Version 1 → 2 → 3: a version 1 label counts as version 3 by way of version 2's label."""
    from annotator.projects.protocol_mapping import version_carry
    from annotator.projects.protocol_services import protocol_set

    project, _ = project_with_turns(1, overlap=2)
    first, second = annotators(project, 2)
    label_turn(project, first, ["faithful", "invented", "irrelevant"], COGNIBENCH.document)
    new_version(project, member(project, Role.LEAD))
    v3 = copy.deepcopy(V2)
    v3["version"] = 3
    v3 = json.loads(json.dumps(v3).replace('"made_up"', '"fabricated"'))
    project.refresh_from_db()
    protocol_set(project, v3, label_mapping={label: label for label in COGNIBENCH.labels if label != "invented"}
                 | {"made_up": "fabricated"})
    project.refresh_from_db()
    carry = version_carry(project)
    version_one = Assignment.objects.get(annotator=first).protocol_version_id
    assert carry.carry(version_one, "invented") == "fabricated"
    assert carry.carry(version_one, "irrelevant") is None
    assert carry.carry(None, "fabricated") == "fabricated"
    assert carry.carry_gold("made_up") == "fabricated" and carry.carry_gold("fabricated") == "fabricated"


def test_gold_of_an_older_version_is_reported_as_the_mapping_carries_it_over():
    project, _ = project_with_turns(1, overlap=2)
    first, second = annotators(project, 2)
    lead = member(project, Role.LEAD)
    for annotator in (first, second):  # the whole turn under version 1: its gold is in version 1's labels
        label_turn(project, annotator, ["faithful", "invented", "irrelevant"], COGNIBENCH.document)
    assert sorted(GoldLabel.objects.values_list("label", flat=True)) == ["faithful", "invented", "irrelevant"]
    new_version(project, lead)
    api = APIClient()
    api.force_authenticate(lead)
    gold = api.get(f"/api/v1/projects/{project.slug}/reports/agreement/").json()["gold"]
    counts = {row["label"]: row["count"] for row in gold["labels"]}
    assert counts["made_up"] == 1 and counts["faithful"] == 1 and "invented" not in counts
    assert gold["left_out_by_older_versions"] == 1 and gold["total"] == 2
    html = browser(lead).get(f"/p/{project.slug}/reports/").content.decode()
    assert "1 gold label decided under an older version left out of the gold figures" in html


def test_cached_reports_follow_a_changed_document_under_the_same_id_and_version():
    """A lead who sets a reworded document without raising its version number sees the new wording at once:
    the reports' cache is keyed by the project's protocol version and the document's checksum."""
    from django.core.cache import cache

    from annotator.domain.protocol.document import default_protocol
    from annotator.projects.protocol_services import protocol_set
    from annotator.reports.agreement import project_agreement_cached

    cache.clear()
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    document = copy.deepcopy(default_protocol().document)
    protocol_set(project, document, user=lead)
    project.refresh_from_db()
    start = document["start"]
    titles = {m["variable"]: m["title"] for m in project_agreement_cached(project)["measures"]}
    assert titles[start].endswith(default_protocol().step(start).question)

    next(step for step in document["steps"] if step["id"] == start)["question"] = "Does the sentence say anything?"
    protocol_set(project, document, user=lead)
    project.refresh_from_db()
    titles = {m["variable"]: m["title"] for m in project_agreement_cached(project)["measures"]}
    assert titles[start].endswith("Does the sentence say anything?")
