// The annotation page's command keys, in one place: which key runs which command, in what order the page's parts
// are asked, and what the help dialog (#help, key ?) says about each. The help table is drawn from this module, so
// a key changed here is changed on the page and in its help at once.
//
// One keydown listener for the whole page. The parts of the page (the claims panels, the decision panel, the
// question and flag dialogs' openers) each register a layer: a function given the event and the command its key
// names, answering true when it used the key. Layers are asked in their order until one uses the key; then the
// key's default is prevented. Keys typed in a dialog's own fields are the dialog's business (its own listener on
// the dialog runs before this one, which sees their defaultPrevented).
import { h, kbd } from "./dom.js";

// The commands: id -> the keys that run it. The answer keys are not here: they come with the protocol's
// description (annotator/domain/protocol/__init__.py describe()), one per answer, and the step kinds' keys below.
export const COMMANDS = {
  help: ["?"],
  find: ["/"],
  next: ["j", "ArrowDown", "ArrowRight"],
  previous: ["k", "ArrowUp", "ArrowLeft"],
  undo: ["u"],
  evidence: ["e"],
  note: ["c"],
  ask: ["q"],
  flag: ["f"],
  submit: ["s"],
  triplets: ["t"],
  rate: ["v"],
  confirm: ["Enter"],   // a multiple choice step's picks, a text step's field, the note
  leave: ["Escape"],    // out of a field, back to the panel
};
const byKey = new Map();
Object.entries(COMMANDS).forEach(([id, keys]) => keys.forEach((key) => { if (!byKey.has(key)) { byKey.set(key, id); } }));
// The command a key names on the page ("" when none).
export const commandOf = (key) => byKey.get(key) || "";
// The keys that act on the page's panel (a dialog open in front of it refuses them with a message).
export const pageKey = (key) => ["next", "previous", "undo", "evidence", "note", "submit", "rate", "find", "help"]
  .includes(commandOf(key));

// The help dialog's rows: [keys shown, words, the feature the row needs]. Features: "walk" (the protocol is
// walked), "independent" (the labels are picked), "multiple"/"scale"/"text" (the protocol has such a step),
// "triplets", "extras" (the severity / error type panel). `words` is a function of the dialog's data-* values.
const k = (id, n) => kbd(label(COMMANDS[id][n || 0]));
const label = (key) => ({ ArrowDown: "↓", ArrowUp: "↑", ArrowRight: "→", ArrowLeft: "←", Escape: "Esc" })[key] || key;
const HELP = [
  [() => "the label's key", () => "Pick the label (each label's key is shown beside it in the panel)", "independent"],
  [() => [kbd("1"), " / ", kbd("2")], () => "Choose the first / second answer of the question", "walk"],
  [() => [kbd("y"), " / ", kbd("n")], (d) => ["Answer yes / no to the question as worded",
    d.yesNoQuestion ? [" (“" + d.yesNoQuestion + "” ", kbd("y"), " = " + d.yesNoAnswer + ")"] : null], "walk"],
  [() => [kbd("1"), "–", kbd("9")], () => ["Several answers may apply: each digit picks or drops its answer, ", k("confirm"),
    " confirms them (at least the number the question asks)"], "multiple"],
  [() => [kbd("1"), "–", kbd("9")], () => "A scale: the digit of a point picks it", "scale"],
  [() => [k("confirm"), " ", k("leave")], () => ["A written answer: type it in the field, ", k("confirm"), " confirms it (",
    kbd("Shift"), "+", k("confirm"), " new line), ", k("leave"), " leaves the field (", k("confirm"), " goes back in)"], "text"],
  [() => [k("next"), " ", k("next", 1), " ", k("next", 2)], () => "Next sentence"],
  [() => [k("previous"), " ", k("previous", 1), " ", k("previous", 2)], () => "Previous sentence"],
  [() => k("undo"), () => "Undo the last answer of this sentence"],
  [() => k("evidence"), () => "Attach the text selected in the reference as evidence (whole words)"],
  [() => k("find"), () => ["Find in the reference (", kbd("Enter"), " next, ", kbd("Shift"), "+", kbd("Enter"), " previous, ", kbd("Esc"), " closes)"]],
  [() => k("note"), () => ["Write a note (", kbd("Enter"), " saves, ", kbd("Shift"), "+", kbd("Enter"), " new line, ", kbd("Esc"), " leaves)"]],
  [() => k("ask"), () => "Ask the project leads a question about this sentence (it carries your answers so far)"],
  [() => k("flag"), () => ["Flag the sentence as mis-segmented (", kbd("1"), " two sentences, ", kbd("2"), " not a sentence, ",
    kbd("3"), " other; then the note, ", kbd("Enter"), " sends, ", kbd("Esc"), " cancels)"]],
  [() => k("submit"), () => ["Submit the turn (when every sentence has a label) and open your next one; the ",
    h("em", null, "& stop"), " button beside it submits and goes back to the queue instead"]],
  [() => k("triplets"), () => "Go to the claim triplets (first one without a label)", "triplets"],
  [() => ["in triplets: ", kbd("e"), " ", kbd("n"), " ", kbd("c"), " ", kbd("b"), " (or ", kbd("1"), "–", kbd("4"), ")"],
    () => "Entailment / Neutral / Contradiction / bad triplet, then the next triplet", "triplets"],
  [() => ["in triplets: ", k("next"), " ", k("previous"), " ", kbd("a"), " ", k("leave")],
    () => "Next / previous triplet, add a triplet, back to the sentences", "triplets"],
  [() => k("rate"), (d) => "Rate the active sentence" + (d.rated ? " (" + d.rated + ")" : ""), "extras"],
  [() => ["there: ", kbd("1"), "–", kbd("5"), " ", kbd("0"), " ", kbd("r"), " ", kbd("x"), " ", k("leave")],
    () => ["Severity, clear it, write the justification (", kbd("Enter"), " saves), choose the error type, leave"], "extras"],
  [() => k("help"), () => "Show / hide this help"],
];

// Fill the help table (the tbody[data-keymap-help] of the dialog) for the page's features.
export function drawHelp(features) {
  const body = document.querySelector("[data-keymap-help]");
  if (!body) { return; }
  const words = body.dataset;
  const on = new Set(features.concat((words.features || "").split(" ").filter(Boolean)));
  body.replaceChildren(...HELP.filter(([, , feature]) => !feature || on.has(feature)).map(([keys, text]) =>
    h("tr", null, h("th", { scope: "row" }, keys(words)), h("td", null, text(words)))));
}

// ---- the one listener -----------------------------------------------------------------------------------------
const layers = [];
// A part of the page asks for keys: handle(event, command) -> true when it used the key. `order`: lower first.
export function addLayer(order, handle) {
  layers.push({ order, handle });
  layers.sort((a, b) => a.order - b.order);
}
// The layers' order: the claims panels (keys inside them are theirs), the decision panel, then the dialog openers.
export const ORDER = { claims: 10, workspace: 20, ask: 30, flag: 40 };
let listening = false;
export function listen() {
  if (listening) { return; }
  listening = true;
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) { return; }
    const command = commandOf(event.key);
    for (const layer of layers) {
      if (layer.handle(event, command)) { event.preventDefault(); return; }
    }
  });
}
