"""The annotation screen takes its answer keys from the protocol's description (protocol.describe()), never from a
second copy in the script: a description whose keys differ is what the keys follow. In Chromium."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, ProtocolMode
from tests.conftest import keys_ready
from tests.factories_workspace import annotators, project_with_turns
from tests.test_annotation_outbox_browser import labels_in_database, open_assignment, saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DATA = re.compile(r'(<script id="annotation-data" type="application/json">)(.*?)(</script>)', re.S)


def with_description(page, change):
    """Serve the annotation screen with its embedded protocol description changed by ``change(description)``."""
    def rewrite(route):
        response = route.fetch()
        html = response.text()
        match = DATA.search(html)
        data = json.loads(match.group(2))
        change(data["protocol"])
        html = html[:match.start(2)] + json.dumps(data).replace("<", "\\u003c") + html[match.end(2):]
        route.fulfill(response=response, body=html)
    page.route(re.compile(r"/a/\d+/(\?.*)?$"), rewrite)


def test_the_label_keys_are_the_descriptions(page_for):
    project, _ = project_with_turns(1, protocol_mode=ProtocolMode.INDEPENDENT)
    user, = annotators(project, 1)
    page = page_for(user)

    def eighth_key(protocol):
        protocol["labels"][-1]["key"] = "8"  # the seventh label answers to 8 instead of 7
    with_description(page, eighth_key)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/work/")
    page.locator("#start-button").click()
    page.wait_for_url(re.compile(r"/a/\d+/"))
    page.goto(page.url)  # a redirect's target is not routed: the screen again, now with the changed description
    expect(page.locator("#panel-title")).to_have_text(re.compile(r"Sentence 1 of"))
    keys_ready(page)
    page.keyboard.press("8")
    saved(page)
    assert labels_in_database(user) == [list(Label)[-1]]


def test_the_answer_keys_of_a_step_are_the_descriptions(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = page_for(user)

    def letters(protocol):
        for step in protocol["steps"].values():  # answers keyed a / b instead of 1 / 2 (and no y / n)
            for answer, key in zip(step["answers"], "ab"):
                answer["key"], answer["yn"] = key, ""
    with_description(page, letters)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/work/")
    page.locator("#start-button").click()
    page.wait_for_url(re.compile(r"/a/\d+/"))
    page.goto(page.url)  # a redirect's target is not routed: the screen again, now with the changed description
    expect(page.locator("#panel-title")).to_have_text(re.compile(r"Sentence 1 of"))
    keys_ready(page)
    for key in "aaa":  # relevant, factual, faithful
        page.keyboard.press(key)
    expect(page.locator("#panel-title")).to_have_text(re.compile(r"Sentence 2 of"))
    saved(page)
    assert labels_in_database(user) == [Label.FAITHFUL]
