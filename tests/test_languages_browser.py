"""Languages in a real browser: a Chinese project walked end to end, an Arabic turn read right to left.

The Chinese walk: a lead uploads a JSONL file whose turn has no units; the studio cuts it into four; two
annotators label it with the keyboard (evidence selected in Chinese); the reports show their agreement; the
lead exports the gold; the offline judge pre-labels the turn; the evaluation weighs the sentences by characters.
"""

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, Role
from annotator.models import Assignment, EvidenceSpan, GoldLabel, SentenceAnnotation
from autolabel.models import AutoLabelJob, LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.conftest import start_from_queue, submit_with_keys
from tests.factories_workspace import NO_PASSWORD, annotators

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
REFERENCE = "故宫位于北京，始建于明朝永乐四年，是世界上现存规模最大的木质结构古建筑群。"
RESPONSE = "故宫始建于明朝永乐四年。它是世界上现存规模最大的木质结构古建筑群！我认为这是中国最美的地方？总之值得一游。"
UNITS = ["故宫始建于明朝永乐四年。", "它是世界上现存规模最大的木质结构古建筑群！", "我认为这是中国最美的地方？", "总之值得一游。"]
FAITHFUL, SPECULATIVE = ("1", "1", "1"), ("y", "2", "y", "n")  # relevant (y), cognitive (2), rational (y), not grounded (n)


@pytest.fixture
def page_for(page_for):
    def open_page(user, **kwargs):
        page = page_for(user, **kwargs)
        page.set_default_timeout(30_000)
        return page

    return open_page


def annotate_turn(page, project, *, evidence_chars=None):
    start_from_queue(page, project)
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 4")
    expect(page.locator("a.sentence .sentence-text")).to_have_text(UNITS)
    expect(page.locator(".sentence-text").first).to_have_attribute("lang", "zh")
    if evidence_chars:
        start, end = evidence_chars
        # A drag from the middle of 始建 to the middle of 明朝: in Chinese a character is the unit, nothing is widened.
        page.evaluate(
            """([start, end]) => { const text = document.getElementById('reference-text').firstChild;
                 const range = document.createRange(); range.setStart(text, start); range.setEnd(text, end);
                 const s = window.getSelection(); s.removeAllRanges(); s.addRange(range); }""",
            [start, end],
        )
        page.keyboard.press("e")
        expect(page.locator("#reference-text mark.evidence")).to_have_text(REFERENCE[start:end])
    for keys in (FAITHFUL, FAITHFUL, SPECULATIVE, SPECULATIVE):
        for key in keys:
            page.keyboard.press(key)
    expect(page.locator("#ws-progress")).to_have_text("4 of 4 sentences labelled")
    submit_with_keys(page)
    page.wait_for_url(re.compile(rf"/p/{project.slug}/work/"))


@pytest.mark.worker
@pytest.mark.slow
def test_a_chinese_project_end_to_end(page_for, start_celery_worker, baseline_llm, tmp_path):
    LLMProfile.objects.create(name="Offline baseline", base_url=baseline_llm.base_url, api_key_env="", concurrency=1)
    project = ProjectFactory(name="故宫 project", slug="gugong")
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    first, second = annotators(project, 2)
    start_celery_worker(concurrency=1)

    # 1. Import: a JSONL turn in Chinese with no units.
    upload = tmp_path / "gugong.jsonl"
    upload.write_text(json.dumps({"dialogue": {"id": "gugong", "language": "chinese", "reference": REFERENCE},
                                  "turn": {"index": 0, "response": RESPONSE, "user_message": "介绍一下故宫。"}},
                                 ensure_ascii=False) + "\n", encoding="utf-8")
    page = page_for(lead)
    page.goto(f"/p/{project.slug}/imports/new/")
    page.get_by_label("Format").select_option("jsonl")
    page.get_by_label("File").set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".import-state")).to_have_text("Done", timeout=60_000)
    expect(page.locator(".import-summary")).to_contain_text(
        "1 turns, 4 sentences")
    expect(page.locator(".import-summary")).to_contain_text(
        "1 turns cut into units by the studio (1 by sentencex (Chinese, zh))")

    # 2. Two annotators label the four units with the keyboard; the first attaches evidence in Chinese.
    start = REFERENCE.index("始建") + 1
    end = REFERENCE.index("明朝") + 1
    annotate_turn(page_for(first), project, evidence_chars=(start, end))
    annotate_turn(page_for(second), project)
    span = EvidenceSpan.objects.get()
    assert (span.start, span.end, span.text) == (start, end, REFERENCE[start:end])
    labels = [a.label for a in SentenceAnnotation.objects.filter(assignment__annotator=first).order_by("sentence__index")]
    assert labels == [Label.FAITHFUL, Label.FAITHFUL, Label.SPECULATIVE, Label.SPECULATIVE]
    assert Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count() == 2
    assert sorted(GoldLabel.objects.values_list("label", flat=True)) == sorted(
        [Label.FAITHFUL, Label.FAITHFUL, Label.SPECULATIVE, Label.SPECULATIVE])

    # 3. Agreement: the reports page shows the two annotators' percent agreement.
    page.goto(f"/p/{project.slug}/reports/")
    expect(page.get_by_role("heading", name="Inter-annotator agreement")).to_be_visible()
    expect(page.locator("body")).to_contain_text("100", timeout=60_000)

    # 4. Export: the gold JSONL carries the Chinese units and their gold.
    page.goto(f"/p/{project.slug}/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export gold JSONL").first.click()
    exported = json.loads(Path(download.value.path()).read_text(encoding="utf-8").splitlines()[0])
    assert [s["text"] for s in exported["sentences"]] == UNITS
    assert [s["gold"]["label"] for s in exported["sentences"]] == ["faithful", "faithful", "speculative", "speculative"]

    # 5. Pre-label with the offline judge.
    page.get_by_role("link", name="Auto-label (LLM pre-labels)").click()
    page.get_by_label("Endpoint profile").select_option(label="Offline baseline")
    page.get_by_label("Samples", exact=True).fill("5")
    page.get_by_label("Threshold", exact=True).fill("3")
    page.get_by_role("button", name="Start auto-label job").click()
    page.wait_for_url("**/autolabel/jobs/*/")
    page.get_by_text("Done", exact=True).wait_for(timeout=90_000)
    job = AutoLabelJob.objects.get()
    assert job.status == "done"
    # Every sentence of the Chinese turn was parsed from the judge's reply (none left unread).
    assert job.predictions.count() == 4

    # 6. The evaluation weighs by characters: 12 + 6 characters of gold speculative sentences, not 2 "words".
    page.get_by_role("link", name="Evaluation against gold").click()
    page.get_by_role("heading", name="Hallucination detection by threshold").wait_for()
    evaluation = page.request.get(f"/api/v1/projects/{project.slug}/autolabel-jobs/{job.pk}/evaluation/").json()
    characters = [len(unit) - 1 for unit in UNITS]  # each unit ends with one full-width punctuation mark
    assert evaluation["words"] == sum(characters)
    assert evaluation["thresholds"]["3"]["any_hallucination"]["gold_words"] == characters[2] + characters[3]


def test_an_arabic_turn_reads_right_to_left_inside_the_english_interface(page_for):
    project = ProjectFactory(name="Arabic pilot")
    dialogue = DialogueFactory(project=project, language="ar",
                               reference="نهر النيل هو أطول نهر في العالم. يمر عبر مصر والسودان.")
    TurnFactory(dialogue=dialogue, index=0, user_message="ما هو أطول نهر في العالم؟",
                sentences=["نهر النيل هو أطول نهر في العالم.", "يمر عبر مصر والسودان.", "أعتقد أنه أجمل نهر!"])
    user, = annotators(project, 1)
    page = page_for(user, width=1280, height=800)
    start_from_queue(page, project)
    sentence = page.locator("a.sentence .sentence-text").first
    expect(sentence).to_have_attribute("dir", "rtl")
    expect(sentence).to_have_attribute("lang", "ar")
    direction = lambda selector: page.locator(selector).first.evaluate("el => getComputedStyle(el).direction")  # noqa: E731
    assert direction("a.sentence .sentence-text") == "rtl"
    assert direction("#reference-text") == "rtl"
    assert direction(".msg-current-question .msg-text") == "rtl"
    assert direction("#decision-panel .active-sentence") == "rtl"  # drawn by the page's script
    assert direction("#panel-title") == "ltr"  # the interface stays English, left to right
    # The Arabic text starts at the right edge of its box.
    box = page.locator("#reference-text").bounding_box()
    first_word = page.locator("#reference-text").evaluate(
        "el => { const r = document.createRange(); r.setStart(el.firstChild, 0); r.setEnd(el.firstChild, 3);"
        " const b = r.getBoundingClientRect(); return [b.left, b.right]; }")
    assert first_word[1] > box["x"] + box["width"] / 2
    if os.environ.get("SCREENSHOTS") or not (DOCS / "arabic-right-to-left-1280x800.png").exists():
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / "arabic-right-to-left-1280x800.png"))


def test_find_matches_chinese_and_full_width_text_on_the_right_characters_and_long_cjk_lines_wrap(page_for):
    unbroken = "长" * 3000  # a line of Chinese with no punctuation: it must wrap inside the pane
    reference = "经济数据：GDP增长了6.1%，故宫游客超过一千万。" + unbroken + "𠀀故宫"
    project = ProjectFactory(name="Find", default_language="zh")
    dialogue = DialogueFactory(project=project, language="", reference=reference)
    TurnFactory(dialogue=dialogue, index=0, sentences=UNITS)
    user, = annotators(project, 1)
    page = page_for(user, width=1280, height=800)
    start_from_queue(page, project)
    expect(page.locator("#reference-text")).to_have_attribute("lang", "zh")  # the project's default language
    page.keyboard.press("/")
    find = page.locator("#reference-find")

    def search(query):
        find.fill(query)
        return page.evaluate("""() => { const r = [...CSS.highlights.get('reference-find')];
            const t = document.getElementById('reference-text').textContent;
            return r.map((range) => range.toString()); }""")

    assert search("故宫") == ["故宫", "故宫"]  # the second after a character beyond the basic plane
    assert search("ＧＤＰ") == ["GDP"]       # full width finds half width
    assert search("gdp") == ["GDP"]
    assert search("６．１％") == ["6.1%"]
    assert search("，故宫") == ["，故宫"]      # and the full-width comma itself
    expect(page.locator("#reference-find-count")).to_have_text("1 of 1")
    page.keyboard.press("Escape")
    wraps = page.locator("#reference-text").evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    assert wraps
