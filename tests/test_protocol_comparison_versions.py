"""The protocol comparison (sequential vs independent project) counts an older protocol version's answers as the
mapping carries them over, leaves out those whose label does not carry over, and its row says how many."""

import pytest

from annotator.domain.vocabulary import ProtocolMode
from annotator.reports.selectors import protocol_comparison
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory
from tests.factories_gold import annotators, submit
from tests.test_protocol_versions_counted import two_versions  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


def test_the_comparison_counts_carried_answers_and_names_those_left_out(two_versions):  # noqa: F811
    project, _, sentences = two_versions
    project.refresh_from_db()  # the API moved it to version 2
    turn = sentences[0].turn
    other = ProjectFactory(slug="independent", name="Independent", protocol_mode=ProtocolMode.INDEPENDENT)
    other_turn = TurnFactory(dialogue=DialogueFactory(project=other, external_id=turn.dialogue.external_id),
                             index=turn.index)
    assert [s.text for s in other_turn.sentences.order_by("index")] == [s.text for s in sentences]
    for annotator in annotators(other):
        submit(other_turn, annotator, ["faithful", "invented", "faithful"])

    mine, theirs = protocol_comparison(project, other)
    # Units both projects had labelled twice: "irrelevant" (version 1) does not carry over, so the project's third
    # sentence has one answer left; its second compares invented (version 1) → made_up with made_up: agreement.
    assert mine["units"] == theirs["units"] == 2
    assert mine["percent"] == 1.0
    assert mine["not_carried_over"] == 1 and theirs["not_carried_over"] == 0
    assert mine["protocol"].endswith("(1 answers of older versions left out: their label does not carry over)")
    alone, = protocol_comparison(project, None)
    assert alone["not_carried_over"] == 1 and alone["units"] == 2
