"""The annotation page keeps answers in the browser and saves them in the background (issue #15), in Chromium.

Keys typed faster than the server answers, offline stretches, reloads with unsent changes and a second tab:
every answer ends in the database (SentenceAnnotation) and the audit history (AnnotationEvent) exactly once,
on the sentence it was meant for.
"""

import re
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from annotator.domain import protocol
from annotator.models import AnnotationEvent, Assignment, SentenceAnnotation
from annotator.domain.vocabulary import STEP_ANSWERS, Label, ProtocolMode, Step
from tests.conftest import keys_ready, submit_with_keys
from tests.factories_workspace import annotators, numbered_sentences, project_with_turns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

expect.set_options(timeout=30_000)

# The keys of one walk per label (first answer = 1, second = 2), as the README documents them.
SEQUENTIAL_LABELS = [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT, Label.UNEQUIVOCAL, Label.INVENTED,
                     Label.MISLEADING, Label.RELIABLE, Label.FAITHFUL]


def keys_for(label):
    """The keys 1 / 2 that walk the sequential protocol to ``label``."""
    return [str(STEP_ANSWERS[Step(step)].index(value) + 1) for step, value in protocol.path_for_label(label).items()]


def emulate(page, latency=0, offline=False):
    cdp = getattr(page, "_cdp", None) or page.context.new_cdp_session(page)
    page._cdp = cdp
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions",
             {"offline": offline, "latency": latency, "downloadThroughput": -1, "uploadThroughput": -1})


def open_assignment(page_for, user, project):
    page = page_for(user)
    page.set_default_timeout(30_000)
    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page with unsent changes?"
    page.goto(f"/p/{project.slug}/work/")
    page.locator("#start-button").click()
    page.wait_for_url(re.compile(r"/a/\d+/"))
    expect(page.locator("#panel-title")).to_have_text(re.compile(r"Sentence 1 of"))
    keys_ready(page)
    return page


def type_keys(page, keys, delay=20):
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(delay)


def saved(page):
    expect(page.locator("#save-status")).to_have_text("Saved")


@contextmanager
def saves_held(page):
    """The page's saves (``/sync/``) held on the wire while the block runs, then sent on in the order they left."""
    held = []
    page.route("**/sync/", lambda route: held.append(route))
    try:
        yield
    finally:
        for route in held:
            route.continue_()
        page.unroute("**/sync/")


def labels_in_database(user):
    assignment = Assignment.objects.get(annotator=user)
    return [a.label for a in SentenceAnnotation.objects.filter(assignment=assignment).order_by("sentence__index")]


def labels_in_history(user):
    """The label each sentence reached, replayed from the audit history's step events alone."""
    assignment = Assignment.objects.get(annotator=user)
    last = {}
    for event in AnnotationEvent.objects.filter(assignment=assignment, action__in=["answer", "pick", "undo"]).order_by("id"):
        last[event.sentence.index] = event.new["label"]
    return [last[index] for index in sorted(last)]


def assert_one_save_per_label(assignment, labels):
    """One save carries each sentence's walk; a save of time alone (half a second or more on a sentence already
    sent, e.g. on a slow machine before s) carries no step and changes no label."""
    saves = list(AnnotationEvent.objects.filter(assignment=assignment, action="save").order_by("id"))
    walks = [save for save in saves if save.new["steps"]]
    assert [save.new["label"] for save in walks] == labels
    for save in saves:
        if not save.new["steps"]:
            assert save.old["label"] == save.new["label"] and save.old["path"] == save.new["path"]


def test_a_burst_at_20_ms_with_300_ms_latency_gives_exactly_the_labels_typed(page_for):
    project, _ = project_with_turns(1, sentences=numbered_sentences(len(SEQUENTIAL_LABELS)))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    emulate(page, latency=300)
    requests = []
    page.on("request", lambda request: requests.append(request.url) if "/sync/" in request.url else None)
    type_keys(page, [key for label in SEQUENTIAL_LABELS for key in keys_for(label)])
    # On screen at once, whatever the server has answered yet.
    expect(page.locator("#ws-progress")).to_have_text(f"{len(SEQUENTIAL_LABELS)} of {len(SEQUENTIAL_LABELS)} sentences labelled")
    saved(page)
    assert labels_in_database(user) == SEQUENTIAL_LABELS
    assert labels_in_history(user) == SEQUENTIAL_LABELS
    # Each step is in the audit history once, on its sentence.
    steps = sum(len(protocol.path_for_label(label)) for label in SEQUENTIAL_LABELS)
    assert AnnotationEvent.objects.filter(action="answer").count() == steps
    assert AnnotationEvent.objects.filter(action="save").count() == len(SEQUENTIAL_LABELS)
    assert 1 <= len(requests) <= len(SEQUENTIAL_LABELS)


def test_s_right_after_a_burst_with_300_ms_latency_submits_exactly_the_labels_typed_and_opens_the_next_turn(page_for):
    """Submit waits for the outbox, then opens the next turn: the submitted turn holds the labels typed, once each
    in the audit history; on the next turn, labels typed offline survive a reload and are sent once."""
    labels = SEQUENTIAL_LABELS[:5]
    project, _ = project_with_turns(2, sentences=numbered_sentences(len(labels)))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    first_url = page.url
    emulate(page, latency=300)
    type_keys(page, [key for label in labels for key in keys_for(label)] + ["s", "Enter"])
    page.wait_for_url(lambda url: re.search(r"/a/\d+/$", url) is not None and url != first_url)
    expect(page.locator(".messages")).to_contain_text("Turn submitted")
    submitted, opened = Assignment.objects.filter(annotator=user).order_by("id")
    assert submitted.status == Assignment.Status.SUBMITTED and opened.status == Assignment.Status.ASSIGNED
    stored = SentenceAnnotation.objects.filter(assignment=submitted).order_by("sentence__index")
    assert [a.label for a in stored] == labels
    assert AnnotationEvent.objects.filter(assignment=submitted, action="answer").count() == sum(
        len(protocol.path_for_label(label)) for label in labels)
    assert_one_save_per_label(submitted, labels)

    keys_ready(page)
    emulate(page, offline=True)
    type_keys(page, keys_for(labels[0]))
    expect(page.locator("#save-status")).to_contain_text("Offline")
    emulate(page, latency=300)
    page.reload()
    saved(page)
    expect(page.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Faithful")
    # The label typed offline, sent once (the reload may also send time spent on the next sentence, without a label).
    assert [a.label for a in SentenceAnnotation.objects.filter(assignment=opened).exclude(label="")] == [labels[0]]
    assert_one_save_per_label(opened, [labels[0]])


def test_s_while_the_last_label_is_on_its_way_sends_no_save_of_time_alone(page_for):
    """The last sentence's save is held on the wire when s is pressed: the few milliseconds spent on it since are
    not worth a request of their own, whether that save has been answered yet or not (CI once saw a sixth save)."""
    project, _ = project_with_turns(2, sentences=numbered_sentences(1))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    first_url = page.url
    syncs = []
    page.on("request", lambda request: syncs.append(request.url) if "/sync/" in request.url else None)
    with saves_held(page):
        with page.expect_request("**/sync/"):
            type_keys(page, keys_for(Label.FAITHFUL))
        submit_with_keys(page)
        expect(page.locator(".panel-message")).to_contain_text("before submitting")
    page.wait_for_url(lambda url: re.search(r"/a/\d+/$", url) is not None and url != first_url)
    submitted = Assignment.objects.filter(annotator=user).order_by("id").first()
    assert submitted.status == Assignment.Status.SUBMITTED
    assert len(syncs) == 1
    assert [save.new["steps"] > 0 for save in AnnotationEvent.objects.filter(assignment=submitted, action="save")] == [True]


def test_independent_mode_burst_gives_exactly_the_labels_typed(page_for):
    picks = ["2", "5", "1", "7", "3", "4", "6", "2"]
    project, _ = project_with_turns(1, sentences=numbered_sentences(len(picks)), protocol_mode=ProtocolMode.INDEPENDENT)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    emulate(page, latency=300)
    type_keys(page, picks)
    saved(page)
    wanted = [list(Label)[int(key) - 1] for key in picks]
    assert labels_in_database(user) == wanted
    assert labels_in_history(user) == wanted
    assert AnnotationEvent.objects.filter(action="pick").count() == len(picks)


def test_offline_mid_turn_keeps_labelling_and_every_change_is_stored_once_back_online(page_for):
    labels = [Label.FAITHFUL, Label.IRRELEVANT, Label.MISLEADING, Label.INVENTED, Label.SPECULATIVE]
    project, _ = project_with_turns(1, sentences=numbered_sentences(len(labels)))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    type_keys(page, keys_for(labels[0]))
    saved(page)
    emulate(page, offline=True)
    type_keys(page, [key for label in labels[1:] for key in keys_for(label)], delay=100)
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Offline — \d+ changes? kept, will send$"))
    page.wait_for_timeout(5000)  # a while without the network
    assert labels_in_database(user) == [Label.FAITHFUL]
    expect(page.locator("#ws-progress")).to_have_text("5 of 5 sentences labelled")
    emulate(page, offline=False)
    saved(page)
    assert labels_in_database(user) == labels
    assert labels_in_history(user) == labels
    assert AnnotationEvent.objects.filter(action="save").count() == len(labels)
    assert AnnotationEvent.objects.filter(action="answer").count() == sum(len(protocol.path_for_label(x)) for x in labels)


def test_a_reload_with_unsent_changes_restores_them_on_screen_and_sends_them(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    emulate(page, offline=True)
    type_keys(page, ["1", "1", "1", "1", "2"])  # sentence 1 faithful; sentence 2 relevant, cognitive (unfinished)
    page.locator("#note-input").focus()
    page.keyboard.type("Kept across the reload.")
    page.keyboard.press("Control+Enter")  # the note is saved with Ctrl+Enter (issue 46)
    expect(page.locator("#save-status")).to_contain_text("Offline")
    # Reload while offline would fail: take the page back online and reload before anything is answered.
    page.route("**/sync/", lambda route: route.abort())
    emulate(page, offline=False)
    asked = []
    page.on("dialog", lambda dialog: asked.append(dialog.type))
    page.reload()
    assert asked == ["beforeunload"]  # leaving with unsent changes asks first
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    expect(page.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Faithful")
    expect(page.locator("#question-text")).to_have_text("Is it rational?")
    expect(page.locator("#note-input")).to_have_value("Kept across the reload.")
    assert not SentenceAnnotation.objects.filter(label__gt="").exists()
    page.unroute("**/sync/")
    saved(page)
    assignment = Assignment.objects.get(annotator=user)
    first, second = SentenceAnnotation.objects.filter(assignment=assignment).order_by("sentence__index")
    assert first.label == Label.FAITHFUL
    assert second.path == {"relevance": "relevant", "kind": "cognitive"} and second.note == "Kept across the reload."
    assert AnnotationEvent.objects.filter(action="answer").count() == 5


def test_two_tabs_the_later_one_is_told_and_overwrites_nothing(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    first = open_assignment(page_for, user, project)
    second = first.context.new_page()
    second.on("dialog", lambda dialog: dialog.accept())
    second.goto(first.url)
    expect(second.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    type_keys(first, ["1", "1", "1"])  # faithful
    saved(first)
    type_keys(second, ["2"])  # irrelevant, on a page that has not seen the first tab's answers
    # The second tab forgets what it cannot save and shows what is saved, saying so (issue #26 item 2).
    expect(second.locator("#save-conflict")).to_contain_text("changed in another tab or window")
    expect(second.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Faithful")
    assert SentenceAnnotation.objects.get(sentence__index=0).label == Label.FAITHFUL
    saved(second)
    assert SentenceAnnotation.objects.get(sentence__index=0).label == Label.FAITHFUL


def test_every_path_of_the_protocol_walked_in_chromium_matches_protocol_py(page_for):
    """One sentence per complete path: at each step the page asks what protocol.next_step asks, and ends on label_of."""
    paths = protocol.paths()
    project, _ = project_with_turns(1, sentences=numbered_sentences(len(paths)))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    for number, path in enumerate(paths, start=1):
        expect(page.locator("#panel-title")).to_have_text(f"Sentence {number} of {len(paths)}")
        walked = {}
        for step, value in path.items():
            asked = protocol.next_step(walked)
            assert asked == step
            expect(page.locator("#question-text")).to_have_text(Step(asked).label)
            key = str(STEP_ANSWERS[asked].index(value) + 1)
            page.keyboard.press(key)
            walked[step] = value
            if protocol.next_step(walked) is not None:  # the next question is on screen at once
                expect(page.locator("#question-text")).to_have_text(Step(protocol.next_step(walked)).label)
        label = protocol.label_of(walked)
        expect(page.locator("a.sentence").nth(number - 1).locator(".chip")).to_have_text(label.label)
    saved(page)
    assert labels_in_database(user) == [protocol.label_of(path) for path in paths]


def test_a_key_that_cannot_apply_is_refused_visibly(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    page.keyboard.press("2")  # sentence 1 irrelevant; the panel moves on
    page.keyboard.press("k")  # back to the labelled sentence: no question is open
    page.keyboard.press("1")
    expect(page.locator(".panel-message.error")).to_contain_text("is labelled Irrelevant: the key was not applied")
    page.keyboard.press("?")  # a dialog is open: keys are refused with a message, not applied behind it
    page.keyboard.press("j")
    expect(page.locator("#key-refused")).to_be_visible()
    expect(page.locator("#key-refused")).to_contain_text("the key was not applied")
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    page.keyboard.press("?")
    page.keyboard.press("u")
    page.keyboard.press("u")
    expect(page.locator(".panel-message.error")).to_contain_text("Nothing to undo on this sentence")
    saved(page)
    assert SentenceAnnotation.objects.get(sentence__index=0).path == {}


def test_a_tab_closed_with_unsent_changes_hands_them_to_the_next_page_of_the_turn(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    url = page.url
    emulate(page, offline=True)
    type_keys(page, ["1", "1", "2"])  # sentence 1: invented, never sent
    expect(page.locator("#save-status")).to_contain_text("Offline")
    context = page.context
    page.close()  # closed without a word: the changes stay in this browser's storage
    assert not SentenceAnnotation.objects.exists()
    other = context.new_page()  # a new tab: its own outbox, and the orphaned one taken over
    other.goto(url)
    expect(other.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Invented")
    saved(other)
    assert labels_in_database(user) == [Label.INVENTED]
    assert AnnotationEvent.objects.filter(action="answer").count() == 3


def test_changes_kept_over_a_reload_never_overwrite_what_another_tab_saved_meanwhile(page_for):
    """Tab A's change waits in its outbox; tab B labels the same sentence; A reloads: the conflict is shown, B's label stays."""
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    first = open_assignment(page_for, user, project)

    # A's first sentence reaches the server, but A never hears back: A's later changes wait behind it, unsent.
    def applied_but_answer_lost(route):
        route.fetch()
        route.abort()
    first.route("**/sync/", applied_but_answer_lost)
    with first.expect_event("requestfailed", lambda request: "/sync/" in request.url):
        type_keys(first, ["2"])  # sentence 1: irrelevant (sent, answer lost)
    expect(first.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    type_keys(first, ["2"])  # sentence 2: irrelevant, kept in A's outbox
    expect(first.locator("a.sentence").nth(1).locator(".chip")).to_have_text("Irrelevant")
    assert labels_in_database(user) == [Label.IRRELEVANT]

    second = first.context.new_page()
    second.on("dialog", lambda dialog: dialog.accept())
    second.goto(first.url)
    expect(second.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Irrelevant")
    second.locator("a.sentence").nth(1).click()
    expect(second.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    type_keys(second, ["1", "1", "1"])  # sentence 2: faithful, saved by B
    saved(second)
    # A third row may hold time spent on sentence 3: A's retries reach the server (their answers are lost), and
    # A, hidden behind B's tab, sends the time of the sentence it shows (seen under load).
    labels = labels_in_database(user)
    assert labels[:2] == [Label.IRRELEVANT, Label.FAITHFUL] and set(labels[2:]) <= {""}

    # A's outbox retries with a back-off. A retry let through between an unroute and the reload was refused by
    # the old page, which forgot the change before the reload could bring it back (seen once under load). So
    # every send is cut off, a handler registered later taking precedence, until the old page is gone; a
    # retry may still be inside the first handler, whose abort after the unroute would raise 'Route is already
    # handled' into the next call (seen under load).
    first.route("**/sync/", lambda route: route.abort())
    first.reload()  # A comes back with its kept change, is refused, forgets it and shows what is saved
    first.unroute_all(behavior="ignoreErrors")
    expect(first.locator("#save-conflict")).to_contain_text("changed in another tab or window")
    expect(first.locator("#save-conflict")).to_contain_text("sentence 2 (Irrelevant)")
    first.wait_for_timeout(1000)  # whatever A would still send has had the time to arrive
    labels = labels_in_database(user)
    assert labels[:2] == [Label.IRRELEVANT, Label.FAITHFUL] and set(labels[2:]) <= {""}  # (time spent only)
    assert labels_in_history(user) == [Label.IRRELEVANT, Label.FAITHFUL]
    second_sentence = SentenceAnnotation.objects.get(sentence__index=1).sentence
    assert AnnotationEvent.objects.filter(sentence=second_sentence, action="answer").count() == 3  # B's walk only
    expect(first.locator("a.sentence").nth(1).locator(".chip")).to_have_text("Faithful")
    saved(first)
    assert labels_in_database(user)[:2] == [Label.IRRELEVANT, Label.FAITHFUL]  # (a third row may hold time spent)


def test_a_reload_served_before_its_own_save_committed_still_shows_what_was_saved(page_for):
    """The race CI hit: the reload's page is rendered before the page's own save commits, and the old page hears the
    save confirmed (and forgets the change) before the new page arrives. The new page must show the saved answers and
    carry on without taking its own save for another tab's."""
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    before_the_save = page.request.get(page.url).text()  # the page as the server renders it before the save commits
    type_keys(page, ["1", "1", "1"])  # sentence 1: faithful
    saved(page)
    assert labels_in_database(user) == [Label.FAITHFUL]

    page.route(re.compile(r"/a/\d+/(\?.*)?$"), lambda route: route.fulfill(
        status=200, content_type="text/html; charset=utf-8", body=before_the_save), times=1)
    page.reload()
    expect(page.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Faithful")
    page.locator("a.sentence").nth(1).click()  # (the address follows the active sentence only once the keys pause)
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    type_keys(page, ["2"])  # sentence 2: irrelevant
    saved(page)
    assert labels_in_database(user) == [Label.FAITHFUL, Label.IRRELEVANT]
