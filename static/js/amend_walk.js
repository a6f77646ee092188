// The "Amend my answer" form of the feedback inbox walks the protocol question by question, as the annotation
// screen does, from the descriptions the page embeds once (#protocol-data: {"protocols": {project slug: describe()}},
// walked by protocol_walk.js); each form walks its project's protocol (form[data-protocol]).
//
// Each form[data-amend-walk] keeps its own path, empty at first (a form htmx swaps in starts afresh). Only a
// label fills the hidden `label` field (and `path`, the walk with its kind steps' values) and enables Amend: the
// server checks the walk ends on the label (a label of choices only: it gives the sentence that label's one path).
// A multiple, scale or text step is asked as on the annotation screen, with its kind's keys and buttons
// (step_kinds.js STEP_KINDS): digits toggle and Enter confirms, a digit picks a point, a text is typed in its
// field (Ctrl+Enter confirms, Shift+Enter a new line, Esc leaves it: keymap.js, the rule of every walking screen).
// Keys act on the form holding the focus inside an open <details> (or on its summary): an answer key of the
// question shown, u to take back; any other letter or digit is refused there with a message, so a key never lands
// on something else. After a key the focus rests on the question, never on an answer a Space would press.
import { h, kbd } from "./dom.js";
import { AnnotationProtocol } from "./protocol_walk.js";
import { clicked, kindOf, shownValue } from "./step_kinds.js";
import { addLayer, ENTER_IN_FIELD, inField, listen, ORDER, SCREENS } from "./keymap.js";

function start() {
  const data = document.getElementById("protocol-data");
  if (!data) { return; }
  const descriptions = JSON.parse(data.textContent).protocols || {};
  const walkers = {};
  const protocolOf = (form) => {
    const key = form.dataset.protocol;
    if (!walkers[key] && descriptions[key]) { walkers[key] = new AnnotationProtocol(descriptions[key]); }
    return walkers[key];
  };
  const paths = new WeakMap();  // form -> its path so far
  const drafts = new WeakMap();  // form -> {step: picks or words} not yet confirmed
  const labelName = (protocol, value) => protocol.labelNames[value] || value;
  const draftOf = (form, step) => (drafts.get(form) || {})[step];
  const setDraft = (form, step, value) => drafts.set(form, { ...(drafts.get(form) || {}), [step]: value });

  function question(protocol, stepName, form) {
    const step = protocol.step(stepName);
    if (protocol.kindOf(stepName) !== "choice") { // a multiple choice, a scale or a text: asked with its kind's keys
      const kind = kindOf(protocol, stepName);
      return h("div", { class: "amend-question", role: "group", "aria-label": step.question, tabindex: "-1" },
        h("p", { class: "amend-question-text", "data-walk-question": stepName }, h("strong", null, step.question)),
        h("p", { class: "muted" }, step.definition),
        h("p", { class: "muted kind-hint" }, kind.hint(step, draftOf(form, stepName))),
        h("p", { class: "amend-answers", "data-walk-kind": protocol.kindOf(stepName) }, kind.answers(step, stepName, draftOf(form, stepName))));
    }
    return h("div", { class: "amend-question", role: "group", "aria-label": step.question, tabindex: "-1" },
      h("p", { class: "amend-question-text", "data-walk-question": stepName }, h("strong", null, step.question)),
      h("p", { class: "muted" }, step.definition),
      h("p", { class: "amend-answers" }, step.answers.map((a) => h("button", {
        type: "button", class: "primary", "data-walk-step": stepName, "data-walk-value": a.value,
        "aria-keyshortcuts": a.key + (a.yn ? " " + a.yn : ""),
      }, kbd(a.key), a.yn ? [" ", kbd(a.yn)] : null, " " + a.label))));
  }

  // Draw the form from its path. `refocus`: the user acted in the form, so the focus stays in it (in a text step's
  // field, on the next question, or on Amend at a label) even though the button pressed was replaced; `outOfField`:
  // an undo, after which a text step asked again is not entered (the next u takes the next answer back).
  function draw(form, refocus, outOfField) {
    const protocol = protocolOf(form);
    const path = paths.get(form);
    const answered = protocol.walk(path).answered;
    const next = protocol.nextStep(path);
    const label = next ? "" : protocol.labelOf(path);
    const submit = form.querySelector("[data-walk-submit]");
    form.querySelector("[data-walk]").replaceChildren(...[  // a null would be written as the text "null"
      answered.length ? h("ol", { class: "amend-walked", "aria-label": "Answers so far" }, answered.map((stepName) =>
        h("li", { "data-walked": stepName }, protocol.step(stepName).question + " → ", h("strong", null, shownValue(protocol, stepName, path[stepName])))
      )) : null,
      next ? question(protocol, next, form) : h("p", { class: "amend-new-label", "data-walk-result": label }, "New label: ", h("strong", null, labelName(protocol, label))),
      h("button", { type: "button", class: "small", "data-walk-undo": true, "aria-keyshortcuts": "u", disabled: !answered.length },
        kbd("u"), " Take back last answer"),
    ].filter(Boolean));
    form.querySelector("[data-walk-label]").value = label;
    const sent = form.querySelector("[data-walk-path]");
    if (sent) { sent.value = label ? JSON.stringify(path) : ""; }
    submit.disabled = !label;
    const field = form.querySelector("[data-step-text]");
    if (field) { field.setSelectionRange(field.value.length, field.value.length); }
    if (refocus) {
      const first = label ? submit : (!outOfField && field) || form.querySelector(".amend-question");
      if (first) { first.focus({ preventScroll: true }); }
    }
  }

  function refuse(form, text) {
    const element = form.querySelector("[data-walk-refused]");
    element.textContent = text;
    element.hidden = false;
  }
  function change(form, path, outOfField) {
    form.querySelector("[data-walk-refused]").hidden = true;
    paths.set(form, path);
    draw(form, true, outOfField);
  }
  function answer(form, step, value) {
    const path = protocolOf(form).answer(paths.get(form), step, value);
    if (path) { change(form, path); } else { refuse(form, "That answer does not apply now: it was not applied."); }
  }
  // A key (or a button) on a multiple, scale or text step: what its kind says it does. False: not its key.
  function kindKey(form, key, inField) {
    const protocol = protocolOf(form);
    const next = protocol.nextStep(paths.get(form));
    const outcome = next && kindOf(protocol, next).key(protocol.step(next), key, draftOf(form, next), inField);
    if (!outcome) { return false; }
    if (outcome.refuse) { refuse(form, outcome.refuse); }
    else if (outcome.draft) { setDraft(form, next, outcome.draft); form.querySelector("[data-walk-refused]").hidden = true; draw(form, true); }
    else if (outcome.focus) { draw(form, true); }
    else { answer(form, next, outcome.answer); }
    return true;
  }
  function takeBack(form) {
    if (!Object.keys(paths.get(form)).length) { refuse(form, "Nothing to take back: no question is answered yet."); return; }
    change(form, protocolOf(form).undo(paths.get(form)), true);
  }

  function init(root) {
    const forms = root.matches && root.matches("form[data-amend-walk]") ? [root] : root.querySelectorAll ? Array.from(root.querySelectorAll("form[data-amend-walk]")) : [];
    forms.forEach((form) => { if (!paths.has(form) && protocolOf(form)) { paths.set(form, {}); draw(form, false); } });
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button[data-walk-value], button[data-walk-undo], [data-walk] button[data-step]");
    const form = button && button.closest("form[data-amend-walk]");
    if (!form || !paths.has(form)) { return; }
    if (button.hasAttribute("data-walk-undo")) { takeBack(form); return; }
    if (button.dataset.walkStep !== undefined) { answer(form, button.dataset.walkStep, button.dataset.walkValue); return; }
    const action = clicked(button);  // a kind's button: a toggle, the confirm, a scale's point
    if (action.toggle !== undefined) { kindKey(form, button.dataset.key, false); }
    else if (action.confirm) { kindKey(form, "Enter", true); }
    else { answer(form, button.dataset.step, action.answer); }
  });

  // The text step's words are the form's draft until Enter confirms them.
  document.addEventListener("input", (event) => {
    const field = event.target;
    const form = field.dataset && field.dataset.stepText && field.closest("form[data-amend-walk]");
    if (form && paths.has(form)) { setDraft(form, field.dataset.stepText, field.value); }
  });

  // The keys, through the keymap's one listener (keymap.js: in a field every key is text but Ctrl+Enter and Esc).
  addLayer(ORDER.walk, (event, command) => {
    const target = event.target;
    // The summary just clicked holds the focus until the toggle event moves it into the form: its keys are the form's.
    const summary = target.matches && target.matches("details[open] > summary") ? target : null;
    const form = summary ? summary.parentElement.querySelector("form[data-amend-walk]") : target.closest && target.closest("form[data-amend-walk]");
    const details = form && form.closest("details");
    if (!form || !paths.has(form) || (details && !details.open)) { return false; }
    const protocol = protocolOf(form);
    const path = paths.get(form);
    const next = protocol.nextStep(path);
    const kind = next && protocol.kindOf(next);
    if (target.dataset && target.dataset.stepText) { // the text step's field: Ctrl+Enter confirms the words, Esc leaves it
      if (command === "leave") { target.blur(); form.querySelector(".amend-question").focus(); }
      else if (command === "confirm") { kindKey(form, "Enter", true); }
      else if (command === "enter") { refuse(form, ENTER_IN_FIELD); }
      else { return false; }
      return true;
    }
    if (inField(target)) { return false; }
    const key = event.key;
    // Enter confirms a multiple step's picks (or goes back into a text step's field) wherever the focus is in the
    // form but on the undo button; elsewhere Tab, Enter, Space and arrows keep their usual work.
    if (command === "confirm" && (kind === "multiple" || kind === "text") && !target.matches("summary, [data-walk-undo], [data-walk-submit], [data-confirm]")) {
      kindKey(form, "Enter", false);
      return true;
    }
    if (!/^[0-9a-z]$/i.test(key) || event.ctrlKey || event.metaKey || event.altKey) { return false; }
    if (command === "undo") { takeBack(form); return true; }
    if (kind && kind !== "choice" && kindKey(form, key, false)) { return true; }
    const option = next && kind === "choice" && protocol.step(next).answers.find((a) => a.key === key || a.yn === key);
    if (option) { answer(form, next, option.value); }
    else if (!next) { refuse(form, "Key " + key + " was not applied: the walk has reached " + labelName(protocol, protocol.labelOf(path)) + ". u takes the last answer back."); }
    else { refuse(form, "Key " + key + " is not an answer to \u201c" + protocol.step(next).question + "\u201d: it was not applied."); }
    return true;
  }, SCREENS.amend);
  listen((text, event) => { const form = event.target.closest && event.target.closest("form[data-amend-walk]"); if (form && paths.has(form)) { refuse(form, text); } });

  // Opening "Amend my answer" puts the focus in its form, so the keys answer at once. `toggle` does not bubble.
  document.addEventListener("toggle", (event) => {
    const details = event.target;
    const form = details.open && details.querySelector && details.querySelector("form[data-amend-walk]");
    if (!form || !paths.has(form)) { return; }
    const active = document.activeElement;
    if (!active || active === document.body || details.contains(active)) {
      const first = form.querySelector("[data-step-text], .amend-question") || form.querySelector("[data-walk-submit]:not([disabled])");
      if (first) { first.focus({ preventScroll: true }); }
    }
  }, true);

  document.addEventListener("htmx:load", (event) => init(event.detail.elt));
  init(document);
}
start();
