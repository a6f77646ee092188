// Adjudication screen keyboard: j/k move between disputes, 1/2 (or y/n) answer, u undo,
// a/b side with an annotator, r reason, Enter save (in the reason: Ctrl+Enter; Shift+Enter a new line), Esc leave
// a field ("Use this text" buttons, reached with Tab, copy a side's text into the gold text); once every dispute
// of the turn is decided, n or Enter opens the next turn. The keys are the keymap's (keymap.js SCREENS.adjudication,
// and its one rule: in a field every key is text but Ctrl+Enter and Esc; keys right after typing are held).
//
// The adjudicator's own walk of the protocol happens in the page, from the description the page embeds
// (#protocol-data, annotator/domain/protocol/__init__.py describe(), walked by protocol_walk.js): every key changes the walk
// on screen at once, so the next key applies to the question it shows. The walk is kept in localStorage
// per dispute until it is decided (a reload keeps it) and is sent whole with the decision; so are the reason and the
// gold texts written for it.
import { h, kbd } from "./dom.js";
import { AnnotationProtocol } from "./protocol_walk.js";
import { kindOf, shownValue } from "./step_kinds.js";
import { addLayer, ENTER_IN_FIELD, inField, listen, ORDER, SCREENS } from "./keymap.js";

function start() {
  const container = document.getElementById("disputes");
  if (!container) { return; }
  let activeId = null;
  const protocolData = document.getElementById("protocol-data");
  const protocol = protocolData ? new AnnotationProtocol(JSON.parse(protocolData.textContent)) : null;
  const walks = new Map(); // dispute id -> the adjudicator's walk so far
  const drafts = new Map(); // dispute id + step -> picks or words on a step not yet answered (step_kinds.js)
  const left = new Set();   // dispute id + step: the text field the adjudicator left with Esc
  const draftKey2 = (card, step) => card.dataset.dispute + "\n" + step;

  const disputes = () => Array.from(container.querySelectorAll("[data-dispute]"));
  const openDisputes = () => disputes().filter((el) => el.classList.contains("dispute-open"));
  const active = () => (activeId && document.getElementById(activeId)) || null;

  // Highlight the active dispute's evidence spans in the reference (offsets into its text).
  const reference = document.getElementById("reference-text");
  const referenceText = reference ? reference.textContent : "";
  function showEvidence(el) {
    if (!reference) { return; }
    const data = el && document.getElementById("evidence-" + el.dataset.dispute);
    const spans = data ? JSON.parse(data.textContent) : [];
    const legend = document.getElementById("evidence-legend");
    if (legend) { legend.hidden = spans.length === 0; }
    const cuts = new Set([0, referenceText.length]);
    spans.forEach(([start, end]) => { cuts.add(Math.max(0, Math.min(start, referenceText.length))); cuts.add(Math.max(0, Math.min(end, referenceText.length))); });
    const points = Array.from(cuts).sort((x, y) => x - y);
    const fragment = document.createDocumentFragment();
    let first = null;
    for (let i = 0; i < points.length - 1; i++) {
      const [from, to] = [points[i], points[i + 1]];
      const sides = spans.filter(([start, end]) => start <= from && end >= to).map((s) => s[2]);
      const text = document.createTextNode(referenceText.slice(from, to));
      if (sides.length) {
        const mark = document.createElement("mark");
        mark.className = Array.from(new Set(sides)).map((k) => "ev-" + k).join(" ");
        mark.title = "Evidence of annotator " + Array.from(new Set(sides)).join(" and ").toUpperCase();
        mark.appendChild(text);
        fragment.appendChild(mark);
        if (!first) { first = mark; }
      } else {
        fragment.appendChild(text);
      }
    }
    reference.replaceChildren(fragment);
    // Bring the first span into view inside the reference panel, without scrolling the page.
    const panel = reference.closest(".adj-reference");
    if (first && panel && panel.scrollHeight > panel.clientHeight) { panel.scrollTop = Math.max(0, first.offsetTop - 40); }
  }

  function activate(el, focus) {
    disputes().forEach((d) => d.classList.remove("active"));
    document.querySelectorAll(".sentence.current").forEach((s) => s.classList.remove("current"));
    if (!el) { activeId = null; return; }
    activeId = el.id;
    el.classList.add("active");
    showEvidence(el);
    const sentence = document.querySelector('[data-goto="' + el.id + '"]');
    if (sentence) { sentence.classList.add("current"); }
    if (focus !== false) {
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }

  function move(step) {
    const list = disputes();
    if (!list.length) { return; }
    const current = list.indexOf(active());
    const next = current < 0 ? 0 : Math.min(list.length - 1, Math.max(0, current + step));
    activate(list[next]);
  }

  function nextOpenAfter(id) {
    const list = disputes();
    const start = list.findIndex((d) => d.id === id);
    const after = list.slice(start + 1).concat(list.slice(0, start + 1));
    return after.find((d) => d.classList.contains("dispute-open")) || null;
  }

  // ---- the adjudicator's own walk ----------------------------------------------------------------
  // A draft belongs to the protocol it was walked on: after a lead changes the protocol, the page (reloaded) starts
  // the walk again rather than read the old answers under the new document.
  const draftKey = (id) => "adjudication-draft:" + id + ":" + (container.dataset.protocolChecksum || "");

  function pathOf(card) {
    const id = card.dataset.dispute;
    if (!walks.has(id)) {
      let path = null;
      try { path = JSON.parse(localStorage.getItem(draftKey(id)) || "null"); } catch (e) { path = null; }
      if (!path) {
        const walk = card.querySelector("[data-walk]");
        try { path = JSON.parse((walk && walk.dataset.draft) || "{}"); } catch (e) { path = {}; }
      }
      walks.set(id, protocol.ordered(path || {}));
    }
    return walks.get(id);
  }

  function setPath(card, path, message) {
    const id = card.dataset.dispute;
    walks.set(id, path);
    try {
      if (Object.keys(path).length) { localStorage.setItem(draftKey(id), JSON.stringify(path)); }
      else { localStorage.removeItem(draftKey(id)); }
    } catch (e) { /* storage refused: the walk stays in this page */ }
    drawWalk(card, message);
  }

  const goldTextField = (card, step) => Array.from(card.querySelectorAll("[data-gold-text]")).find((f) => f.dataset.goldText === step);

  // `still`: the focus is left where it is (a key held is said on the active card).
  function drawWalk(card, message, still) {
    const walk = card.querySelector("[data-walk]");
    if (!walk || !protocol) { return; }
    const path = pathOf(card);
    const label = protocol.labelOf(path);
    const next = protocol.nextStep(path);
    const answerName = (step, value) => shownValue(protocol, step, value);
    // The focus stays where it is while the adjudicator writes in a field outside the walk (the reason, a gold text).
    const hadFocus = !still && card.contains(document.activeElement) && !(inField(document.activeElement) && !walk.contains(document.activeElement));
    const kind = next && protocol.kindOf(next);
    const draft = next && drafts.get(draftKey2(card, next));
    const undo = Object.keys(path).length ? h("button", { type: "button", class: "link", "data-undo": "" }, "Take back last answer ", kbd("u")) : null;
    // replaceChildren would write a null as the text "null": only the parts there are.
    walk.replaceChildren(...[
      Object.keys(path).length ? h("ol", { class: "walk-path" }, Object.entries(path).map(([step, value]) =>
        h("li", null, protocol.step(step).question + " ", h("strong", null, answerName(step, value))))) : null,
      next ? h("p", { class: "question" }, h("strong", null, protocol.step(next).question)) : null,
      next && kind !== "choice" ? h("p", { class: "muted kind-hint" }, kindOf(protocol, next).hint(protocol.step(next), draft)) : null,
      // One text is the gold's: a gold text written in its box below replaces these words (gold.services.with_gold_texts).
      next && kind === "text" && goldTextField(card, next) ? h("p", { class: "muted", "data-text-wins": next },
        "The gold text is this answer's words unless you write one in the “Gold text” box below: that one replaces them.") : null,
      h("div", { class: "actions" }, next && kind === "choice" ? protocol.step(next).answers.map((a) => h("button", {
        type: "button", class: "answer", "data-answer-key": a.key, "data-step": next, "data-value": a.value,
      }, kbd(a.key), " " + a.label)) : null, next && kind !== "choice" ? kindOf(protocol, next).answers(protocol.step(next), next, draft) : null, undo),
      message ? h("p", { class: "error walk-refused", role: "status" }, message) : null,
    ].filter(Boolean));
    const field = walk.querySelector("[data-step-text]");
    if (field && hadFocus && !left.has(draftKey2(card, next))) { field.focus({ preventScroll: true }); }
    else if (hadFocus && !card.contains(document.activeElement)) { card.focus({ preventScroll: true }); }
    const input = card.querySelector("[data-path]");
    if (input) { input.value = label ? JSON.stringify(path) : ""; }
    const radio = card.querySelector("[data-protocol]");
    if (radio) {
      radio.disabled = !label;
      if (!label) { radio.checked = false; }
    }
    const shown = card.querySelector("[data-walk-label]");
    if (shown) {
      shown.replaceChildren(label ? h("span", { class: "chip chip-" + label }, protocol.labelNames[label] || label)
        : h("span", { class: "muted" }, "(answer the questions below)"));
    }
  }

  // A key on the walk's question: its kind says what it does (step_kinds.js). False: not the walk's key.
  function answerKey(card, key, inField) {
    const path = pathOf(card);
    const next = protocol.nextStep(path);
    if (!next) {
      if (key === "Enter") { return false; }
      drawWalk(card, "Your walk ended on " + (protocol.labelNames[protocol.labelOf(path)] || "a label") +
        ": the key was not applied. u takes the last answer back.");
      return true;
    }
    const outcome = kindOf(protocol, next).key(protocol.step(next), key, drafts.get(draftKey2(card, next)), inField);
    if (!outcome) { return false; }
    if (outcome.refuse) { drawWalk(card, outcome.refuse); }
    else if (outcome.draft) { drafts.set(draftKey2(card, next), outcome.draft); drawWalk(card); }
    else if (outcome.focus) { left.delete(draftKey2(card, next)); drawWalk(card); }
    else { answer(card, next, outcome.answer); }
    return true;
  }

  function answer(card, step, value) {
    const path = protocol.answer(pathOf(card), step, value);
    if (!path) { drawWalk(card, "That answer does not apply to this question now."); return; }
    left.delete(draftKey2(card, protocol.nextStep(path))); // a text step asked anew takes the typing
    setPath(card, path);
    const radio = card.querySelector("[data-protocol]");
    if (radio && protocol.labelOf(path)) { radio.checked = true; }
  }

  function undoStep(card) {
    const path = pathOf(card);
    if (!Object.keys(path).length) { drawWalk(card, "Nothing to take back."); return; }
    const undone = protocol.undo(path);
    const asked = protocol.nextStep(undone);
    // A text step taken back is not entered: the next u takes the next answer back (Enter goes into the field).
    if (asked && protocol.kindOf(asked) === "text") { left.add(draftKey2(card, asked)); }
    setPath(card, undone);
  }

  // A decision on the wire: keys on that dispute wait for its answer (the card is then replaced).
  const saving = (card) => card.querySelector("form.decision.htmx-request") !== null;

  function save() {
    const el = active();
    const form = el && el.querySelector("form.decision");
    if (form) {
      if (window.htmx) { window.htmx.process(form); }  // the form may have just been swapped in: wire it first
      form.requestSubmit();
    }
  }

  addLayer(ORDER.walk, (event, command) => {
    const target = event.target;
    if (inField(target)) {
      const card = target.closest("[data-dispute]");
      if (command === "leave") { // out of the field, back to the dispute
        if (target.dataset.stepText && card) { left.add(draftKey2(card, target.dataset.stepText)); }
        target.blur(); if (card) { card.focus(); }
        return true;
      }
      const walked = target.dataset.stepText && protocol && card;
      if (command === "enter" && (walked || target.matches("[data-reason]"))) { // Enter alone confirms no text
        if (card && protocol && card.querySelector("[data-walk]")) { drawWalk(card, ENTER_IN_FIELD); }
        return true;
      }
      if (command !== "confirm") { return false; }
      if (walked) { if (!saving(card)) { answerKey(card, "Enter", true); } return true; } // the walk's text step: its words
      if (target.matches("[data-reason]")) { save(); return true; }
      return false;
    }
    // Every dispute of the turn decided: n or Enter opens the next turn of the queue (or the queue itself), so a
    // keyboard user is never left on a finished turn. Enter on a focused link or button keeps its own meaning.
    if (!openDisputes().length && (command === "onward" || (command === "confirm" && !target.matches("button, a, summary, input")))) {
      const onward = document.querySelector("#turn-done a");
      if (!onward) { return false; }
      window.location.assign(onward.href);
      return true;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) { if (command !== "confirm") { return false; } }
    if (target.closest("[data-dispute]") && target.closest("[data-dispute]") !== active()) {
      activate(target.closest("[data-dispute]"), false);
    }
    const key = event.key;
    if (command === "next" || command === "previous") { move(command === "next" ? 1 : -1); return true; }
    if (/^[1-9yn]$/.test(key) || command === "undo") { // the walk's answer keys (n is "no" while a dispute is open)
      const card = active();
      if (!card || !protocol || !card.querySelector("[data-walk]")) { return false; }
      if (saving(card)) { drawWalk(card, "Saving this decision: the key was not applied."); return true; }
      if (command === "undo") { undoStep(card); return true; }
      return answerKey(card, key, false);
    }
    if (command === "side") {
      const radio = active() && active().querySelector('[data-side-key="' + key + '"]');
      if (radio && !radio.disabled) { radio.checked = true; radio.dispatchEvent(new Event("change", { bubbles: true })); }
      return true;
    }
    if (command === "reason") { const reason = active() && active().querySelector("[data-reason]"); if (reason) { reason.focus(); } return true; }
    if (command !== "confirm") { return false; }
    if (target.matches("button, a, summary, input[type=radio]") && !target.matches("[data-dispute] input[type=radio]")) { return false; }
    // On a walk's multiple choice or text step, Enter confirms the picks (or goes back into the field), else it saves.
    const card = active();
    if (card && protocol && card.querySelector("[data-walk]") && !saving(card) && answerKey(card, "Enter", false)) { return true; }
    save();
    return true;
  }, SCREENS.adjudication);
  listen((text) => { const card = active(); if (card && protocol && card.querySelector("[data-walk]")) { drawWalk(card, text, true); } });

  // The reason and the gold texts written for a dispute are kept in localStorage until it is decided, as its walk
  // is: a reload, or a decision that could not be sent (offline), never loses what was written. A field the server
  // filled (a refused decision comes back with its reason) keeps the server's words.
  const notePrefix = (id) => "adjudication-note:" + id + ":";
  const NOTE_FIELD = "textarea[data-reason], textarea[data-gold-text]";
  const noteFields = (card) => Array.from(card.querySelectorAll(NOTE_FIELD));
  function keepNote(field) {
    const card = field.closest("[data-dispute]");
    if (!card || !field.name) { return; }
    try {
      if (field.value) { localStorage.setItem(notePrefix(card.dataset.dispute) + field.name, field.value); }
      else { localStorage.removeItem(notePrefix(card.dataset.dispute) + field.name); }
    } catch (e) { /* storage refused: the words stay in this page */ }
  }
  function restoreNotes(card) {
    noteFields(card).forEach((field) => {
      let kept = null;
      try { kept = localStorage.getItem(notePrefix(card.dataset.dispute) + field.name); } catch (e) { kept = null; }
      if (kept && !field.value) { field.value = kept; }
    });
  }
  function forgetNotes(id) {
    try {
      Object.keys(localStorage).filter((key) => key.startsWith(notePrefix(id))).forEach((key) => localStorage.removeItem(key));
    } catch (e) { /* nothing kept */ }
  }

  document.addEventListener("input", (event) => {
    if (event.target.matches && event.target.matches(NOTE_FIELD)) { keepNote(event.target); }
    const card = event.target.dataset && event.target.dataset.stepText && event.target.closest("[data-dispute]");
    if (card) { drafts.set(draftKey2(card, event.target.dataset.stepText), event.target.value); }
  });
  // "Use this text": a side's text (the page's data texts-<dispute>, as typed) becomes the gold text of its step,
  // in the field the adjudicator may still edit; the focus goes there (Esc leaves it, as from any field).
  function useText(button) {
    const card = button.closest("[data-dispute]");
    const data = card && document.getElementById("texts-" + card.dataset.dispute);
    if (!data) { return; }
    const entry = JSON.parse(data.textContent).find((text) => text.step === button.dataset.useText);
    const side = entry && entry.texts[Number(button.dataset.sideIndex)];
    const field = goldTextField(card, button.dataset.useText);
    if (!side || typeof side.text !== "string" || !field) { return; }
    activate(card, false);
    field.value = side.text;
    keepNote(field);
    field.focus({ preventScroll: true });
    field.setSelectionRange(field.value.length, field.value.length);
  }

  document.addEventListener("click", (event) => {
    const use = event.target.closest("[data-use-text]");
    if (use) { useText(use); return; }
    const button = event.target.closest("[data-walk] button");
    if (button && protocol) {
      const card = button.closest("[data-dispute]");
      activate(card, false);
      if (saving(card)) { drawWalk(card, "Saving this decision: the answer was not applied."); return; }
      if (button.hasAttribute("data-undo")) { undoStep(card); }
      else if (button.dataset.toggle !== undefined || button.dataset.confirm !== undefined) { answerKey(card, button.dataset.toggle !== undefined ? button.dataset.key : "Enter", true); }
      else { answer(card, button.dataset.step, button.dataset.point !== undefined ? Number(button.dataset.point) : button.dataset.value); }
      return;
    }
    const sentence = event.target.closest("[data-goto]");
    if (sentence) { activate(document.getElementById(sentence.dataset.goto)); return; }
    const dispute = event.target.closest("[data-dispute]");
    if (dispute) { activate(dispute, false); }
  });

  // A dispute card swapped in by htmx is a new element: keep it active, or after a
  // decision was saved move on to the next open dispute.
  document.addEventListener("htmx:load", (event) => {
    const swapped = event.detail.elt;
    if (!swapped || !swapped.matches || !swapped.matches("[data-dispute]")) { return; }
    const goto = document.querySelector('[data-goto="' + swapped.id + '"]');
    if (swapped.classList.contains("dispute-resolved")) {
      walks.delete(swapped.dataset.dispute);
      try { localStorage.removeItem(draftKey(swapped.dataset.dispute)); } catch (e) { /* nothing kept */ }
      forgetNotes(swapped.dataset.dispute);
      if (goto) { goto.classList.remove("open"); }
      const done = document.getElementById("turn-done");
      if (done) { done.hidden = openDisputes().length > 0; }
      if (done && !done.hidden) { const onward = done.querySelector("a"); if (onward) { onward.focus(); } }
      const count = document.getElementById("open-dispute-count");
      if (count) { const n = openDisputes().length; count.textContent = n + " open dispute" + (n === 1 ? "" : "s"); }
      if (openDisputes().length) { activate(nextOpenAfter(swapped.id) || openDisputes()[0]); } else { activate(swapped, false); }
      return;
    }
    restoreNotes(swapped);
    if (protocol) {
      drawWalk(swapped);
      const radio = swapped.querySelector("[data-protocol]");
      if (radio && !radio.disabled && !swapped.querySelector("input[name=decision]:checked")) { radio.checked = true; }
    }
    activate(swapped);
    // A refusal for a missing reason marks the box but leaves the focus on the dispute: a field the person did not
    // open never takes their next shortcut key as text (they press r to write the reason).
    const error = swapped.querySelector("[role=alert]");
    const reason = swapped.querySelector("[data-reason]");
    if (error && reason && /reason/i.test(error.textContent)) {
      reason.setAttribute("aria-invalid", "true");
      error.append(" Press r to write it.");
    }
  });

  openDisputes().forEach(restoreNotes);
  // A dispute decided since (in another tab, or by a lead) keeps nothing: its words were for a decision now made.
  disputes().filter((card) => !card.classList.contains("dispute-open")).forEach((card) => forgetNotes(card.dataset.dispute));
  if (protocol) {
    openDisputes().forEach((card) => {
      drawWalk(card);
      const radio = card.querySelector("[data-protocol]");
      if (radio && !radio.disabled) { radio.checked = true; }
    });
  }
  activate(openDisputes()[0] || disputes()[0] || null);
}
start();
