// The protocol walked from its description: AnnotationProtocol (an ES module).
//
// annotator/domain/protocol/__init__.py `describe()` embeds the protocol in the page as data (steps, answers, keys, the tree of which
// step follows which answer and the label each path ends on). No rule of the protocol is written here: every
// question, answer, key and label comes from that description. The annotation screen, the adjudication screen and
// the amend form after feedback all walk it with this one file.
//
// A step has a kind (docs/protocols.md): only a choice step branches (its tree node is {"step", "then": {answer:
// node}}); the others ask one thing and go on ({"step", "kind", "after": node}). What a kind accepts as a value is
// its entry in KINDS, the one place per kind in the walk (the annotation panel draws and keys the kinds with
// step_kinds.js); annotator/domain/protocol/kinds/ is the same in Python.

const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// kind -> {parse(step, value): the value as the step keeps it, or null when the step does not take it;
//          after(node, value): the node it leads to}. annotator/domain/protocol/kinds/<kind>.py parse_value is the same.
export const KINDS = {
  choice: {
    parse: (step, value) => (typeof value === "string" && step.answers.some((a) => a.value === value) ? value : null),
    after: (node, value) => (own(node.then, value) ? node.then[value] : null),
  },
  // Between min and max of the step's answers, none twice; kept in the step's answer order (equal sets, equal values).
  multiple: {
    parse: (step, value) => {
      const order = step.answers.map((a) => a.value);
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && order.includes(v)) || new Set(value).size !== value.length) { return null; }
      const min = step.min === undefined ? 1 : step.min;
      const max = step.max === undefined ? order.length : step.max;
      return value.length >= min && value.length <= max ? order.filter((v) => value.includes(v)) : null;
    },
    after: (node) => node.after,
  },
  // An integer point of the scale (a boolean is no integer here either).
  scale: {
    parse: (step, value) => (Number.isInteger(value) && value >= step.min && value <= step.max ? value : null),
    after: (node) => node.after,
  },
  // Words: no NUL, at most max_length characters (as Python counts them: code points), not blank unless optional.
  text: {
    parse: (step, value) => (typeof value === "string" && !value.includes("\u0000") &&
      [...value].length <= step.max_length && (!!step.optional || value.trim() !== "") ? value : null),
    after: (node) => node.after,
  },
};

export function AnnotationProtocol(description) {
  this.d = description;
  this.labelNames = {};
  description.labels.forEach((label) => { this.labelNames[label.value] = label.label; });
}
AnnotationProtocol.prototype.kindOf = function (stepName) {
  const step = this.d.steps[stepName];
  return (step && step.kind) || "choice";
};
// `value` as the step keeps it (null when the step does not take it).
AnnotationProtocol.prototype.parse = function (stepName, value) {
  const kind = KINDS[this.kindOf(stepName)];
  return kind && this.d.steps[stepName] ? kind.parse(this.d.steps[stepName], value) : null;
};
// The node after answering `node`'s step with `value` (null when the step does not take that value).
AnnotationProtocol.prototype.after = function (node, value) {
  const parsed = this.parse(node.step, value);
  return parsed === null ? null : KINDS[this.kindOf(node.step)].after(node, parsed);
};
// The node a path leads to (a step still to answer, or a label), and the steps answered on the way, in order.
AnnotationProtocol.prototype.walk = function (path) {
  let node = this.d.tree;
  const answered = [];
  while (node && node.step && own(path, node.step)) {
    const following = this.after(node, path[node.step]);
    if (!following) { break; } // a value the step does not take: the step is still to answer
    answered.push(node.step);
    node = following;
  }
  return { node: node || this.d.tree, answered };
};
AnnotationProtocol.prototype.nextStep = function (path) { return this.walk(path).node.step || null; };
AnnotationProtocol.prototype.labelOf = function (path) { return this.walk(path).node.label || ""; };
AnnotationProtocol.prototype.evidenceRequired = function (path) { return !!this.walk(path).node.evidence; };
// The path in the order the protocol asks its steps (a path read back from the server may come in any order).
AnnotationProtocol.prototype.ordered = function (path) {
  const walked = this.walk(path);
  const ordered = {};
  walked.answered.forEach((step) => { ordered[step] = path[step]; });
  return ordered;
};
// Answer `step` (the one asked next, or one already answered: later answers are dropped). Null if not allowed.
AnnotationProtocol.prototype.answer = function (path, step, value) {
  let node = this.d.tree;
  const kept = {};
  while (node && node.step && node.step !== step && own(path, node.step)) {
    const following = this.after(node, path[node.step]);
    if (!following) { break; }
    kept[node.step] = path[node.step];
    node = following;
  }
  if (!node || node.step !== step || !this.after(node, value)) { return null; }
  kept[step] = this.parse(step, value);
  return kept;
};
AnnotationProtocol.prototype.undo = function (path) {
  const answered = this.walk(path).answered;
  const kept = {};
  answered.slice(0, -1).forEach((step) => { kept[step] = path[step]; });
  return kept;
};
AnnotationProtocol.prototype.step = function (name) { return this.d.steps[name]; };
AnnotationProtocol.prototype.labels = function () { return this.d.labels; };
// The kinds of the protocol's steps (the help dialog lists the keys of those asked).
AnnotationProtocol.prototype.kinds = function () { return [...new Set(Object.keys(this.d.steps).map((s) => this.kindOf(s)))]; };
// Every key that answers something: the labels' keys (independent mode), the choice steps' answer keys (1/2, y/n)
// and the digits, when the protocol has a multiple choice or a scale step.
AnnotationProtocol.prototype.answerKeys = function () {
  const keys = new Set(this.d.labels.map((label) => label.key));
  Object.keys(this.d.steps).forEach((name) => {
    const step = this.d.steps[name];
    const kind = this.kindOf(name);
    if (kind === "choice" || kind === "multiple") { step.answers.forEach((a) => { keys.add(a.key); if (a.yn) { keys.add(a.yn); } }); }
    // A digit that is no point or answer of a multiple choice or scale step is refused there with a word.
    if (kind === "scale" || kind === "multiple") { for (let d = 1; d <= 9; d++) { keys.add(String(d)); } }
  });
  return keys;
};
