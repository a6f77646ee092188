// The protocol page's preview (templates/projects/protocol.html): draws the tree of the document being edited
// and lets the lead walk it with the annotation screen's keys. The description comes from the server
// (Protocol.describe(), in the walk's data-description) and is walked with protocol_walk.js: no rule is written here.
// Its keys are the keymap's (keymap.js SCREENS.preview, and the one rule of what a key typed in a field is).
import { h, kbd } from "./dom.js";
import { AnnotationProtocol } from "./protocol_walk.js";
import { kindOf, shownValue } from "./step_kinds.js";
import { addLayer, ENTER_IN_FIELD, inField, listen, ORDER, SCREENS } from "./keymap.js";

function start() {

  function chip(protocol, labelId) {
    const label = protocol.labels().find((l) => l.value === labelId) || { label: labelId };
    const element = h("span", { class: "chip protocol-chip", "data-label": labelId }, label.label);
    if (label.colour) { element.style.setProperty("background", label.colour); element.style.setProperty("color", label.text_colour); }
    return element;
  }

  function drawNode(protocol, node) {
    if (!node.step) { return chip(protocol, node.label); }
    const step = protocol.step(node.step);
    if (node.after) { // a step that does not branch (step_kinds.js): what it asks, its answers or points, then the node after it
      const kind = kindOf(protocol, node.step);
      return h("div", { class: "protocol-node", "data-step": node.step, "data-kind": protocol.kindOf(node.step) },
        h("strong", null, step.question), " ", h("span", { class: "muted" }, "(" + protocol.kindOf(node.step) + ")"),
        h("ul", null, (kind.listed ? kind.listed(step) : []).map(([key, words]) => h("li", { "data-listed": key }, kbd(key), " ", words)),
          h("li", null, kind.rule ? kind.rule(step) : kind.hint(step, []), " → ", drawNode(protocol, node.after))));
    }
    return h("div", { class: "protocol-node", "data-step": node.step },
      h("strong", null, step.question),
      h("ul", null, step.answers.map((answer) => h("li", null,
        kbd(answer.key), answer.yn ? [" ", kbd(answer.yn)] : null, " ", answer.label, " → ",
        drawNode(protocol, node.then[answer.value])))));
  }

  // Keys that answer some question (1-9, y, n): one that does not apply to the question shown is refused with a
  // short message, as the annotation screen refuses it, instead of doing nothing without a word.
  const ANSWER_KEY = /^[1-9yn]$/;

  function refusal(protocol, next, key) {
    if (!next) { return key + " does not apply: the walk has reached a label. u takes the last answer back, r starts again."; }
    const answers = protocol.step(next).answers;
    const keys = answers.map((a) => a.key).concat(answers.filter((a) => a.yn).map((a) => a.yn));
    return key + " does not apply to this question: its keys are " + keys.join(", ") + ".";
  }

  // walk: {path, drafts: step -> picks or words, left: a text field was left with Esc, message}
  function drawWalk(protocol, box, walk) {
    const { path, drafts, message } = walk;
    const hadFocus = box.contains(document.activeElement); // the walk keeps the keys when what had the focus is redrawn
    const next = protocol.nextStep(path);
    const answered = Object.keys(protocol.ordered(path)).map((stepId) =>
      h("li", null, protocol.step(stepId).question, " ", h("strong", null, shownValue(protocol, stepId, path[stepId]))));
    const kind = next && kindOf(protocol, next);
    const current = next
      ? [h("p", { class: "protocol-question", "data-testid": "walk-question" }, protocol.step(next).question),
         protocol.kindOf(next) === "choice"
           ? h("p", null, protocol.step(next).answers.map((a) => h("span", { class: "protocol-answer" }, kbd(a.key), a.yn ? [" ", kbd(a.yn)] : null, " ", a.label, " ")))
           : h("div", { class: "protocol-kind", "data-kind": protocol.kindOf(next) }, h("p", { class: "muted" }, kind.hint(protocol.step(next), drafts[next])),
             h("div", { class: "answers" }, kind.answers(protocol.step(next), next, drafts[next])))]
      : [h("p", { "data-testid": "walk-label" }, "Label: ", chip(protocol, protocol.labelOf(path)))];
    // replaceChildren writes a null as the text "null": only the parts there are.
    box.replaceChildren(...[h("ol", { class: "protocol-path" }, answered), ...current,
      message ? h("p", { class: "walk-refused", role: "alert", "data-testid": "walk-refused" }, message) : null,
      h("p", { class: "muted" }, kbd("u"), " takes the last answer back, ", kbd("r"), " starts again.")].filter(Boolean));
    const field = box.querySelector("[data-step-text]");
    if (field && !walk.left) { field.focus({ preventScroll: true }); field.setSelectionRange(field.value.length, field.value.length); }
    else if (hadFocus && !box.contains(document.activeElement)) { box.focus({ preventScroll: true }); }
  }

  // A key on the walk: the step's kind says what it does (step_kinds.js); true when it was the walk's.
  function walkKey(protocol, walk, key, inField) {
    walk.message = "";
    const next = protocol.nextStep(walk.path);
    if (!next) { if (!ANSWER_KEY.test(key)) { return false; } walk.message = refusal(protocol, next, key); return true; }
    const outcome = kindOf(protocol, next).key(protocol.step(next), key, walk.drafts[next], inField);
    if (!outcome) { return false; }
    if (outcome.refuse) { walk.message = protocol.kindOf(next) === "choice" ? refusal(protocol, next, key) : outcome.refuse; }
    else if (outcome.draft) { walk.drafts[next] = outcome.draft; }
    else if (outcome.focus) { walk.left = false; }
    else { walk.path = protocol.answer(walk.path, next, outcome.answer) || walk.path; walk.left = false; }
    return true;
  }

  // box -> {protocol, walk} of the previews on the page (one layer of keys for all of them).
  const walks = new WeakMap();
  const walkOf = (target) => { const box = target.closest && target.closest(".protocol-walk[data-description]"); return box && walks.get(box) ? [box, walks.get(box)] : [null, null]; };
  addLayer(ORDER.walk, (event, command) => {
    const [box, found] = walkOf(event.target);
    if (!box) { return false; }
    const { protocol, walk } = found;
    if (event.target.dataset.stepText) { // a text step's field: Ctrl+Enter confirms, Esc leaves, the rest is typed
      if (command === "leave") { walk.left = true; box.focus(); return true; }
      if (command === "enter") { walk.message = ENTER_IN_FIELD; drawWalk(protocol, box, walk); return true; }
      if (command !== "confirm" || !walkKey(protocol, walk, "Enter", true)) { return false; }
    } else if (inField(event.target)) { return false; }
    else if (command === "undo") { walk.path = protocol.undo(walk.path); walk.message = ""; walk.left = true; } // a text step taken back is not entered
    else if (command === "restart") { walk.path = {}; walk.drafts = {}; walk.message = ""; walk.left = false; }
    else if (!walkKey(protocol, walk, command === "confirm" ? "Enter" : event.key, false)) { return false; }
    drawWalk(protocol, box, walk);
    return true;
  }, SCREENS.preview);
  listen((text, event) => { const [box, found] = walkOf(event.target); if (box) { found.walk.message = text; drawWalk(found.protocol, box, found.walk); } });

  function init(root) {
    const container = root.querySelector ? root.querySelector("[data-protocol-preview]") || (root.matches && root.matches("[data-protocol-preview]") ? root : null) : null;
    if (!container) { return; }
    const box = container.querySelector(".protocol-walk[data-description]");
    if (!box) { return; }
    const protocol = new AnnotationProtocol(JSON.parse(box.dataset.description));
    const tree = container.querySelector(".protocol-tree");
    tree.replaceChildren(drawNode(protocol, protocol.d.tree));
    const walk = { path: {}, drafts: {}, left: false, message: "" };
    walks.set(box, { protocol, walk });
    drawWalk(protocol, box, walk);
    box.addEventListener("input", (event) => { if (event.target.dataset.stepText) { walk.drafts[event.target.dataset.stepText] = event.target.value; } });
    box.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-step]");
      if (!button) { return; }
      const key = button.dataset.confirm !== undefined ? "Enter" : button.dataset.key;
      if (walkKey(protocol, walk, key, true)) { drawWalk(protocol, box, walk); }
    });
  }

  // A chosen file is loaded into the editor, not sent: the preview then shows it, and it is set only when the lead
  // presses "Set the protocol" (the text is what is sent, as read from the file; a .yaml file stays YAML).
  function loadChosenFile(input) {
    const file = input.files && input.files[0];
    const editor = document.getElementById("id_document");
    if (!file || !editor) { return; }
    file.text().then((text) => {
      editor.value = text;
      const format = document.getElementById("id_document_format");
      if (format) { format.value = /\.ya?ml$/i.test(file.name) ? "yaml" : "json"; }
      const edited = document.querySelector('input[name=source][value=edited]');
      if (edited) { edited.checked = true; }
      input.value = "";  // what is set is the editor's text, previewed
      const said = document.getElementById("file-loaded");
      if (said) { said.textContent = file.name + " is in the editor and its preview; nothing is set until you press Set the protocol."; said.hidden = false; }
      editor.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }

  document.addEventListener("change", (event) => {
    if (event.target && event.target.id === "id_file") { loadChosenFile(event.target); }
  });
  // Typing in the editor makes it the document again: its format is read from the text, not the file's name.
  document.addEventListener("input", (event) => {
    const format = document.getElementById("id_document_format");
    if (event.isTrusted && event.target && event.target.id === "id_document" && format) { format.value = ""; }
  });
  document.addEventListener("DOMContentLoaded", () => {
    init(document);
    // A file chosen before this module ran (its change event had no listener yet) is loaded now, not lost.
    const input = document.getElementById("id_file");
    if (input && input.files && input.files.length) { loadChosenFile(input); }
  });
  document.addEventListener("htmx:load", (event) => init(event.detail.elt));
}
start();
