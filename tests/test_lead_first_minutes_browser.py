"""A new lead's first ten minutes, in a real browser (issue 41, "Done when"): a lead who is not staff creates a
project for Chinese dialogues, loads their own protocol file into the Protocol page (previewed, then set), imports
Chinese data, reviews the units (one holds two sentences: split), invites a person who has no account (who signs up
through the link), adds a second annotator and an adjudicator, and the two annotators and the adjudicator finish
with the keyboard only. No request goes to /admin/; the pages are screenshotted at 1280×800 and 1024×768 into
docs/screenshots/ and have no serious accessibility violation."""

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import Group, Permission
from playwright.sync_api import expect

from annotator import models
from annotator.domain.vocabulary import Role
from tests.conftest import keys_ready, press_start, submit_with_keys
from tests.factories import ProjectFactory, UserFactory, member
from tests.test_accessibility_browser import violations_on
from tests.test_invite_browser import signed_out_page  # noqa: F401  (the fixture: a browser page with no session)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

HERE = Path(__file__).resolve().parent
SCREENSHOTS = HERE.parent / "docs" / "screenshots"
PROTOCOL = json.loads((HERE / "data" / "ragtruth_like.json").read_text())  # a protocol the studio does not ship
REFERENCE = "故宫位于北京，始建于明朝永乐四年，1420年建成。天坛是明清两代皇帝祭天的地方。"
JOINED = "故宫位于北京。它建于1420年。"  # imported as one unit: the guide's "Review units" lists it
SECOND = "天坛是皇帝祭天的地方。"
SIZES = ((1280, 800), (1024, 768))


def shoot(page, name):
    """With SCREENSHOTS=1, the docs' screenshots taken again (as the other browser tests do); a plain run writes
    no tracked file."""
    for width, height in SIZES if os.environ.get("SCREENSHOTS") else ():
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"first-minutes-{name}-{width}x{height}.png"))
    page.set_viewport_size({"width": 1280, "height": 800})


def chinese_jsonl(path):
    records = [
        {"dialogue": {"id": "gugong", "language": "zh", "reference": REFERENCE},
         "turn": {"index": 0, "response": JOINED, "user_message": "介绍一下故宫。"},
         "sentences": [{"index": 0, "start": 0, "end": len(JOINED), "text": JOINED}]},
        {"dialogue": {"id": "tiantan", "language": "zh", "reference": REFERENCE},
         "turn": {"index": 0, "response": SECOND, "user_message": "天坛是什么？"}},
    ]
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")
    return path


def annotate_with_keys(page, project, keys_for):
    """Every turn of the annotator's queue, each sentence labelled with the keys ``keys_for(its text)`` and the
    turn submitted with s, with the keyboard only (submitting opens the next turn, or the queue)."""
    page.goto(f"/p/{project.slug}/work/")
    press_start(page)
    while re.search(r"/a/\d+/", page.url):
        screen = re.search(r"/a/\d+/", page.url).group(0)
        keys_ready(page)
        total = int(re.search(r"of (\d+)", page.locator("#ws-progress").inner_text()).group(1))
        for done in range(total):
            text = page.locator("a.sentence.active .sentence-text").inner_text()
            for key in keys_for(text):
                page.keyboard.press(key)
            expect(page.locator("#ws-progress")).to_contain_text(f"{done + 1} of {total}")
        submit_with_keys(page)
        page.wait_for_url(lambda url: screen not in url)


@pytest.mark.worker
def test_a_new_lead_goes_from_nothing_to_adjudicated_gold_without_the_admin(
        page_for, signed_out_page, start_celery_worker, private_files, tmp_path):
    start_celery_worker(extra_env={"MEDIA_ROOT": str(private_files)})
    lena = UserFactory(username="lena")
    group = Group.objects.create(name="Project creators")
    group.permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    lena.groups.add(group)
    earlier = ProjectFactory(slug="earlier")  # people Lena already works with
    models.Membership.objects.create(project=earlier, user=lena, role=Role.LEAD)
    ana = member(earlier, Role.ANNOTATOR, username="ana")
    adi = member(earlier, Role.ANNOTATOR, username="adi")

    lead = page_for(lena)
    lead.set_default_timeout(60_000)
    visited = []
    lead.on("request", lambda request: visited.append(request.url))
    signed_out_page.on("request", lambda request: visited.append(request.url))
    found = []

    # 1. A new project for Chinese dialogues.
    lead.goto("/")
    lead.get_by_role("link", name="New project").click()
    lead.get_by_label("Name", exact=True).fill("Palace study")
    lead.get_by_label("Language of the dialogues").fill("zh")
    lead.get_by_role("button", name="Create the project").click()
    expect(lead.get_by_role("heading", name="Palace study")).to_be_visible()
    project = models.Project.objects.get(slug="palace-study")
    assert project.default_language == "zh"

    # 2. Their own protocol: the file is loaded into the editor and previewed, and set only on confirmation.
    lead.locator("#step-protocol").get_by_role("link").click()
    protocol_file = tmp_path / "ragtruth.yaml"
    protocol_file.write_text(yaml.safe_dump(PROTOCOL, allow_unicode=True, sort_keys=False))
    lead.locator("#id_file").set_input_files(str(protocol_file))
    expect(lead.get_by_test_id("walk-question")).to_have_text("Does the sentence make a claim?")
    lead.get_by_test_id("protocol-walk").focus()
    lead.keyboard.press("1")
    lead.keyboard.press("1")
    expect(lead.get_by_test_id("walk-label")).to_have_text("Label: Supported")
    assert models.Project.objects.get(pk=project.pk).protocol_version is None or \
        models.Project.objects.get(pk=project.pk).protocol_version.document["id"] != PROTOCOL["id"]
    shoot(lead, "protocol-preview")
    lead.get_by_role("button", name="Set the protocol").click()
    expect(lead.get_by_test_id("protocol-current")).to_contain_text(PROTOCOL["name"])
    found += violations_on(lead, f"/p/{project.slug}/protocol/")

    # 3. Chinese data, imported from the guide.
    lead.goto(f"/p/{project.slug}/")
    lead.locator("#step-import").get_by_role("link", name="Import a file").click()
    # A project whose protocol's labels are not CogniBench's offers Project JSONL first (issue 50, item 4): the
    # lead keeps the default format.
    expect(lead.get_by_label("Format")).to_have_value("jsonl")
    lead.get_by_label("File").set_input_files(str(chinese_jsonl(tmp_path / "palace.jsonl")))
    lead.get_by_role("button", name="Import").click()
    expect(lead.locator(".import-summary")).to_contain_text("2 turns", timeout=120_000)

    # 4. Review units: the joined unit is listed, and split on its turn's page.
    lead.goto(f"/p/{project.slug}/")
    units = lead.locator("#step-units")
    expect(units).to_contain_text("holds 2 sentences")
    shoot(lead, "guide")
    found += violations_on(lead, f"/p/{project.slug}/")
    units.get_by_test_id("units-to-review").get_by_role("link").first.click()
    row = lead.locator("#unit-0")
    cut = JOINED.index("它")
    row.locator(f'label.unit-gap:has(input[value="{cut}"])').click()
    row.get_by_role("button", name="Split here").click()
    expect(lead.locator("#unit-1")).to_contain_text("它建于1420年。")
    lead.goto(f"/p/{project.slug}/")
    expect(lead.locator("#step-units")).to_contain_text("finds one sentence in each")

    # 5. People: an invite link for someone with no account, who signs up through it; Ana and Adi by username.
    lead.locator("#step-people").get_by_role("link", name="Add people").click()
    lead.get_by_label("They join as").select_option("annotator")
    lead.get_by_role("button", name="Make an invite link").click()
    link = lead.get_by_label("Invite link 1").input_value()
    for username, role in (("ana", "annotator"), ("adi", "adjudicator")):
        lead.get_by_label("Username", exact=True).fill(username)
        lead.get_by_label("Role", exact=True).select_option(role)
        lead.get_by_role("button", name="Add", exact=True).click()
        expect(lead.get_by_text(f"{username} joined as {role}.")).to_be_visible()

    newcomer = signed_out_page
    newcomer.goto(link)
    expect(newcomer.get_by_role("heading", name="Join Palace study")).to_be_visible()
    shoot(newcomer, "invite")
    found += violations_on(newcomer, "/join/")
    signup = newcomer.locator("#join-signup")
    signup.get_by_label("Username").fill("nina")
    signup.get_by_label("Password", exact=True).fill("violet-harbour-1987")
    signup.get_by_label("Password confirmation").fill("violet-harbour-1987")
    signup.get_by_role("button", name="Create my account and join as annotator").click()
    expect(newcomer.get_by_role("heading", name="Palace study")).to_be_visible()

    # 6. Two annotators with the keyboard only: both turns; they disagree on the unit split off the first turn
    #    (Nina: supported, 1 1; Ana: no claim, 2).
    annotate_with_keys(newcomer, project, lambda text: ("1", "1"))  # a claim (1), supported (1)
    shoot(newcomer, "queue")
    second = page_for(ana)
    second.set_default_timeout(60_000)
    second.on("request", lambda request: visited.append(request.url))
    annotate_with_keys(second, project, lambda text: ("2",) if text == "它建于1420年。" else ("1", "1"))  # no claim
    assert models.Adjudication.objects.filter(turn__dialogue__project=project, status="open").count() == 1

    # 7. The adjudicator decides the dispute with the keyboard and moves on with n.
    judge = page_for(adi)
    judge.set_default_timeout(60_000)
    judge.on("request", lambda request: visited.append(request.url))
    judge.goto(f"/p/{project.slug}/adjudication/")
    judge.get_by_role("link", name=re.compile(r"^Adjudicate ")).first.click()
    expect(judge.locator("[data-dispute].active")).to_have_count(1)
    shoot(judge, "adjudication")
    judge.keyboard.press("a")
    judge.keyboard.press("r")
    judge.keyboard.type("它建于1420年 is a claim the reference supports.")
    judge.keyboard.press("Control+Enter")  # the reason is sent with Ctrl+Enter (issue 46)
    expect(judge.locator("#turn-done")).to_be_visible()
    expect(judge.locator("html")).not_to_have_attribute("data-keys-held", "true")  # keys right after typing are held
    judge.keyboard.press("n")
    judge.wait_for_url(re.compile(rf"/p/{project.slug}/adjudication/$"))

    gold = models.GoldLabel.objects.filter(sentence__turn__dialogue__project=project)
    assert gold.count() == 3 and set(gold.values_list("label", flat=True)) == {"supported"}
    assert not [url for url in visited if "/admin/" in url]
    assert not lena.is_staff
    assert not found, "\n".join(found)
