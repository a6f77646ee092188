"""Every part of the studio follows the project's protocol: the two shipped example protocols (Face4RAG's
three-level typology, CogniBench with a clinical-harm step) each walked end to end through the entry points
people use: two annotators disagree on the annotation page's save route, the adjudicator walks the dispute,
agreement per step of the document, the reports page, qualification with its explanation, the export and its
re-import, and the write routes refusing what the project's protocol does not have."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.domain.colours import readable_text_colour
from annotator.domain.protocol.document import load_shipped
from annotator.models import Adjudication, Assignment, GoldLabel, Project, SentenceAnnotation
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for
from annotator.qa import qualification as q
from annotator.reports.agreement import project_agreement
from annotator.work.assignment import assignment_next
from annotator.domain.vocabulary import Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = pytest.mark.django_db

EXAMPLES = ["face4rag", "cognibench_clinical"]
TEXTS = ["The plant opened in 2019.", "Beta acquired Alpha.", "Sales rose because of the new logo."]


def walk_steps(path):
    return [{"action": "answer", "step": step, "value": value, "at": 1_700_000_000_000} for step, value in path.items()]


def save_and_submit(client, assignment, paths):
    """What the annotation page does: one sync batch with every sentence's walk, then submit."""
    sentences = list(assignment.turn.sentences.order_by("index"))
    body = {"version": 0, "changes": [
        {"request_id": uuid.uuid4().hex, "sentence": sentence.pk, "path": path, "steps": walk_steps(path)}
        for sentence, path in zip(sentences, paths)]}
    response = client.post(reverse("annotate_sync", args=[assignment.pk]), json.dumps(body),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    version = response.json()["version"]
    response = client.post(reverse("annotate_act", args=[assignment.pk, "submit"]), {"version": version})
    assert response.status_code in (200, 302), response.content
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED


def claim(client, project, user):
    client.force_login(user)
    return Assignment.objects.select_related("project", "turn__dialogue").get(pk=assignment_next(project, user).pk)


def example_project(name, slug):
    project = ProjectFactory(slug=slug, overlap=2)
    lead = member(project, Role.LEAD)
    protocol_set(project, load_shipped(name).document, user=lead)
    project.refresh_from_db()
    return project, lead


def distinct_paths(protocol, count):
    """``count`` complete paths of the protocol, each ending on a different label, deepest first."""
    by_label = {}
    for path in sorted(protocol.paths(), key=len, reverse=True):
        by_label.setdefault(protocol.label_of(path), path)
    return list(by_label.values())[:count]


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_protocol_end_to_end(name, client, tmp_path):
    protocol = load_shipped(name)
    project, lead = example_project(name, f"e2e-{name.replace('_', '-')}")
    assert protocol_for(project) == protocol
    TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    first, second, third = distinct_paths(protocol, 3)
    ann_a, ann_b = member(project, Role.ANNOTATOR), member(project, Role.ANNOTATOR)

    # The annotation page carries the project's protocol, and its chips the document's colours.
    slot_a = claim(client, project, ann_a)
    page = client.get(reverse("annotate", args=[slot_a.pk])).content.decode()
    assert json.dumps(protocol.step(protocol.start).question)[1:-1] in page
    colour = protocol.label
    assert all(f".chip-{label}{{background:{colour(label).colour};color:{readable_text_colour(colour(label).colour)}}}"
               in page for label in protocol.labels if colour(label).colour)

    # A CogniBench step is not a step of this protocol: refused with a 400, nothing written.
    sentence = slot_a.turn.sentences.order_by("index").first()
    bad = {"version": 0, "changes": [{"request_id": uuid.uuid4().hex, "sentence": sentence.pk,
                                      "path": {"relevance": "irrelevant"}, "steps": []}]}
    refused = client.post(reverse("annotate_sync", args=[slot_a.pk]), json.dumps(bad), content_type="application/json")
    if "relevance" not in protocol.steps:
        assert refused.status_code == 400 and not SentenceAnnotation.objects.exists()
    # Two annotators disagree on the second sentence only.
    save_and_submit(client, slot_a, [first, second, third])
    slot_b = claim(client, project, ann_b)
    save_and_submit(client, slot_b, [first, third, third])
    golds = {g.sentence.index: g for g in GoldLabel.objects.select_related("sentence")}
    assert {i: (g.label, g.path) for i, g in golds.items()} == {
        0: (protocol.label_of(first), first), 2: (protocol.label_of(third), third)}
    dispute = Adjudication.objects.get(status=Adjudication.Status.OPEN)
    assert dispute.sentence.index == 1

    # The adjudicator sees where the two walks diverged, in the document's words, and walks the protocol.
    adjudicator = member(project, Role.ADJUDICATOR)
    client.force_login(adjudicator)
    screen = client.get(reverse("gold_turn", args=[project.slug, dispute.turn_id])).content.decode()
    diverged = protocol.divergence(second, third)
    assert f'data-diverged="{diverged}"' in screen and protocol.step(diverged).question in screen
    response = client.post(reverse("gold_resolve", args=[project.slug, dispute.pk]),
                           {"decision": "protocol", "path": json.dumps(second), "reason": "The reference says so."})
    assert response.status_code in (200, 302)
    gold = GoldLabel.objects.get(sentence=dispute.sentence)
    assert (gold.label, gold.path, gold.provenance) == (protocol.label_of(second), second, "adjudication")

    # Agreement per step of the document, over the sentences both annotators were asked it on.
    agreement = project_agreement(project)
    assert [m["variable"] for m in agreement["measures"]] == ["label", *protocol.agreement_steps]
    assert agreement["labels"] == list(protocol.labels)
    start = next(m for m in agreement["measures"] if m["variable"] == protocol.start)
    assert start["units"] == 3 and start["title"].endswith(protocol.step(protocol.start).question)
    client.force_login(lead)
    reports = client.get(reverse("reports", args=[project.slug]))
    assert reports.status_code == 200
    assert protocol.label(protocol.label_of(second)).name in reports.content.decode()

    # A lead sets gold on a fresh turn by the override form (labels of the project's protocol only), and makes it
    # the qualification set: a newcomer who walks another way is told at which step.
    fresh = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    for sentence, path in zip(fresh.sentences.order_by("index"), [first, second, third]):
        url = reverse("gold_sentence", args=[project.slug, sentence.pk])
        assert client.post(url, {"label": "faithful" if "faithful" not in protocol.labels else "nonsense",
                                 "reason": "x"}).status_code == 400
        assert client.post(url, {"label": protocol.label_of(path), "reason": "Checked."}).status_code == 302
    q.qualification_set(project=project, actor=lead, turn_ids=[fresh.pk], pass_mark=1.0)
    newcomer = member(project, Role.ANNOTATOR)
    qualifying = q.qualification_assignment_next(project, newcomer)
    client.force_login(newcomer)
    save_and_submit(client, Assignment.objects.get(pk=qualifying.pk), [first, third, third])
    result = q.qualification_score_attempt(project, newcomer)
    assert (result.correct, result.total, result.passed) == (2, 3, False)
    wrong = next(d for d in result.details if not d["correct"])
    assert wrong["diverged_at"] == diverged
    score = client.get(reverse("qa:qualification_score", args=[project.slug])).content.decode()
    assert protocol.step(diverged).question in score

    # The export carries the protocol; a fresh project importing it gets the protocol and the same gold.
    out = tmp_path / "gold.jsonl"
    call_command("export_gold", "--project", project.slug, "--format", "jsonl", "--out", str(out), stdout=StringIO())
    assert json.loads(out.read_text().splitlines()[0]) == {"protocol": protocol.document}
    ProjectFactory(slug="copy")
    call_command("import_jsonl", "--project", "copy", str(out), stdout=StringIO(), stderr=StringIO())
    copy = Project.objects.get(slug="copy")
    assert protocol_for(copy) == protocol
    assert sorted(GoldLabel.objects.filter(sentence__turn__dialogue__project=copy).values_list("label", flat=True)) \
        == sorted(GoldLabel.objects.filter(sentence__turn__dialogue__project=project).values_list("label", flat=True))
