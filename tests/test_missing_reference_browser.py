"""A turn imported without a reference says so on the annotation screen and the lead's turn page, and what the annotator
judges against, instead of an empty pane (issue 26, item 7)."""

import pytest
from playwright.sync_api import expect

from annotator import models
from annotator.domain.vocabulary import Label, Role
from annotator.work.services import submit_problems
from tests.factories import AssignmentFactory, DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_workspace import answer_label

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


def test_a_turn_without_reference_says_what_to_judge_against(page_for):
    project = ProjectFactory(slug="rc", require_evidence=True)
    turn = TurnFactory(dialogue=DialogueFactory(project=project, reference=""), user_message="")
    annotator = member(project, Role.ANNOTATOR)
    assignment = AssignmentFactory(turn=turn, annotator=annotator)
    page = page_for(annotator)
    page.goto(f"/a/{assignment.pk}/")
    expect(page.locator("#no-reference")).to_contain_text("No reference given for this turn.")
    expect(page.locator("#no-reference")).to_contain_text("Judge each sentence against the question and the dialogue")
    expect(page.locator("#no-question")).to_have_text("No question given: the answer stands on its own.")
    # Nothing to mark as evidence, so a project requiring evidence does not block the turn.
    for sentence in turn.sentences.all():
        answer_label(assignment, sentence, Label.FAITHFUL, annotator)
    assert submit_problems(models.Assignment.objects.get(pk=assignment.pk)) == []

    # The lead's page of the turn says the same.
    lead = page_for(member(project, Role.LEAD))
    lead.goto(f"/p/rc/turns/{turn.pk}/")
    expect(lead.get_by_text("No reference given: annotators judge this turn against the question and the dialogue."))\
        .to_be_visible()
