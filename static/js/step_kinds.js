// The step kinds on screen: one entry per kind (docs/protocols.md), used by every page that walks a protocol (the
// annotation panel, the adjudicator's walk, the protocol page's preview). What a kind accepts as a value is
// protocol_walk.js's KINDS; here is how it is asked: the keys it takes, what it draws, how a value reads.
//
// key(step, key, draft) answers what a key does on the step asked next, given the draft (the multiple choice
// step's picks so far, a text step's words): {answer: value} (the step is answered), {draft: picks} (a pick
// toggled), {refuse: text} (said on screen, nothing changes) or null (not the step's key: the page's own).
// Drafts are the page's until the step is answered; the value sent is the kind's (a list, an integer, a string).
// listed(step): a step that does not branch, its [key, words] pairs (the answers, the points with their anchors),
// as the protocol page's tree lists them.
import { h, kbd } from "./dom.js";
import { KINDS } from "./protocol_walk.js";

const bounds = (step) => ({ min: step.min === undefined ? 1 : step.min, max: step.max === undefined ? step.answers.length : step.max });
const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
const ANSWER_KEY = /^[1-9yn]$/;
const anchor = (step, value) => ((step.anchors || []).find(([point]) => point === value) || [null, ""])[1];
// A scale's points: [key, point] pairs as the server describes them (annotator/domain/protocol/kinds/scale.py key_of).
const points = (step) => step.points;

export const STEP_KINDS = {
  choice: {
    key(step, key) {
      const option = step.answers.find((a) => a.key === key || a.yn === key);
      if (option) { return { answer: option.value }; }
      return ANSWER_KEY.test(key) ? { refuse: "Key " + key + " is not an answer to this question." } : null;
    },
    shown: (step, value) => (step.answers.find((a) => a.value === value) || { label: value }).label,
    hint: () => null,
    // The answers' buttons (data-step, data-value: a click answers).
    answers: (step, name) => step.answers.map((a) => h("button", {
      type: "button", class: "answer primary", "data-step": name, "data-value": a.value, "data-key": a.key,
      "data-yn": a.yn || null, "aria-keyshortcuts": a.key + (a.yn ? " " + a.yn : ""),
    }, kbd(a.key), a.yn ? [" ", kbd(a.yn)] : null, " " + a.label)),
  },
  multiple: {
    key(step, key, draft) {
      const picks = draft || [];
      const { min, max } = bounds(step);
      if (key === "Enter") {
        if (picks.length < min) { return { refuse: "Pick at least " + plural(min, "answer") + " with their digits, then Enter confirms." }; }
        return { answer: step.answers.map((a) => a.value).filter((v) => picks.includes(v)) };
      }
      const option = step.answers.find((a) => a.key === key);
      if (!option) { return ANSWER_KEY.test(key) ? { refuse: "Key " + key + " is not an answer to this question." } : null; }
      if (picks.includes(option.value)) { return { draft: picks.filter((v) => v !== option.value) }; }
      if (picks.length >= max) { return { refuse: "At most " + plural(max, "answer") + ": drop one first (its digit again)." }; }
      return { draft: picks.concat([option.value]) };
    },
    shown: (step, value) => value.map((v) => STEP_KINDS.choice.shown(step, v)).join(", "),
    listed: (step) => step.answers.map((a) => [a.key, a.label]),
    // What the step asks, without the picks (the protocol page's tree). The bounds are a count of answers, not a
    // range of keys: "pick 1 to 3" (issue 50).
    rule: (step) => {
      const { min, max } = bounds(step);
      return ["Several may apply: pick " + (min === max ? min : min + " to " + max) + "; each digit picks or drops its answer, ",
        kbd("Enter"), " confirms."];
    },
    hint: (step, draft) => STEP_KINDS.multiple.rule(step).concat(
      [" Picked: " + ((draft || []).length ? STEP_KINDS.multiple.shown(step, draft) : "none") + "."]),
    // Toggles (data-toggle: a click picks or drops) and the confirming button (data-confirm).
    answers: (step, name, draft) => step.answers.map((a) => {
      const on = (draft || []).includes(a.value);
      return h("button", { type: "button", class: "answer toggle" + (on ? " chosen" : ""), "data-step": name, "data-toggle": a.value,
        "data-key": a.key, "aria-pressed": on ? "true" : "false", "aria-keyshortcuts": a.key }, kbd(a.key), " " + a.label);
    }).concat([h("button", { type: "button", class: "primary confirm", "data-step": name, "data-confirm": "", "aria-keyshortcuts": "Enter" },
      kbd("Enter"), " Confirm")]),
  },
  scale: {
    key(step, key) {
      const point = points(step).find(([digit]) => digit === key);
      if (point) { return { answer: point[1] }; }
      return ANSWER_KEY.test(key) ? { refuse: "Key " + key + " is not a point of this scale: its keys are 1–" + points(step).length + "." } : null;
    },
    shown: (step, value) => String(value) + (anchor(step, value) ? " (" + anchor(step, value) + ")" : ""),
    hint: (step) => ["A digit picks a point of the scale (", kbd("1"), "–", kbd(String(points(step).length)), ")."],
    listed: (step) => points(step).map(([digit, value]) => [digit, value + (anchor(step, value) ? " — " + anchor(step, value) : "")]),
    answers: (step, name) => STEP_KINDS.scale.listed(step).map(([digit, words], index) => h("button", {
      type: "button", class: "answer scale-point", "data-step": name, "data-point": String(points(step)[index][1]), "data-key": digit,
      "aria-keyshortcuts": digit,
    }, kbd(digit), " " + words)),
  },
  text: {
    // The words typed in the field ("Enter" in the field is its confirmation, Ctrl+Enter: keymap.js; Enter outside
    // goes back into the field).
    key(step, key, draft, inField) {
      if (key !== "Enter") { return null; }
      if (!inField) { return { focus: true }; }
      const words = draft || "";
      if (KINDS.text.parse(step, words) !== null) { return { answer: words }; }
      return { refuse: words.includes("\u0000") ? "The text cannot hold a NUL character." : [...words].length > step.max_length
        ? "At most " + step.max_length + " characters." : "Write the answer first: it cannot be left blank." };
    },
    shown: (step, value) => (value ? "“" + value + "”" : "(left blank)"),
    listed: () => [],
    hint: (step) => ["Type the answer in the field; ", kbd("Ctrl"), "+", kbd("Enter"), " confirms", step.optional ? " (it may be left blank)" : "",
      ", ", kbd("Shift"), "+", kbd("Enter"), " a new line, ", kbd("Esc"), " leaves the field (", kbd("Enter"), " goes back in; ",
      kbd("u"), " then takes the last answer back)."],
    answers: (step, name, draft) => {
      const field = h("textarea", { class: "step-text", "data-step-text": name, rows: "3", maxlength: String(step.max_length),
        "aria-label": step.question });
      field.value = draft || "";
      return [field, h("button", { type: "button", class: "primary confirm", "data-step": name, "data-confirm": "", "aria-keyshortcuts": "Control+Enter" },
        kbd("Ctrl"), "+", kbd("Enter"), " Confirm")];
    },
  },
};

export const kindOf = (protocol, name) => STEP_KINDS[protocol.kindOf(name)] || STEP_KINDS.choice;
// How an answered step reads ("Fabricated fact, Wrong citation"; "4 (serious)"; "“because…”").
export const shownValue = (protocol, name, value) => kindOf(protocol, name).shown(protocol.step(name), value);
// What a click on a step's button means: {answer: value}, {toggle: value} or {confirm: true}.
export function clicked(button) {
  if (button.dataset.toggle !== undefined) { return { toggle: button.dataset.toggle }; }
  if (button.dataset.confirm !== undefined) { return { confirm: true }; }
  if (button.dataset.point !== undefined) { return { answer: Number(button.dataset.point) }; }
  return { answer: button.dataset.value };
}
