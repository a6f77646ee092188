// The command keys of every screen that walks a protocol (the annotation page, the amend form of the feedback
// inbox, the adjudication screen, the protocol page's preview), in one place: which key runs which command, the one
// rule saying whether a key is a command at all, and what the annotation page's help dialog (#help, key ?) says
// about each. The help table is drawn from this module, so a key changed here is changed on the page and in its
// help at once.
//
// The rule (issue 46): typed text is text, never a command. While a text field holds the focus no key is a
// command but Ctrl+Enter (Cmd+Enter on a Mac), which confirms the text, and Esc, which leaves the field; a plain
// Enter there never confirms (a typist hits it by accident in the middle of a sentence). Keys that arrive outside a
// field right after keys typed in one (less than HOLD_MS apart) are held, not applied: a typist still typing after
// the text was confirmed, or after the field closed under them, does not answer, move or submit anything. The hold
// lasts while the keys keep coming; Esc ends it (leaving a field is deliberate).
//
// One keydown listener per page. The parts of a page (the claims panels, the decision panel, the question and flag
// dialogs' openers; the amend forms; the disputes; the preview) each register a layer: a function given the event
// and the command its key names in the layer's table, answering true when it used the key. Layers are asked in
// their order until one uses the key; then the key's default is prevented. Keys typed in a dialog's own fields are
// the dialog's business (its own listener on the dialog runs before this one, which sees their defaultPrevented).
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
  confirm: ["Enter"],   // a multiple choice step's picks; back into a text step's field (in a field: Ctrl+Enter)
  leave: ["Escape"],    // out of a field, back to the panel
};
// The other walking screens' commands (their answer keys come with the protocol, as on the annotation page).
export const SCREENS = {
  annotation: COMMANDS,
  // templates/gold/adjudicate.html lists them for the adjudicator.
  adjudication: { next: ["j"], previous: ["k"], undo: ["u"], side: ["a", "b", "c"], reason: ["r"], onward: ["n"],
    confirm: ["Enter"], leave: ["Escape"] },
  amend: { undo: ["u"], confirm: ["Enter"], leave: ["Escape"] },
  preview: { undo: ["u"], restart: ["r"], confirm: ["Enter"], leave: ["Escape"] },
};
const byKey = new Map(); // table -> key -> command
function tableOf(table) {
  if (!byKey.has(table)) {
    const keys = new Map();
    Object.entries(table).forEach(([id, list]) => list.forEach((key) => { if (!keys.has(key)) { keys.set(key, id); } }));
    byKey.set(table, keys);
  }
  return byKey.get(table);
}
// The command a key names outside a field ("" when none).
export const commandOf = (key, table = COMMANDS) => tableOf(table).get(key) || "";

// ---- the rule: is this key a command? ---------------------------------------------------------------------------
// A field whose keys are text (radio buttons and checkboxes are not: their keys are the screen's).
const FIELD = "textarea, select, [contenteditable], input:not([type=radio]):not([type=checkbox]):not([type=button]):not([type=submit]):not([type=hidden])";
export const inField = (element) => !!(element && element.closest && element.closest(FIELD));
// What a key means where it was pressed, in the screen's `table`: in a field "confirm" (Ctrl/Cmd+Enter), "leave"
// (Esc), "enter" (a plain Enter: never a confirmation there; the screen says how to confirm) or "" (text); outside
// a field the table's command ("confirm" for Enter and for Ctrl/Cmd+Enter). Other Ctrl, Cmd or Alt keys: "".
export function commandAt(event, table = COMMANDS) {
  if (event.altKey) { return ""; }
  if (event.ctrlKey || event.metaKey) { return event.key === "Enter" && !event.shiftKey ? "confirm" : ""; }
  if (!inField(event.target)) { return commandOf(event.key, table); }
  if (event.key === "Escape") { return "leave"; }
  return event.key === "Enter" && !event.shiftKey ? "enter" : "";
}
// What a screen says of a plain Enter in a text field (the help's words too).
export const ENTER_IN_FIELD = "Enter alone does not confirm a text: Ctrl+Enter (⌘+Enter on a Mac) confirms it, Shift+Enter starts a new line.";

// The hold: a key outside a field less than HOLD_MS after a key typed in one (or after a key held) is held.
export const HOLD_MS = 500;
export const HELD = "Held: keys right after typing are not applied. Pause, then press the key again.";
const PASSING = ["Shift", "Control", "Alt", "Meta", "CapsLock", "Tab", "AltGraph", "Dead"];
let typedAt = -Infinity;
let holdTimer = null;
function hold(now) {
  typedAt = now;
  document.documentElement.dataset.keysHeld = "true"; // while on (the browser tests wait for its end)
  clearTimeout(holdTimer);
  holdTimer = setTimeout(() => { delete document.documentElement.dataset.keysHeld; }, HOLD_MS);
}
function release() {
  typedAt = -Infinity;
  clearTimeout(holdTimer);
  delete document.documentElement.dataset.keysHeld;
}
// True when the key is held (not applied). Keys in a field are typed (they arm the hold), Esc ends it.
function held(event) {
  const now = performance.now();
  if (event.key === "Escape") { release(); return false; }
  if (inField(event.target)) { hold(now); return false; }
  if (PASSING.includes(event.key) || ((event.ctrlKey || event.metaKey || event.altKey) && event.key !== "Enter")) { return false; }
  if (now - typedAt >= HOLD_MS) { return false; }
  hold(now); // still typing: held while the keys keep coming
  return true;
}
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
  [() => [kbd("Ctrl"), "+", k("confirm"), " ", k("leave")], () => ["A written answer: type it in the field, ", kbd("Ctrl"), "+",
    k("confirm"), " (", kbd("⌘"), "+", k("confirm"), ") confirms it; ", k("confirm"), " alone does not (", kbd("Shift"), "+",
    k("confirm"), " new line). ", k("leave"), " leaves the field (", k("confirm"), " goes back in); ", k("undo"),
    " in the field is a letter: ", k("leave"), " then ", k("undo"), " takes the last answer back"], "text"],
  [() => [k("next"), " ", k("next", 1), " ", k("next", 2)], () => "Next sentence"],
  [() => [k("previous"), " ", k("previous", 1), " ", k("previous", 2)], () => "Previous sentence"],
  [() => k("undo"), () => ["Undo the last answer of this sentence (from a text field: ", k("leave"), " first; a text step taken back keeps its words, ",
    k("confirm"), " goes back into them)"]],
  [() => k("evidence"), () => "Attach the text selected in the reference as evidence (whole words)"],
  [() => k("find"), () => ["Find in the reference (", kbd("Enter"), " next, ", kbd("Shift"), "+", kbd("Enter"), " previous, ", kbd("Esc"), " closes)"]],
  [() => k("note"), () => ["Write a note (", kbd("Ctrl"), "+", kbd("Enter"), " saves, ", kbd("Shift"), "+", kbd("Enter"), " new line, ", kbd("Esc"), " leaves)"]],
  [() => k("ask"), () => "Ask the project leads a question about this sentence (it carries your answers so far)"],
  [() => k("flag"), () => ["Flag the sentence as mis-segmented (", kbd("1"), " two sentences, ", kbd("2"), " not a sentence, ",
    kbd("3"), " other; then the note, ", kbd("Enter"), " sends, ", kbd("Esc"), " cancels)"]],
  [() => [k("submit"), " ", k("confirm")], () => ["Submit the turn (when every sentence has a label) and open your next one: ", k("submit"),
    " asks first, ", k("confirm"), " then submits (", k("leave"), " or any other key does not). The bar's buttons submit at a click; its ",
    h("em", null, "& stop"), " submits and goes back to the queue instead"]],
  [() => k("triplets"), () => "Go to the claim triplets (first one without a label)", "triplets"],
  [() => ["in triplets: ", kbd("e"), " ", kbd("n"), " ", kbd("c"), " ", kbd("b"), " (or ", kbd("1"), "–", kbd("4"), ")"],
    () => "Entailment / Neutral / Contradiction / bad triplet, then the next triplet", "triplets"],
  [() => ["in triplets: ", k("next"), " ", k("previous"), " ", kbd("a"), " ", k("leave")],
    () => "Next / previous triplet, add a triplet, back to the sentences", "triplets"],
  [() => k("rate"), (d) => "Rate the active sentence" + (d.rated ? " (" + d.rated + ")" : ""), "extras"],
  [() => ["there: ", kbd("1"), "–", kbd("5"), " ", kbd("0"), " ", kbd("r"), " ", kbd("x"), " ", k("leave")],
    () => ["Severity, clear it, write the justification (", kbd("Enter"), " saves), choose the error type, leave"], "extras"],
  [() => k("help"), () => "Show / hide this help"],
  [() => "typing", () => ["In a text field every key is text: no key there answers, moves or submits. Keys pressed less than half a " +
    "second after typing, outside the field, are held (not applied): pause, then press them again. ", k("leave"), " ends the hold"]],
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
// A part of the page asks for keys: handle(event, command) -> true when it used the key. `order`: lower first;
// `table`: the screen's commands (SCREENS).
export function addLayer(order, handle, table = COMMANDS) {
  layers.push({ order, handle, table });
  layers.sort((a, b) => a.order - b.order);
}
// The layers' order: the claims panels (keys inside them are theirs), the decision panel, then the dialog openers;
// the other screens have one layer each.
export const ORDER = { claims: 10, workspace: 20, ask: 30, flag: 40, walk: 20 };
let listening = false;
let say = () => {};
// `said(text, event)`: how the page says a key was held (the first screen's to give one).
export function listen(said) {
  if (said && !listening) { say = said; }
  if (listening) { return; }
  listening = true;
  document.addEventListener("keydown", (event) => {
    if (held(event)) { event.preventDefault(); say(HELD, event); return; }
    if (event.defaultPrevented || ((event.altKey || event.ctrlKey || event.metaKey) && !commandAt(event))) { return; }
    for (const layer of layers) {
      if (layer.handle(event, commandAt(event, layer.table))) { event.preventDefault(); return; }
    }
  });
}
