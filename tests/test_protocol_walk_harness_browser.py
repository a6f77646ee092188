"""The JavaScript walk against the Python walk, in a page with no server (issue 42, "The seam").

Every path shape of every shipped document (annotator/protocols/*.json) is completed with values of each step
kind, and Python says what each answer leads to (the step asked next, the label at the end) and which values a
step refuses. Chromium then walks the same paths twice: through the walk's own functions (static/js/
protocol_walk.js, the one the annotation screen, the adjudication screen and the preview use) and with the keys on
the protocol preview (static/js/protocol_preview.js, step_kinds.js), pressing each kind's keys. The page's files
are served by Playwright from static/js itself: no Django, no copy of the scripts."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.domain.protocol.document import ProtocolError, load_shipped, shipped_names
from annotator.domain.protocol.kinds import scale

pytestmark = [pytest.mark.browser]

STATIC = Path(__file__).resolve().parent.parent / "static" / "js"
ORIGIN = "http://harness.invalid"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>walk harness</title>
<script type="module">
import { AnnotationProtocol } from "./protocol_walk.js";
import { STEP_KINDS } from "./step_kinds.js";
import { commandAt, SCREENS } from "./keymap.js";
window.harness = { AnnotationProtocol, STEP_KINDS, commandAt, SCREENS };
</script><script type="module" src="./protocol_preview.js"></script></head>
<body><div data-protocol-preview><div class="protocol-tree"></div>
<div class="protocol-walk" tabindex="0" data-testid="protocol-walk" data-description="DESCRIPTION"></div></div></body></html>"""
# The adjudication screen's dispute card as templates/gold/partials/dispute.html draws it (the parts the walk uses);
# a submitted decision is kept in the page instead of being sent.
ADJUDICATION = """<!doctype html><html><head><meta charset="utf-8"><title>adjudication harness</title></head><body><script>localStorage.clear(); /* each visit walks afresh */</script>
<script type="application/json" id="protocol-data">DESCRIPTION</script>
<div id="disputes" data-protocol-checksum="harness">
<section class="card dispute dispute-open" id="dispute-1" data-dispute="1" tabindex="-1">
<form class="decision"><input type="radio" name="decision" value="protocol" data-protocol disabled>
<span data-walk-label></span><input type="hidden" name="path" value="" data-path>
<div class="walk" data-walk data-draft="{}"></div><textarea name="reason" data-reason></textarea></form></section></div>
<script>document.addEventListener("submit", (event) => { event.preventDefault(); window.sent = new FormData(event.target).get("path"); });</script>
<script type="module" src="./adjudication.js"></script></body></html>"""


def kind_of(protocol, step):
    return getattr(protocol.step(step), "kind", "choice") or "choice"


def sample_values(protocol, step):
    """Values a step of each kind takes: the smallest and the largest a multiple / scale step allows, a text."""
    found = protocol.step(step)
    kind = kind_of(protocol, step)
    values = [answer.value for answer in found.answers] if kind in ("choice", "multiple") else []
    if kind == "multiple":
        return [values[:found.min], values[len(values) - found.max:]]
    if kind == "scale":
        return [found.min, found.max]
    if kind == "text":
        return ["Cites a case that does not exist: “Smith v. Jones”, 2031."] + (["" ] if found.optional else [])
    return values


def refused_values(protocol, step):
    """Values a step of the kind must refuse (Python and JavaScript alike)."""
    found = protocol.step(step)
    kind = kind_of(protocol, step)
    if kind == "multiple":
        values = [answer.value for answer in found.answers]
        return [[], [values[1], values[0]], ["no such answer"], values[0], [values[0], values[0]]][:5 if found.min else 4]
    if kind == "scale":
        return [found.min - 1, found.max + 1, True, str(found.min)]
    if kind == "text":
        return ["x" * (found.max_length + 1), "a\x00b"] + ([] if found.optional else ["   "])
    return ["no such answer", 1]


def complete_paths(protocol):
    """Every path shape completed with each sample value of the non-choice steps on its way."""
    paths = []
    for shape in protocol.paths():
        partial = [dict()]
        while partial:
            path = partial.pop()
            step = protocol.next_step(path)
            if step is None:
                paths.append(path)
                continue
            values = [shape[step]] if step in shape else sample_values(protocol, step)
            partial.extend({**path, step: value} for value in values)
    return paths


def trace(protocol, path):
    """What Python says along ``path``: before each answer the step asked, then the label."""
    walked, steps = {}, []
    for step, value in path.items():
        steps.append(protocol.next_step(walked))
        walked = protocol.answer(walked, step, value)
    return {"steps": steps, "label": protocol.label_of(walked)}


def refusals(protocol, path):
    """For each step on ``path``, the values Python refuses there (asked with the answers before it)."""
    cases, walked = [], {}
    for step, value in path.items():
        for bad in refused_values(protocol, step):
            try:
                protocol.answer(walked, step, bad)
            except (ProtocolError, ValueError, TypeError):
                cases.append({"before": dict(walked), "step": step, "value": bad})
        walked = protocol.answer(walked, step, value)
    return cases


@pytest.fixture
def harness(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15000)
    documents = {}

    def serve(route):
        name = route.request.url[len(ORIGIN) + 1:]
        if name.startswith("harness-"):
            description = json.dumps(documents[name.removeprefix("harness-")])
            body = PAGE.replace("DESCRIPTION", description.replace("&", "&amp;").replace('"', "&quot;"))
            route.fulfill(body=body, content_type="text/html")
        elif name.startswith("adjudication-"):
            description = json.dumps(documents[name.removeprefix("adjudication-")]).replace("<", "\\u003c")
            route.fulfill(body=ADJUDICATION.replace("DESCRIPTION", description), content_type="text/html")
        elif (STATIC / name).is_file() and "/" not in name:
            route.fulfill(body=(STATIC / name).read_text(), content_type="text/javascript")
        else:
            route.fulfill(status=404, body="")

    page.route(ORIGIN + "/**", serve)

    def open_document(name, protocol, screen="harness"):
        documents[name] = protocol.describe()
        page.goto(f"{ORIGIN}/{screen}-{name}")
        if screen == "harness":
            page.wait_for_function("() => !!window.harness")
        else:
            expect(page.locator("#dispute-1")).to_be_focused()
        return page

    yield open_document
    context.close()


WALK = """([description, cases, bad]) => {
  const protocol = new window.harness.AnnotationProtocol(description);
  const walked = cases.map((path) => {
    let now = {};
    const steps = [];
    for (const [step, value] of Object.entries(path)) {
      steps.push(protocol.nextStep(now));
      now = protocol.answer(now, step, value);
      if (!now) { return { steps, label: "refused " + step }; }
    }
    return { steps, label: protocol.labelOf(now) || null, ordered: Object.keys(protocol.ordered(now)),
             undone: Object.keys(protocol.undo(now)) };
  });
  const accepted = bad.filter((c) => protocol.answer(c.before, c.step, c.value) !== null);
  return { walked, accepted };
}"""


def key_presses(protocol, step, value):
    """The keys that answer ``step`` with ``value`` on the preview (and the annotation screen): a choice's key,
    a multiple step's digits then Enter, a scale point's digit, a text typed then Ctrl+Enter (static/js/keymap.js)."""
    found = protocol.step(step)
    kind = kind_of(protocol, step)
    if kind == "choice":
        return [next(a.key for a in found.answers if a.value == value)]
    if kind == "multiple":
        return [next(a.key for a in found.answers if a.value == chosen) for chosen in value] + ["Enter"]
    if kind == "scale":
        return [scale.key_of(found, value)]
    return [("type", value), "Control+Enter"]


def press_key(page, key):
    """A key of key_presses(): a text is inserted (no keydown), a key pressed; after a text's Ctrl+Enter the keys
    are held a moment (keymap.js), so the next key waits for the hold to end."""
    if isinstance(key, tuple):
        page.keyboard.insert_text(key[1])
        return
    page.keyboard.press(key)
    if key == "Control+Enter":
        expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")


@pytest.mark.parametrize("name", shipped_names())
def test_the_javascript_walk_is_the_python_walk_on_every_path_of_every_shipped_document(harness, name):
    protocol = load_shipped(name)
    paths = complete_paths(protocol)
    assert paths and len(paths) >= len(protocol.paths())
    # Every step of the document is on some path (so every kind it has is walked).
    assert {step for path in paths for step in path} == set(protocol.describe()["steps"])
    expected = [trace(protocol, path) for path in paths]
    bad = [case for path in paths for case in refusals(protocol, path)]
    page = harness(name, protocol)
    result = page.evaluate(WALK, [protocol.describe(), paths, bad])
    for path, want, got in zip(paths, expected, result["walked"]):
        assert got["steps"] == want["steps"] and got["label"] == want["label"], (path, want, got)
        assert got["ordered"] == list(protocol.ordered(path)), path
        assert got["undone"] == list(protocol.undo(path)), path
    assert result["accepted"] == [], "values Python refuses and JavaScript took"

    # The same paths with the keys, on the preview: the label reached is Python's.
    walk = page.get_by_test_id("protocol-walk")
    for path, want in zip(paths, expected):
        walk.focus()
        page.keyboard.press("r")
        for step, value in path.items():
            expect(page.get_by_test_id("walk-question")).to_have_text(protocol.step(step).question)
            for key in key_presses(protocol, step, value):
                press_key(page, key)
        expect(page.get_by_test_id("walk-label")).to_have_text("Label: " + protocol.label_name(want["label"]))
        expect(page.get_by_test_id("walk-refused")).to_have_count(0)


@pytest.mark.parametrize("name", shipped_names())
def test_the_adjudicator_s_walk_takes_every_path_of_every_shipped_document_with_its_kinds_keys(harness, name):
    """adjudication.js on a dispute card (no server): the keys of each path give the path Python walks, sent whole
    with the decision; Enter on a multiple choice step confirms the picks instead of saving the decision."""
    protocol = load_shipped(name)
    for path in complete_paths(protocol):
        page = harness(name, protocol, screen="adjudication")
        card = page.locator("#dispute-1")
        for step, value in path.items():
            expect(card.locator(".question")).to_have_text(protocol.step(step).question)
            if kind_of(protocol, step) == "multiple":
                page.keyboard.press("Enter")  # nothing picked yet: refused, nothing sent
                expect(card.locator(".walk-refused")).to_contain_text("Pick at least")
            for key in key_presses(protocol, step, value):
                press_key(page, key)
        expect(card.locator("[data-walk-label]")).to_have_text(protocol.label_name(protocol.label_of(path)))
        assert page.evaluate("() => window.sent") is None
        assert json.loads(card.locator("[data-path]").input_value()) == path
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.sent !== undefined")
        assert json.loads(page.evaluate("() => window.sent")) == path


# ---- the keymap's one rule (static/js/keymap.js, issue 46 items 1-3) ------------------------------------------------
RULE = """() => {
  const { commandAt, SCREENS } = window.harness;
  const field = document.createElement("textarea");
  const radio = Object.assign(document.createElement("input"), { type: "radio" });
  document.body.append(field, radio);
  const at = (target, key, mods = {}) => Object.fromEntries(Object.entries(SCREENS).map(([screen, table]) =>
    [screen, commandAt({ key, target, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...mods }, table)]));
  return {
    typed: ["u", "s", "j", "n", "1", " ", "?", "r"].map((key) => at(field, key)),
    enter: at(field, "Enter"), shiftEnter: at(field, "Enter", { shiftKey: true }),
    ctrlEnter: at(field, "Enter", { ctrlKey: true }), cmdEnter: at(field, "Enter", { metaKey: true }),
    escape: at(field, "Escape"), undo: at(document.body, "u"), onRadio: at(radio, "u"), ctrlU: at(document.body, "u", { ctrlKey: true }),
  };
}"""


def test_the_keymap_s_rule_is_one_for_every_walking_screen(harness):
    """In a text field no key is a command of any screen but Ctrl/Cmd+Enter (confirm) and Esc (leave); a plain
    Enter there is "enter" (each screen says it confirms nothing); outside a field u is every screen's undo."""
    page = harness("halludetect", load_shipped("halludetect"))
    rule = page.evaluate(RULE)
    screens = {"annotation", "adjudication", "amend", "preview"}
    every = lambda command: {screen: command for screen in screens}  # noqa: E731
    assert rule["typed"] == [every("")] * 8
    assert rule["enter"] == every("enter")
    assert rule["shiftEnter"] == every("")
    assert rule["ctrlEnter"] == rule["cmdEnter"] == every("confirm")
    assert rule["escape"] == every("leave")
    assert rule["undo"] == rule["onRadio"] == every("undo")
    assert rule["ctrlU"] == every("")


TYPED = "Cites a case\nunder appeal since 2019 u s j n y 1 2 r a b"


def walk_to_the_text(page, keys):
    for key in keys:
        page.keyboard.press(key)


@pytest.mark.parametrize("screen", ["harness", "adjudication"])
def test_a_text_with_an_early_enter_and_the_keys_after_it_change_nothing_else_on_the_preview_and_the_dispute(
        harness, screen):
    """The preview and the adjudicator's walk (no server): a justification typed at 20 ms with an early Enter stays
    one text; Ctrl+Enter confirms it; keys typed right after are held; u then takes the answers back one by one
    (the text step taken back is not entered, so the next u is no letter)."""
    protocol = load_shipped("halludetect")
    page = harness("halludetect", protocol, screen=screen)
    if screen == "harness":
        page.get_by_test_id("protocol-walk").focus()
        walk, question = page.get_by_test_id("protocol-walk"), page.get_by_test_id("walk-question")
        label = page.get_by_test_id("walk-label").locator(".chip")
    else:
        walk = page.locator("#dispute-1")
        question, label = walk.locator(".question"), walk.locator("[data-walk-label] .chip")
    walk_to_the_text(page, ["n", "1", "Enter", "4"])
    field = walk.locator("[data-step-text=justification]")
    expect(field).to_be_focused()
    page.keyboard.type(TYPED, delay=20)
    expect(field).to_have_value(TYPED.replace("\n", ""))
    expect(question).to_have_text(protocol.step("justification").question)
    page.keyboard.press("Control+Enter")
    expect(label).to_have_text("Unsupported")
    page.keyboard.type(" u u r 1", delay=20)  # held: the walk keeps its label
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    expect(label).to_have_text("Unsupported")
    if screen == "adjudication":
        path = json.loads(walk.locator("[data-path]").input_value())
        assert path["justification"] == TYPED.replace("\n", "")
        assert page.evaluate("() => window.sent") is None
    page.keyboard.press("u")
    expect(question).to_have_text(protocol.step("justification").question)
    expect(field).not_to_be_focused()
    page.keyboard.press("u")
    expect(question).to_have_text(protocol.step("severity").question)
