"""A turn in a script the browser has no font for says so (static/js/script_glyphs.js): Chinese without a CJK
font shows as empty boxes, and the page tells the reader why. Whether this machine's Chromium has a Chinese font
is read from fontconfig, which Chromium uses on Linux, so the test holds on a machine with one and without."""

import shutil
import subprocess

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_workspace import NO_PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


def machine_has_font_for(language: str) -> bool:
    if not shutil.which("fc-list"):
        pytest.skip("fontconfig's fc-list is not installed: cannot tell which fonts Chromium has")
    listed = subprocess.run(["fc-list", f":lang={language}", "family"], capture_output=True, text=True, check=True)
    return bool(listed.stdout.strip())


def open_turn(page_for, language, reference, sentences):
    project = ProjectFactory()
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    turn = TurnFactory(dialogue=DialogueFactory(project=project, language=language, reference=reference),
                       sentences=sentences)
    page = page_for(lead)
    page.set_default_timeout(60_000)  # the turn page on a loaded machine
    page.goto(f"/p/{project.slug}/turns/{turn.pk}/")
    expect(page.locator("[lang]").first).to_be_attached()
    # The check runs once the page's scripts have run: wait for it to have had its chance.
    page.wait_for_load_state("load")
    return page


@pytest.mark.parametrize("language, script, reference, sentences", [
    ("zh", "Chinese", "故宫位于北京。", ["故宫始建于明朝永乐四年。", "总之值得一游。"]),
    ("ru", "Cyrillic", "Москва — столица России.", ["Москва — столица России."]),
])
def test_a_turn_says_when_the_browser_has_no_font_for_its_script(page_for, language, script, reference, sentences):
    page = open_turn(page_for, language, reference, sentences)
    notice = page.locator("#missing-glyphs")
    if machine_has_font_for(language):
        expect(notice).to_have_count(0)
    else:
        expect(notice).to_contain_text(f"no font for {script} text")
        expect(notice).to_contain_text("fonts-noto-cjk")


def test_an_english_turn_says_nothing_of_fonts(page_for):
    page = open_turn(page_for, "english", "The Amazon flows through Brazil.", ["The Amazon flows through Brazil."])
    expect(page.locator("main")).to_contain_text("The Amazon flows through Brazil.")
    expect(page.locator("#missing-glyphs")).to_have_count(0)
