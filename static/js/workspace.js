// The annotation screen: the protocol walked in the page, keys applied to what is on screen, saving in the background.
//
// The page embeds its data (#annotation-data: the protocol's description, the guideline examples, the annotator's
// saved answers). Every key changes that state and the decision panel is drawn again from it in the same task, so
// the next question is on screen in the frame that follows the key, and the next key always applies to what the
// annotator sees. A key that cannot apply is refused with a short message. Saving is the outbox's business
// (annotation_outbox.js); the status in the bar says what it is doing.
// Started by the page's entry point, annotation_page.js; what it uses is imported.
import { AnnotationProtocol } from "./protocol_walk.js";
import { AnnotationOutbox } from "./annotation_outbox.js";
import * as landing from "./annotation_landing.js";
import { AnnotationPanel } from "./annotation_panel.js";
import { clicked } from "./step_kinds.js";
import { ReferenceFind, ResizableSplit, referenceSelection } from "./reference_tools.js";
import { line } from "./annotation_saving.js";
import { addLayer, drawHelp, ENTER_IN_FIELD, inField, listen, ORDER, pageKey } from "./keymap.js";
const focusExtras = AnnotationPanel.focusExtras;
function start() {
  const root = document.getElementById("workspace");
  const dataElement = document.getElementById("annotation-data");
  if (!root || !dataElement) { return; }
  const data = JSON.parse(dataElement.textContent);
  const protocol = new AnnotationProtocol(data.protocol);
  const independent = data.mode === "independent";
  const csrf = (() => { try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; } })();
  const sentences = data.sentences.map((s) => ({ ...s, path: protocol.ordered(s.path || {}) }));
  const byId = new Map(sentences.map((s) => [s.id, s]));
  const referenceElement = document.getElementById("reference-text");
  const referenceText = referenceElement ? referenceElement.textContent : "";
  const statusElement = document.getElementById("save-status");
  // The reference's tools (static/js/reference_tools.js): find with /, and the resizable split under it.
  const finder = referenceElement && new ReferenceFind(referenceElement, () => { const link = document.querySelector("a.sentence.active"); if (link) { link.focus(); } });
  if (document.querySelector(".ws-split")) { ResizableSplit(document.querySelector(".ws-split"), document.querySelector(".ws-left"), document.querySelector(".ws-history")); }
  let active = byId.get(data.active) || sentences[0] || null;
  let closed = data.closed;
  let since = performance.now();
  let message = null;      // {text, error} shown at the top of the panel until the next key
  let submitting = false;
  let justLabelled = null; // the sentence auto-advance just left: `v` opens its severity panel (issue 26 item 8)
  let extrasWanted = null; // `v` asked for this sentence's severity panel: focus it when it arrives
  let stopped = null;      // a conflict or a refusal: the page stops saving, refuses keys and says why
  let notice = landing.conflictNotice(data.assignment); // what the last conflict cost, shown until the next change
  const outbox = new AnnotationOutbox({
    assignment: data.assignment, url: data.urls.sync, csrf, version: data.version,
    onChange: showStatus,
    onSaved: (body) => {
      body.saved.forEach((saved) => {
        const sentence = byId.get(saved.sentence);
        // The server's evidence ids (sent back for a change that sent evidence) replace the page's, unless the
        // sentence changed again meanwhile.
        if (sentence && saved.evidence && !outbox.hasOpenChange(sentence.id)) { sentence.evidence = saved.evidence; }
      });
      setVersion(outbox.version);
      showStatus();
      if (active && body.saved.some((s) => s.sentence === active.id)) { loadExtras(active); }
    },
    onStopped: (kind, text) => {
      stopped = { kind, text };
      if (kind === "conflict") { // nothing this tab holds can be saved: forget it, show what is saved (annotation_landing.js)
        stopped.text = text + " Reloading to show what is saved…";
        landing.forgetAndReload(data.assignment, outbox, (c) => byId.get(c.sentence) && "sentence " + byId.get(c.sentence).number +
          " (" + (labelName(protocol.labelOf(protocol.ordered(c.path || {}))) || "unfinished") + ")", warnBeforeLeaving);
      }
      render(); showStatus();
    },
    onRefused: () => { render(); showStatus(); },
  });
  if (!data.closed && outbox.refetchIfBehind(data.version)) { return; }
  // The claims panels (claims.js) share the line; qa_workspace.js asks a question once the answers on screen are saved.
  line.current = { exclusive: (task) => outbox.exclusive(task), version: () => outbox.version,
    pathOf: (id) => ({ ...((byId.get(Number(id)) || {}).path || {}) }),
    drain: async () => { outbox.readyAll(); while (outbox.pendingCount() && !stopped) { await outbox.pump(); } },
    // `saved`: the write sent with version() was applied (a refusal's version is another tab's: nothing moves).
    setVersion: (v, saved) => { if (saved) { outbox.advance(outbox.version, Number(v)); } setVersion(outbox.version); } };
  const restore = (changes) => landing.restore(protocol, byId, changes); // unsent changes back on screen
  // ---- drawing (the decision panel itself: annotation_panel.js) ------------------------------------
  const drawer = new AnnotationPanel(protocol, data);
  const labelName = (value) => protocol.labelNames[value] || value;
  const panel = () => document.getElementById("decision-panel");
  function drawPanel() {
    const element = panel();
    if (!element) { return; }
    const refusal = outbox.refused[0] && (outbox.refusalOf(active && active.id) || outbox.refused[0]);
    drawer.draw(element, { sentences, active, closed, independent, message, stopped, notice, hasNext: !!neighbour(+1),
                           hasOpenChange: (id) => outbox.hasOpenChange(id),
                           refused: refusal && { sentence: byId.get(refusal.change.sentence), error: refusal.error } });
  }
  // Per key, only what changed is touched (annotation_panel.js drawList).
  const links = new Map([...document.querySelectorAll("a.sentence")].map((link) => [Number(link.dataset.sentence), link]));
  const drawList = () => drawer.drawList(links, sentences, active);
  const drawReference = () => drawer.drawReference(referenceElement, referenceText, active, finder);
  function render() {
    drawPanel();
    drawList();
    drawReference();
    if (render.shown === active) { return; }
    render.shown = active;
    // The address (a link to this sentence; a reload lands where work is) follows once the keys pause: replaceState costs ms.
    clearTimeout(render.addressTimer);
    if (active) { render.addressTimer = setTimeout(() => history.replaceState(null, "", "?sentence=" + active.id), 250); }
    document.title = document.title.replace(/^Sentence \d+/, "Sentence " + (active ? active.number : ""));
  }

  function setVersion(version) {
    if (panel()) { panel().dataset.version = version; }
    document.querySelectorAll('#workspace input[name="version"]').forEach((input) => { input.value = version; });
  }
  function showStatus() {
    if (!statusElement) { return; }
    const { text, state } = outbox.status(stopped);
    statusElement.textContent = text; statusElement.dataset.state = state;
  }
  // The severity / error type panel of a saved sentence comes from the server (static/js/claims.js drives it).
  function loadExtras(sentence) {
    if (!data.extras || outbox.hasOpenChange(sentence.id)) { return; }
    drawer.loadExtras(data.urls.panel + "?sentence=" + sentence.id, sentence, () => active === sentence && !outbox.hasOpenChange(sentence.id))
      .then((found) => { // `v` asked for it: focus it, or say there is none
        if (found === undefined || extrasWanted !== sentence) { return; } extrasWanted = null;
        if (found) { focusExtras(found); } else { refuse("Sentence " + sentence.number + " has no severity to set."); }
      });
  }

  // ---- changes -------------------------------------------------------------------------------------
  function takeSeconds() {
    const now = performance.now(), seconds = (now - since) / 1000;
    since = now;
    return seconds;
  }
  function change(sentence, step, ready) {
    const record = Object.assign(outbox.recordFor(sentence, sentence.path), { path: { ...sentence.path } });
    if (step) { record.steps.push({ ...step, at: Date.now() }); }
    record.seconds += sentence === active ? takeSeconds() : 0;
    if (ready) { record.ready = true; }
    return record;
  }

  function refuse(text) { message = { text, error: true }; drawPanel(); }
  // A text step asked of the sentence is not entered (Enter goes in): after an undo (the next u takes the next answer
  // back) and on a sentence the screen moved on to (keys typed on are held, never text in another sentence).
  const keepOut = (sentence) => { const asked = protocol.nextStep(sentence.path); if (asked && protocol.kindOf(asked) === "text") { drawer.leaveField(sentence, asked, true); } };
  function applyPath(newPath, step, outOfField) {
    notice = null; drawer.left.clear(); // a text step asked anew takes the typing again
    const before = protocol.labelOf(active.path);
    active.path = newPath;
    if (outOfField) { keepOut(active); }
    const after = protocol.labelOf(newPath);
    change(active, step, !!after);
    const finished = after && !before;
    if (finished) {
      // A sentence that got its label: on to the next one without a label.
      const position = sentences.indexOf(active);
      const next = sentences.slice(position + 1).concat(sentences.slice(0, position)).find((s) => !protocol.labelOf(s.path));
      if (next) { justLabelled = data.extras ? active : null; active = next; keepOut(next); }
    }
    outbox.touched();
    render();
    if (finished) { loadExtras(active); }
  }

  // A key (or a click, as its key) on the step asked next: answered, a pick toggled, refused, or back into the
  // field. False: the kind has no use for the key (Enter on a choice step's focused answer keeps its own meaning).
  function kindKey(step, key, inField) {
    const outcome = drawer.kindKey(active, step, key, inField) || (answerKeys.has(key) ? { refuse: "Key " + key + " is not an answer to this question." } : null);
    if (!outcome) { return false; }
    if (outcome.refuse) { refuse(outcome.refuse); return true; }
    message = null;
    if (outcome.answer !== undefined) { answer(step, outcome.answer); return true; }
    if (outcome.focus) { drawer.leaveField(active, step, false); }
    drawPanel();
    return true;
  }
  function answer(step, value) {
    const path = protocol.answer(active.path, step, value);
    if (!path) { refuse("That answer does not apply to this sentence now."); return; }
    applyPath(path, { action: "answer", step, value });
  }
  function pick(value) {
    const option = protocol.labels().find((l) => l.value === value);
    applyPath(protocol.ordered(option.path), { action: "pick", value });
  }
  function undo() {
    if (!Object.keys(active.path).length) { refuse("Nothing to undo on this sentence."); return; }
    // Independent mode: the kind steps after the pick are taken back one by one, then the pick (work/services.py undone_path).
    const last = protocol.walk(active.path).answered.slice(-1)[0];
    applyPath(independent && !(last && protocol.kindOf(last) !== "choice") ? {} : protocol.undo(active.path), { action: "undo" }, true);
  }

  // Time on a sentence joins its change not yet sent; alone (the change already on its way or saved) it is worth a
  // request of its own only from half a second on, whether the last save has been answered yet or not. One rule for
  // leaving a sentence, submitting and hiding the page.
  function keepTime(sentence, seconds) {
    return outbox.hasUnsentChange(sentence.id) || seconds >= 0.5 ? outbox.addTime(sentence, seconds) : null;
  }

  function goTo(sentence) {
    if (!sentence || sentence === active) { return; }
    const leaving = active;
    justLabelled = null;
    const record = keepTime(leaving, takeSeconds());
    if (record) { record.ready = true; outbox.touched(); }
    active = sentence;
    message = null;
    render();
    loadExtras(active);
  }
  const neighbour = (delta) => (active ? sentences[sentences.indexOf(active) + delta] || null : null);

  function attachEvidence() {
    const span = referenceElement ? referenceSelection(referenceElement, referenceText, data.unspaced) : null;
    if (!span) { refuse("Select some text in the reference first, then press e to attach it."); return; }
    if (active.evidence.some((s) => s.start === span.start && s.end === span.end)) { refuse("That span is already attached to this sentence."); return; }
    active.evidence = active.evidence.concat([span]);
    const record = change(active, null, true);
    record.evidence = active.evidence.map((s) => ({ start: s.start, end: s.end }));
    message = null;
    outbox.touched();
    render();
  }
  function removeEvidence(index) {
    active.evidence = active.evidence.filter((_, i) => i !== index);
    const record = change(active, null, true);
    record.evidence = active.evidence.map((s) => ({ start: s.start, end: s.end }));
    outbox.touched();
    render();
  }
  function saveNote(input) {
    active.note = input.value.trim();
    const record = change(active, null, true);
    record.note = active.note;
    message = { text: "Note kept; it is saved with the sentence.", error: false };
    outbox.touched();
    input.blur();
    render();
  }

  // then: "next" (the next turn's screen, what s then Enter does) or "queue" (the "& stop" button: submit and stop).
  async function submit(then = "next") {
    if (submitting) { return; }
    if (stopped) { refuse(stopped.text); return; }
    if (outbox.refused.length) { refuse("A change was refused by the server: fix it or drop it before submitting."); return; }
    submitting = true;
    if (active) { keepTime(active, takeSeconds()); }
    outbox.readyAll();
    if (outbox.pendingCount()) {
      message = { text: "Saving " + outbox.pendingCount() + " change(s) before submitting…", error: false };
      drawPanel();
      while (outbox.pendingCount() && !stopped) { await outbox.pump(); }
      if (stopped) { submitting = false; return; }
    }
    const body = new URLSearchParams({ version: String(outbox.version), then, request_id: "submit-" + Date.now().toString(36) + Math.random().toString(36).slice(2, 10) });
    try {
      const response = await outbox.exclusive(() => fetch(data.urls.submit, {
        method: "POST", body, credentials: "same-origin", headers: { "X-CSRFToken": csrf, "HX-Request": "true" },
      }));
      const redirect = response.headers.get("HX-Redirect");
      // Submitted: leaving the page must not record its time as a change (a reopened turn would load it as stale).
      if (redirect) { closed = true; window.removeEventListener("beforeunload", warnBeforeLeaving); window.location.assign(redirect); return; }
      const html = await response.text();
      const refusal = new DOMParser().parseFromString(html, "text/html").querySelector(".panel-message");
      refuse(refusal ? refusal.textContent : "The turn could not be submitted (" + response.status + ").");
    } catch (error) {
      refuse("Submitting needs the connection; your answers are kept. Press s, then Enter, when you are back online.");
    }
    submitting = false;
  }

  // ---- keys and clicks -----------------------------------------------------------------------------
  // The answer keys come with the protocol's description (labels 1-7, answers 1/2 and y/n); the page's commands
  // are the keymap's (keymap.js), which asks this layer after the claims panels'.
  const answerKeys = protocol.answerKeys();
  const isShortcut = (key) => answerKeys.has(key) || pageKey(key);
  const changes = (command, key) => answerKeys.has(key) || command === "undo" || command === "evidence";
  addLayer(ORDER.workspace, (event, command) => {
    const target = event.target;
    const key = event.key;
    if (inField(target)) { // every key typed is text but Ctrl+Enter, which confirms, and Esc, which leaves (keymap.js)
      const textStep = target.dataset.stepText && active ? target.dataset.stepText : null;
      if (!textStep && target.id !== "note-input") { return false; }
      if (command === "enter") { message = { text: ENTER_IN_FIELD, error: false }; drawPanel(); return true; }
      if (command === "confirm") { if (textStep) { kindKey(textStep, "Enter", true); } else { saveNote(target); } return true; }
      if (command !== "leave") { return false; }
      if (textStep) { drawer.leaveField(active, textStep, true); } target.blur(); return true;
    }
    if (drawer.confirming && key !== "Shift" && key !== "CapsLock") { message = drawer.closeConfirmation(command); drawPanel(); if (command === "confirm") { submit(); } return true; }
    const help = document.getElementById("help");
    if (help && help.open && command === "help") { help.close(); return true; }
    if (document.querySelector("dialog[open]")) {
      if (isShortcut(key)) { event.preventDefault(); AnnotationPanel.flash("Close the dialog first (Esc): the key was not applied."); }
      return false;
    }
    const inPane = target.closest && target.closest(".ws-reference, .ws-history");
    if (command === "help") { help.showModal(); }
    else if (command === "find" && finder) { finder.open(); }
    else if ((command === "next" || command === "previous") && (key.length === 1 || !inPane)) { goTo(neighbour(command === "next" ? +1 : -1)); }
    else if (command === "submit") { if (closed) { refuse("This assignment can no longer be changed."); } else { drawer.confirming = true; message = null; drawPanel(); } }
    else if (command === "rate" && document.getElementById("claims-extras")) { focusExtras(document.getElementById("claims-extras")); }
    else if (!active) { return false; }
    else if (stopped && changes(command, key)) { refuse(stopped.text + " The key was not applied."); }
    else if (closed && changes(command, key)) { refuse("This assignment can no longer be changed: the key was not applied."); }
    else if (command === "undo") { undo(); }
    else if (command === "evidence") { attachEvidence(); }
    else if (command === "rate" && data.extras) { // no panel on screen: the sentence just labelled's, or this one's once saved
      extrasWanted = justLabelled || active;
      if (extrasWanted !== active) { goTo(extrasWanted); } else { message = { text: "The severity panel opens once this sentence is saved.", error: false }; drawPanel(); loadExtras(active); }
    }
    else if (command === "note") { const note = document.getElementById("note-input"); if (note) { note.focus(); } }
    else if (answerKeys.has(key) || command === "confirm") {
      // The step asked: the walk's next one; in independent mode a kind step after the pick (the pick is the shape).
      const asked = !independent || Object.keys(active.path).length ? protocol.nextStep(active.path) : null;
      const ownButton = target.closest("button, a") && !target.closest(".question"); // Enter keeps its meaning there
      if (asked && (answerKeys.has(key) || !ownButton)) { return kindKey(asked, key, false); } // the kind says (step_kinds.js)
      if (!answerKeys.has(key)) { return false; }
      const option = independent && protocol.labels().find((l) => l.key === key);
      if (independent) { if (!option) { return false; } message = null; pick(option.value); } else { refuse("Sentence " + active.number + " is labelled " + labelName(protocol.labelOf(active.path)) + ": the key was not applied. j moves on, u takes the last answer back."); }
    }
    else { return false; }
    return true;
  });
  listen((text) => AnnotationPanel.flash(text));
  drawHelp(protocol.kinds()); // the help lists the keys of the kinds this protocol asks

  root.addEventListener("mousedown", (event) => {
    if (event.target.closest("#attach-evidence")) { event.preventDefault(); } // keep the reference selection
  });
  root.addEventListener("click", (event) => {
    const target = event.target;
    const submitter = target.closest("#submit-button, #submit-stop-button, #submit-confirm"); // a click is deliberate: no confirming
    if (drawer.confirming || submitter) { drawer.confirming = false; drawPanel(); if (submitter) { event.preventDefault(); submit(submitter.id === "submit-stop-button" ? "queue" : "next"); return; } }
    const link = target.closest("a.sentence");
    if (link) { event.preventDefault(); goTo(byId.get(Number(link.dataset.sentence))); return; }
    if (target.closest("#help-button")) { document.getElementById("help").showModal(); return; }
    if (target.closest("#refused-go")) { goTo(byId.get(Number(target.closest("#refused-go").dataset.sentence))); return; }
    if (target.closest("#drop-refused")) {
      // What the page shows of that sentence includes the dropped change: reload it from the server (the other
      // unsent changes are kept in this browser and come back).
      outbox.drop(Number(target.closest("#drop-refused").dataset.sentence));
      if (active) { landing.stayOn(data.assignment, active.id); } // back on this sentence
      window.removeEventListener("beforeunload", warnBeforeLeaving);
      window.location.reload();
      return;
    }
    if (target.closest("#reload-saved")) {
      outbox.discard();
      window.removeEventListener("beforeunload", warnBeforeLeaving);
      window.location.reload();
      return;
    }
    if (!target.closest("#decision-panel") || closed || !active) { return; }
    const button = target.closest("button");
    if (!button) { return; }
    if (button.dataset.pick) { pick(button.dataset.pick); }
    else if (button.dataset.step) {
      const meant = clicked(button); // a toggle or Confirm is its key; an answer is answered (the walk's own buttons too)
      if (meant.answer !== undefined) { message = null; answer(button.dataset.step, meant.answer); }
      else if (protocol.nextStep(active.path) === button.dataset.step) { kindKey(button.dataset.step, meant.confirm ? "Enter" : button.dataset.key, true); }
    }
    else if (button.id === "undo-button") { undo(); }
    else if (button.id === "attach-evidence") { attachEvidence(); }
    else if (button.dataset.removeEvidence !== undefined) { removeEvidence(Number(button.dataset.removeEvidence)); }
    else if (button.id === "save-note") { saveNote(document.getElementById("note-input")); }
  });
  // A text step's words are the sentence's draft as they are typed (a redraw puts them back).
  root.addEventListener("input", (event) => {
    if (active && event.target.dataset && event.target.dataset.stepText) { drawer.setDraft(active, event.target.dataset.stepText, event.target.value); }
  });

  function warnBeforeLeaving(event) {
    if ((outbox.pendingCount() && !stopped) || outbox.refused.length) { event.preventDefault(); event.returnValue = ""; }
  }
  window.addEventListener("beforeunload", warnBeforeLeaving);
  // Hidden: time stops, what was counted and open changes are sent; not after a conflict (stale copy; Reload hides it).
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") {
      if (active && !closed && !stopped) {
        keepTime(active, takeSeconds());
      }
      outbox.readyAll();
    } else {
      since = performance.now();
    }
  });
  window.addEventListener("online", () => { outbox.pump(); showStatus(); });

  // Unsent changes of this tab (kept over a reload) and of closed tabs come back on screen, then go out.
  if (closed && outbox.pendingCount()) {
    // Submitted or released meanwhile (another tab, a lead): they can no longer be saved; say so once.
    stopped = { kind: "refused", text: outbox.pendingCount() + " change(s) kept in this browser could not be saved: " +
      "this assignment can no longer be changed." };
    outbox.discard();
  } else if (!closed) {
    const restored = restore(outbox.batches.flatMap((b) => b.changes).concat(outbox.records));
    active = landing.landing(protocol, sentences, active, restored, data.assignment); // the first work, not a finished one
    outbox.adoptOrphans((changes) => { restore(changes); render(); showStatus(); });
  }
  sentences.forEach((sentence) => { if (links.get(sentence.id)) { drawer.tagPrelabel(links.get(sentence.id), sentence); } });
  render(); showStatus(); setVersion(outbox.version); if (active) { loadExtras(active); }
  if (!closed) { outbox.pump(); }
  document.documentElement.dataset.keys = "ready"; // the keys apply from here on (the browser tests wait for it)
}
start();
