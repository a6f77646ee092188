"""A lead browses a project's data in a real browser: filters (htmx) and a turn with its gold."""

import pytest

from annotator import models
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_lead_filters_turns_and_opens_one(page_for, live_server):
    project = ProjectFactory(slug="b", name="Browsing")
    for n, topic in enumerate(["rivers", "rivers", "castles"]):
        TurnFactory(dialogue=DialogueFactory(project=project, external_id=f"d-{n}", topic=topic), index=0)
    turn = models.Turn.objects.get(dialogue__external_id="d-2")
    models.GoldLabel.objects.create(sentence=turn.sentences.get(index=1), label=Label.SPECULATIVE,
                                    path=path_for_label(Label.SPECULATIVE), provenance=GoldProvenance.IMPORTED)
    page = page_for(member(project, Role.LEAD))
    page.goto("/p/b/")
    page.get_by_role("link", name="Browse turns").click()
    page.get_by_text("3 turns").wait_for()
    page.get_by_label("Topic").select_option("castles")
    page.get_by_text("1 turn", exact=True).wait_for()
    assert "topic=castles" in page.url  # the filter is in the address, so it can be shared or reloaded
    page.get_by_role("link", name="d-2").click()
    page.get_by_role("heading", name="d-2 · turn 0").wait_for()
    row = page.locator("#sentence-1")
    assert "Speculative" in row.inner_text() and "Imported" in row.inner_text()
    assert page.get_by_role("heading", name="Reference").is_visible()


def test_annotator_gets_no_data_link_and_no_page(page_for):
    project = ProjectFactory(slug="c")
    page = page_for(member(project, Role.ANNOTATOR))
    page.goto("/p/c/")
    assert page.get_by_role("link", name="Browse turns").count() == 0
    response = page.goto("/p/c/turns/")
    assert response.status == 404
