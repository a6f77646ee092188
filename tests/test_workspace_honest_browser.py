"""The annotation screen says what is saved (issue #26 items 2, 3 and 8's `v`), in Chromium.

A tab that lost a conflict shows what is saved and says what it could not keep; a reload lands where work is; `v`
opens the severity panel of the sentence the annotator just labelled.
"""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label
from tests.factories_workspace import annotators, project_with_turns
from tests.test_annotation_outbox_browser import labels_in_database, open_assignment, saved, saves_held, type_keys

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

expect.set_options(timeout=30_000)


def chip(page, number):
    return page.locator("a.sentence").nth(number - 1).locator(".chip")


def stale_tab_with_a_conflict(page_for):
    """Tab B opened before tab A labels sentence 1; B then answers sentence 1 on its old copy: a 409."""
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    first = open_assignment(page_for, user, project)
    second = first.context.new_page()
    second.set_default_timeout(30_000)
    second.on("dialog", lambda dialog: dialog.accept())
    second.goto(first.url)
    expect(second.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    type_keys(first, ["1", "1", "1"])  # faithful
    saved(first)
    # B's old copy: irrelevant ×3, made before B hears of the conflict. B's first save is held until the three
    # keys are in: a server quicker than the keys would otherwise answer 409 between them, the page would reload
    # to what is saved, and the later keys would apply there (as they should), clearing the notice.
    with saves_held(second):
        type_keys(second, ["2", "2", "2"])
    return user, second


def test_a_stale_tab_shows_what_is_saved_after_a_conflict_and_says_what_it_did_not_keep(page_for):
    user, second = stale_tab_with_a_conflict(page_for)
    expect(second.locator("#save-conflict")).to_contain_text("changed in another tab or window")
    expect(second.locator("#save-conflict")).to_contain_text("Not saved from this tab: sentence 1 (Irrelevant)")
    expect(chip(second, 1)).to_have_text("Faithful")  # what is saved, not the labels B could not save
    expect(chip(second, 2)).not_to_have_text("Irrelevant")
    expect(second.locator("#ws-progress")).to_have_text("1 of 3 sentences labelled")
    expect(second.locator("#save-status")).to_have_text("Saved")
    expect(second.locator("#save-stopped")).to_have_count(0)
    expect(second.locator("#panel-title")).to_have_text("Sentence 2 of 3")  # the first sentence without a label
    type_keys(second, ["2"])  # keys work at once on what is shown
    expect(chip(second, 2)).to_have_text("Irrelevant")
    saved(second)
    assert labels_in_database(user) == [Label.FAITHFUL, Label.IRRELEVANT]


def test_f5_after_a_conflict_shows_what_is_saved_and_keys_work(page_for):
    user, second = stale_tab_with_a_conflict(page_for)
    expect(second.locator("#save-conflict")).to_be_visible()  # after the page's own reload to what is saved
    second.reload()  # the annotator's F5
    expect(chip(second, 1)).to_have_text("Faithful")
    expect(second.locator("#save-stopped")).to_have_count(0)
    expect(second.locator("#save-status")).to_have_text("Saved")
    expect(second.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    type_keys(second, ["1", "1", "1"])
    expect(chip(second, 2)).to_have_text("Faithful")
    saved(second)
    assert labels_in_database(user) == [Label.FAITHFUL, Label.FAITHFUL]


def test_a_reload_right_after_finishing_a_sentence_opens_the_first_without_a_label_and_keys_work(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    type_keys(page, ["2"])  # sentence 1: irrelevant
    expect(page).to_have_url(re.compile(r"\?sentence=\d+$"))  # the address follows, after a pause, to sentence 2
    # Sentence 2: irrelevant, and F5 in the same moment (one script: this busy machine cannot be faster than the
    # page's 250 ms address delay otherwise). The address still names sentence 2.
    page.evaluate("""() => {
        document.activeElement.dispatchEvent(new KeyboardEvent("keydown", { key: "2", bubbles: true }));
        location.reload();
    }""")
    expect(chip(page, 2)).to_have_text("Irrelevant")
    expect(page.locator("#panel-title")).to_have_text("Sentence 3 of 3")
    type_keys(page, ["1", "1", "1"])  # faithful: every key applies
    expect(chip(page, 3)).to_have_text("Faithful")
    expect(page.locator(".panel-message.error")).to_have_count(0)
    saved(page)
    assert labels_in_database(user) == [Label.IRRELEVANT, Label.IRRELEVANT, Label.FAITHFUL]


def test_a_reload_opens_the_sentence_being_walked(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    type_keys(page, ["2", "1"])  # sentence 1 irrelevant; sentence 2 relevant (being walked)
    saved(page)
    page.locator("a.sentence").nth(0).click()  # a look back at sentence 1; the address follows
    expect(page).to_have_url(re.compile(r"\?sentence=\d+$"))
    saved(page)  # (the time spent on sentence 2 is saved too: nothing of it is kept in the browser)
    page.reload()
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")


def test_v_right_after_labelling_invented_opens_that_sentences_severity_panel(page_for):
    from tests.factories_claims import turn_with_triplets, views_project

    project = views_project(error_types=["conflation", "other"])
    turn_with_triplets(project, triplets=(("Amazon", "flows through", "Brazil"),))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    type_keys(page, ["1", "1", "2"])  # sentence 1: invented; the panel moves on to sentence 2
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    page.keyboard.press("v")  # at once, before the save is answered
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    expect(page.locator("#claims-extras .severity-picker button").first).to_be_focused()
    page.keyboard.press("4")
    expect(page.locator('#claims-extras button[data-severity="4"]')).to_have_attribute("aria-pressed", "true")
    saved(page)
    from annotator.models import SentenceAnnotation
    annotation = SentenceAnnotation.objects.get(sentence__index=0, assignment__annotator=user)
    assert (annotation.label, annotation.severity) == (Label.INVENTED, 4)
