// The protocol walked from its description: AnnotationProtocol (an ES module).
//
// annotator/domain/protocol.py `describe()` embeds the protocol in the page as data (steps, answers, keys, the tree of which
// step follows which answer and the label each path ends on). No rule of the protocol is written here: every
// question, answer, key and label comes from that description. The annotation screen, the adjudication screen and
// the amend form after feedback all walk it with this one file.

  export function AnnotationProtocol(description) {
    this.d = description;
    this.labelNames = {};
    description.labels.forEach((label) => { this.labelNames[label.value] = label.label; });
  }
  // The node a path leads to (a step still to answer, or a label), and the steps answered on the way, in order.
  AnnotationProtocol.prototype.walk = function (path) {
    let node = this.d.tree;
    const answered = [];
    while (node && node.step && Object.prototype.hasOwnProperty.call(path, node.step)) {
      answered.push(node.step);
      node = node.then[path[node.step]];
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
    while (node && node.step && node.step !== step && Object.prototype.hasOwnProperty.call(path, node.step)) {
      kept[node.step] = path[node.step];
      node = node.then[path[node.step]];
    }
    if (!node || node.step !== step || !Object.prototype.hasOwnProperty.call(node.then, value)) { return null; }
    kept[step] = value;
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
  // Every key that answers something: the labels' keys (independent mode) and the steps' answer keys (1/2, y/n).
  AnnotationProtocol.prototype.answerKeys = function () {
    const keys = new Set(this.d.labels.map((label) => label.key));
    Object.values(this.d.steps).forEach((step) => step.answers.forEach((a) => { keys.add(a.key); if (a.yn) { keys.add(a.yn); } }));
    return keys;
  };

