"""Readers of a path beyond the walk, with step kinds (issue 42): questions to the lead and their guideline
examples, the protocol reading the studio's pages share."""

import json

import pytest

from annotator.domain.protocol.document import PROTOCOLS_DIR, load_shipped
from annotator.domain.protocol.groups import reading
from annotator.domain.vocabulary import Role
from annotator.models import Project
from annotator.projects.protocol_services import protocol_set
from annotator.qa import services as qa
from annotator.qa.services import QAError
from tests.factories import ProjectFactory, TurnFactory, member

HALLU = load_shipped("halludetect")
ASKED_AT_SEVERITY = {"supported": "no", "error_types": ["fabricated", "outdated_law"]}


@pytest.mark.django_db
def test_a_question_asked_at_a_scale_step_keeps_its_path_and_cannot_become_an_example_of_it():
    project = ProjectFactory()
    protocol_set(project, json.loads((PROTOCOLS_DIR / "halludetect.json").read_text()))
    project = Project.objects.get(pk=project.pk)
    turn = TurnFactory(dialogue__project=project)
    annotator, lead = member(project, Role.ANNOTATOR), member(project, Role.LEAD)
    question = qa.question_ask(project=project, user=annotator, turn=turn, sentence=turn.sentences.first(),
                               path=ASKED_AT_SEVERITY, body="Is a wrong year cosmetic?")
    assert (question.step, question.path) == ("severity", ASKED_AT_SEVERITY)
    qa.question_answer(question=question, lead=lead, body="Only if nothing depends on it.")
    with pytest.raises(QAError, match=r"\(scale\) there is no single expected answer"):
        qa.question_promote_to_guideline(question=question, actor=lead, expected_answer="1")
    example = qa.question_promote_to_guideline(question=question, actor=lead, step="supported", expected_answer="no")
    assert (example.step, example.is_positive) == ("supported", False)


def test_the_reading_counts_shapes_and_offers_the_answers_a_step_has():
    read = reading(HALLU)
    assert read.label_paths == {"supported": [{"supported": "yes"}], "unsupported": [{"supported": "no"}]}
    assert read.step_answers["error_types"] == HALLU.step("error_types").values
    assert read.step_answers["severity"] == () and read.step_options["justification"] == ()
    assert read.step_parents["error_types"] == (("supported", "no"),)
    complete = {**ASKED_AT_SEVERITY, "severity": 2, "justification": "x"}
    assert not read.evidence_required(complete) and read.evidence_required({"supported": "yes"})
