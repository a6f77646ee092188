"""Find in the reference (issue 38, item 9): "café" typed with a precomposed é finds "café" written as e + a
combining accent (and the other way round), and the highlight covers the original characters, accent included."""

import pytest
from playwright.sync_api import expect

from tests.conftest import start_from_queue
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory
from tests.factories_workspace import annotators

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

DECOMPOSED = "cafe\u0301"   # e + COMBINING ACUTE ACCENT
PRECOMPOSED = "caf\u00e9"   # é
REFERENCE = f"Le {DECOMPOSED} du port ouvre à sept heures. Un {PRECOMPOSED} crème coûte trois euros. Cafe\u0301s: 2."


def test_find_matches_accents_whether_composed_or_not_and_highlights_the_original_characters(page_for):
    project = ProjectFactory(name="Find")
    TurnFactory(dialogue=DialogueFactory(project=project, reference=REFERENCE), index=0,
                sentences=["Le café ouvre tôt.", "Il coûte trois euros."])
    user, = annotators(project, 1)
    page = page_for(user)
    page.set_default_timeout(60_000)  # the first page of a process is slow on a loaded machine (21 s measured)
    start_from_queue(page, project)
    page.keyboard.press("/")
    find = page.locator("#reference-find")

    def search(query):
        find.fill(query)
        return page.evaluate("() => [...CSS.highlights.get('reference-find')].map((range) => range.toString())")

    assert search(PRECOMPOSED) == [DECOMPOSED, PRECOMPOSED, "Cafe\u0301"]
    expect(page.locator("#reference-find-count")).to_have_text("1 of 3")
    assert search(DECOMPOSED) == [DECOMPOSED, PRECOMPOSED, "Cafe\u0301"]
    assert search("CAFÉS") == ["Cafe\u0301s"]
    # A match never ends inside a letter: "cafe" is not "café", as it is not with a precomposed é.
    assert search("cafe ") == []
    assert search("crème") == ["crème"]
