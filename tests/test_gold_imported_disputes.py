"""Two annotators who disagree always reach the adjudication queue, also on sentences whose gold came with the
data (issue 17); the project says whether imported gold is final or a reference."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotator import models
from annotator.domain import protocol
from annotator.domain.vocabulary import GoldProvenance, ImportedGold, Role
from annotator.gold.derivation import gold_derive_for_turn
from tests.conftest import SHARED_DATA
from tests.factories import member
from tests.factories_gold import annotators, submit

pytestmark = pytest.mark.django_db
CB = SHARED_DATA / "cognibench-sample"


def imported_turn(slug):
    """The first CogniBench sample turn whose every sentence has imported gold, and its labels."""
    call_command("import_cognibench", "--project", slug, "--create", str(CB / "dialogues.json"), str(CB / "labels.json"),
                 stdout=StringIO())
    project = models.Project.objects.get(slug=slug)
    for turn in models.Turn.objects.filter(dialogue__project=project).order_by("pk"):
        sentences = list(turn.sentences.order_by("index"))
        gold = {g.sentence_id: g.label for g in models.GoldLabel.objects.filter(sentence__in=sentences)}
        if len(sentences) >= 3 and len(gold) == len(sentences) and \
                all(g.provenance == GoldProvenance.IMPORTED for g in models.GoldLabel.objects.filter(sentence__in=sentences)):
            return project, turn, [gold[s.pk] for s in sentences]
    raise AssertionError("no fully labelled turn in the sample")


def other_than(label):
    return next(p for p in protocol.paths() if protocol.label_of(p) != label and protocol.label_of(p))


def disagree_on_the_first(project, turn, labels):
    first, second = annotators(project)
    mine = list(labels)
    theirs = [protocol.label_of(other_than(labels[0]))] + list(labels[1:])
    submit(turn, first, mine)
    submit(turn, second, theirs)
    return gold_derive_for_turn(turn)


def test_a_disagreement_on_imported_gold_reaches_the_queue_and_its_decision_replaces_the_gold():
    project, turn, labels = imported_turn("cb-final")
    result = disagree_on_the_first(project, turn, labels)
    first_sentence = turn.sentences.order_by("index").first()
    assert result.disputed == [first_sentence.pk] and result.agreed == []  # agreement keeps final imported gold
    assert models.GoldLabel.objects.get(sentence=first_sentence).provenance == GoldProvenance.IMPORTED

    judge = member(project, Role.ADJUDICATOR)
    client = Client()
    client.force_login(judge)
    queue = client.get(f"/p/{project.slug}/adjudication/").content.decode()
    assert "No open disputes" not in queue and "1 gold imported" in queue
    screen = client.get(f"/p/{project.slug}/adjudication/turn/{turn.pk}/").content.decode()
    assert f'data-imported-gold="{labels[0]}"' in screen and "disagreement, gold imported" in screen

    adjudication = models.Adjudication.objects.get(sentence=first_sentence)
    side = models.Assignment.objects.filter(turn=turn).order_by("pk").last()
    response = client.post(f"/p/{project.slug}/adjudication/{adjudication.pk}/resolve/",
                           {"decision": f"side-{side.pk}", "reason": "The second annotator is right."})
    assert response.status_code == 302
    gold = models.GoldLabel.objects.get(sentence=first_sentence)
    assert (gold.provenance, gold.label) == (GoldProvenance.ADJUDICATION, protocol.label_of(other_than(labels[0])))
    assert models.GoldEvent.objects.filter(sentence=first_sentence, old_label=labels[0]).exists()


def test_imported_gold_as_a_reference_gives_way_to_the_annotators_agreement():
    project, turn, labels = imported_turn("cb-reference")
    project.imported_gold = ImportedGold.REFERENCE
    project.save(update_fields=["imported_gold"])
    result = disagree_on_the_first(project, turn, labels)
    sentences = list(turn.sentences.order_by("index"))
    assert result.disputed == [sentences[0].pk]
    assert result.agreed == [s.pk for s in sentences[1:]]
    agreed = models.GoldLabel.objects.get(sentence=sentences[1])
    assert agreed.provenance == GoldProvenance.AGREEMENT and f"the imported gold was {labels[1]}" in agreed.reason
    assert gold_derive_for_turn(turn).disputed == []  # deciding again changes nothing


def test_leads_choose_the_order_of_the_queue_and_what_imported_gold_is():
    project, turn, labels = imported_turn("cb-order")
    lead, judge = member(project, Role.LEAD), member(project, Role.ADJUDICATOR)
    client = Client()
    client.force_login(judge)
    assert client.post(f"/p/{project.slug}/adjudication/settings/", {"adjudication_order": "most_disputed",
                                                                    "imported_gold": "reference"}).status_code == 404
    assert 'name="adjudication_order"' not in client.get(f"/p/{project.slug}/adjudication/").content.decode()
    client.force_login(lead)
    assert 'name="adjudication_order"' in client.get(f"/p/{project.slug}/adjudication/").content.decode()
    bad = client.post(f"/p/{project.slug}/adjudication/settings/", {"adjudication_order": "random", "imported_gold": "x"})
    assert bad.status_code == 400
    # The form as the page sends it: every setting of adjudication (the drawn turns' review is one of them).
    saved = client.post(f"/p/{project.slug}/adjudication/settings/", {
        "adjudication_order": "most_disputed", "imported_gold": "reference", "drawn_turn_review": "double"})
    assert saved.status_code == 302
    project.refresh_from_db()
    assert (project.adjudication_order, project.imported_gold) == ("most_disputed", "reference")
    assert "most disputed turns first" in client.get(f"/p/{project.slug}/adjudication/").content.decode()
