// The decision panel of the annotation page, drawn from the page's state (static/js/workspace.js).
//
// Everything shown comes from the protocol's description and the page's data: the walk so far (each answer a
// button that changes it), the question asked next with its definition, answers, keys and the project's
// examples, or the label reached; in independent mode the seven labels; then undo, evidence and the note.
// Text is always inserted as text (never as HTML).
import { h, kbd } from "./dom.js";
import { kindOf, shownValue } from "./step_kinds.js";
import { inField } from "./keymap.js";



  export function AnnotationPanel(protocol, data) {
    this.protocol = protocol;
    this.data = data;
    this.drawn = new Map();   // signature -> node, the sections of the last drawing
    this.listIds = new WeakMap(); // an evidence list -> a number (a sentence's list is replaced when it changes)
    // sentence id + step -> what is picked or written on a step not yet answered (step_kinds.js), kept for this tab
    // over a reload (the answer itself is the outbox's, once confirmed).
    this.draftsKey = "annotator-drafts:" + data.assignment;
    let kept = {};
    try { kept = JSON.parse(sessionStorage.getItem(this.draftsKey) || "{}") || {}; } catch (e) { kept = {}; }
    this.drafts = new Map(Object.entries(kept));
    this.confirming = false;  // `s` was pressed: the panel asks "Submit this turn?" (workspace.js)
    this.left = new Set();    // sentence id + step: a text step's field the annotator left with Esc (not focused again)
  }
  const draftKey = (sentence, step) => sentence.id + "\n" + step;
  AnnotationPanel.prototype.draft = function (sentence, step) { return this.drafts.get(draftKey(sentence, step)); };
  AnnotationPanel.prototype.setDraft = function (sentence, step, value) {
    this.drafts.set(draftKey(sentence, step), value);
    try { sessionStorage.setItem(this.draftsKey, JSON.stringify(Object.fromEntries(this.drafts))); } catch (e) { /* kept in the page only */ }
  };
  AnnotationPanel.prototype.leaveField = function (sentence, step, left) {
    if (left) { this.left.add(draftKey(sentence, step)); } else { this.left.delete(draftKey(sentence, step)); }
  };
  // What `key` does on the step asked next of `sentence` (step_kinds.js): a toggled pick is kept as the draft here.
  AnnotationPanel.prototype.kindKey = function (sentence, step, key, inField) {
    const outcome = kindOf(this.protocol, step).key(this.protocol.step(step), key, this.draft(sentence, step), inField);
    if (outcome && outcome.draft) { this.setDraft(sentence, step, outcome.draft); }
    return outcome;
  };
  // A section of the panel: the node drawn last time when its signature is the same (it stays in place, so the
  // browser neither rebuilds nor restyles it), else a new one. Signatures say everything the section shows.
  AnnotationPanel.prototype.section = function (signature, build, drawing) {
    const node = this.drawn.get(signature) || build();
    drawing.set(signature, node);
    return node;
  };
  AnnotationPanel.prototype.listId = function (list) {
    if (!this.listIds.has(list)) { this.listIds.set(list, (this.lastListId = (this.lastListId || 0) + 1)); }
    return this.listIds.get(list);
  };
  // The element's children become `parts`, moving only what changed.
  function reconcile(element, parts) {
    let child = element.firstChild;
    parts.forEach((part) => {
      if (child === part) { child = child.nextSibling; return; }
      element.insertBefore(part, child);
    });
    while (child) { const next = child.nextSibling; element.removeChild(child); child = next; }
  }
  AnnotationPanel.h = h;
  // A short note under the bar that fades (a key refused while a dialog is open).
  AnnotationPanel.flash = function (text) {
    const element = document.getElementById("key-refused");
    if (!element) { return; }
    element.textContent = text;
    element.hidden = false;
    clearTimeout(AnnotationPanel.flash.timer);
    AnnotationPanel.flash.timer = setTimeout(() => { element.hidden = true; }, 2500);
  };

  // A step newly asked is scrolled into the panel's view down to the end of its answers (a scale's last point, a text
  // step's field and Confirm), never past the question's own top: at 1024×768 they were below the panel's fold and the
  // keys answered what the annotator could not see (issue 50 item 11). The page itself is not scrolled.
  AnnotationPanel.intoView = function (panel, question) {
    const answers = question.querySelector(".answers") || question;
    const top = panel.getBoundingClientRect().top + panel.clientTop;
    const below = answers.getBoundingClientRect().bottom + 8 - (top + panel.clientHeight);
    if (below > 0) { panel.scrollTop += Math.min(below, question.getBoundingClientRect().top - top); }
  };

  // Into the severity / error type panel: on its chosen severity, else its first one, else its first field.
  AnnotationPanel.focusExtras = (extras) => (extras.querySelector(".severity-picker button.chosen") ||
    extras.querySelector(".severity-picker button") || extras.querySelector("select, input") || extras).focus();

  // The reference's text with the evidence spans marked: the pieces to put in its element.
  AnnotationPanel.marked = function (text, evidence) {
    const spans = evidence.map((s) => [s.start, s.end]).filter(([a, b]) => a < b).sort((x, y) => x[0] - y[0]);
    const merged = [];
    spans.forEach(([start, end]) => {
      const last = merged[merged.length - 1];
      if (last && start <= last[1]) { last[1] = Math.max(last[1], end); } else { merged.push([start, end]); }
    });
    const pieces = [];
    let cursor = 0;
    merged.forEach(([start, end]) => {
      if (start > cursor) { pieces.push(text.slice(cursor, start)); }
      pieces.push(h("mark", { class: "evidence" }, text.slice(start, end)));
      cursor = end;
    });
    if (cursor < text.length || !pieces.length) { pieces.push(text.slice(cursor)); }
    return pieces;
  };

  // The pre-labeler's label after a sentence in the list (when the project shows pre-labels).
  AnnotationPanel.prototype.tagPrelabel = function (link, sentence) {
    if (!sentence.prelabel || link.querySelector(".prelabel-tag")) { return; }
    link.querySelector(".sentence-text").append(" ", h("span", { class: "prelabel-tag muted", title: "The pre-labeler's label" },
      "pre-label: " + sentence.prelabel.display));
  };

  // The sentence list: the chips of sentences whose label changed, the active link when the active sentence
  // changed, and the progress line (links: sentence id -> its link).
  AnnotationPanel.prototype.drawList = function (links, sentences, active) {
    const protocol = this.protocol;
    sentences.forEach((sentence) => {
      const state = protocol.labelOf(sentence.path) + "|" + Object.keys(sentence.path).length;
      if (sentence.chipState === state) { return; }
      const old = document.getElementById("chip-" + sentence.id);
      const fresh = this.chip(sentence, "chip-" + sentence.id);
      if (old && (old.className !== fresh.className || old.textContent !== fresh.textContent)) { old.replaceWith(fresh); }
      sentence.chipState = state;
    });
    if (this.listShown !== active) {
      this.listShown = active;
      links.forEach((link, id) => {
        const on = !!active && id === active.id;
        link.classList.toggle("active", on);
        if (on) { link.setAttribute("aria-current", "true"); link.scrollIntoView({ block: "nearest" }); } else { link.removeAttribute("aria-current"); }
      });
    }
    const done = sentences.filter((s) => protocol.labelOf(s.path)).length;
    const progress = document.getElementById("ws-progress");
    const text = done + " of " + sentences.length + " sentences labelled";
    if (progress && progress.textContent !== text) { progress.textContent = text; }
  };

  // The reference with the active sentence's evidence marked, redrawn only when the marks change (another sentence,
  // or its evidence: a new list each time it changes).
  AnnotationPanel.prototype.drawReference = function (element, text, active, finder) {
    if (!element || (this.referenceShown === active && this.evidenceShown === (active && active.evidence))) { return; }
    this.referenceShown = active;
    this.evidenceShown = active && active.evidence;
    element.replaceChildren(...AnnotationPanel.marked(text, active ? active.evidence : []));
    if (finder) { finder.redrawn(); }
  };

  AnnotationPanel.prototype.chip = function (sentence, id) {
    const protocol = this.protocol;
    const labelName = (value) => protocol.labelNames[value] || value;
    const label = protocol.labelOf(sentence.path);
    const started = Object.keys(sentence.path).length > 0;
    return h("span", { id, class: "chip chip-" + (label || (started ? "started" : "pending")) },
      label ? labelName(label) : (started ? "in progress" : "to do"));
  };


  // The question asked next: its wording, definition, the kind's answers (step_kinds.js) and the project's examples.
  AnnotationPanel.prototype.question = function (stepName, draft) {
    const protocol = this.protocol;
    const data = this.data;
    const step = protocol.step(stepName);
    const kind = kindOf(protocol, stepName);
    const examples = (data.examples || {})[stepName] || { positive: [], negative: [] };
    const exampleList = (title, list) => list.length ? h("div", null, h("h4", null, "Examples: " + title.toLowerCase()),
      h("ul", null, list.map((e) => h("li", null, h("q", null, e.text), e.explanation ? [" ", h("span", { class: "muted" }, e.explanation)] : null)))) : null;
    const hint = kind.hint(step, draft);
    return h("div", { class: "question", role: "group", "aria-labelledby": "question-text", "data-kind": protocol.kindOf(stepName), tabindex: "-1" },
      h("h3", { id: "question-text" }, step.question),
      h("p", { class: "definition" }, step.definition),
      hint ? h("p", { class: "kind-hint muted" }, hint) : null,
      h("div", { class: "answers" }, kind.answers(step, stepName, draft)),
      (examples.positive.length || examples.negative.length) && step.answers && step.answers.length > 1 ? h("div", { class: "examples" },
        exampleList(step.answers[0].label, examples.positive), exampleList(step.answers[1].label, examples.negative)) : null);
  };


  // view: sentences, active, closed, independent, message, stopped, notice (what a conflict cost), hasNext, hasOpenChange(sentenceId),
  // refused ({sentence, error}: a change the server refused, or null)
  AnnotationPanel.prototype.draw = function (element, view) {
    const protocol = this.protocol;
    const data = this.data;
    const labelName = (value) => protocol.labelNames[value] || value;
    const { sentences, active, closed, independent, message, stopped, notice } = view;
    const another = element.dataset.sentence !== String(active ? active.id : "");
    element.dataset.sentence = active ? active.id : "";
    element.dataset.closed = closed ? "true" : "false";
    const extras = document.getElementById("claims-extras");
    const keepExtras = extras && active && extras.dataset.sentence === String(active.id) && !view.hasOpenChange(active.id) ? extras : null;
    const parts = [];
    const drawing = new Map();
    const section = (signature, build) => this.section(signature, build, drawing);
    if (stopped) {
      parts.push(h("div", { class: "panel-message error", role: "alert", id: "save-stopped" }, stopped.text + " ",
        h("button", { type: "button", id: "reload-saved", class: "small" }, "Reload and show what is saved")));
    }
    if (notice) { parts.push(h("div", { class: "panel-message error", role: "alert", id: "save-conflict" }, notice)); }
    if (view.refused && view.refused.sentence) {
      // A change the server refused (annotation_outbox.js): changing the sentence again sends it with the fix.
      const sentence = view.refused.sentence;
      parts.push(sentence === active
        ? h("div", { class: "panel-message error", role: "alert", id: "save-refused" },
          "This sentence's last change was not saved: " + view.refused.error + " Change it (for instance its note) to " +
          "send it again, or ", h("button", { type: "button", id: "drop-refused", class: "small", "data-sentence": sentence.id },
            "Drop this change"), ".")
        : h("div", { class: "panel-message error", role: "alert", id: "save-refused" },
          "A change of sentence " + sentence.number + " was not saved: " + view.refused.error + " ",
          h("button", { type: "button", id: "refused-go", class: "small", "data-sentence": sentence.id },
            "Go to sentence " + sentence.number)));
    }
    if (message) { parts.push(h("p", { class: "panel-message" + (message.error ? " error" : ""), role: "alert" }, message.text)); }
    if (this.confirming && !closed) { parts.push(section("confirm-submit", () => this.confirmation())); }
    if (!active) { parts.push(h("p", null, "This turn has no sentences.")); element.replaceChildren(...parts); return; }
    const label = protocol.labelOf(active.path);
    const number = active.number;
    const id = active.id;
    parts.push(section("head " + id + " " + sentences.length + " " + this.chip(active).className, () =>
      h("div", { class: "panel-head" }, h("h2", { id: "panel-title" }, "Sentence " + number + " of " + sentences.length),
        h("span", { class: "panel-chip" }, this.chip(active)))));
    const textAttributes = this.data.text_attributes || {};  // lang and dir of the dialogue's texts (page.py)
    parts.push(section("text " + id, () => h("blockquote", { class: "active-sentence", ...textAttributes }, active.text)));
    if (active.prelabel) {
      parts.push(section("prelabel " + id, () => h("p", { class: "prelabel" }, "Pre-labeler's label: ", h("strong", null, active.prelabel.display))));
    }
    const answered = protocol.walk(active.path).answered;
    if (closed) {
      parts.push(h("p", { class: "muted" }, "This assignment can no longer be changed."));
      if (answered.length) { parts.push(h("p", null, "Decision path: ", answered.map((s, i) => [i ? " · " : "", s + " → ", h("strong", null, shownValue(protocol, s, active.path[s]))]))); }
    } else {
      const started = Object.keys(active.path).length > 0;
      if (independent) { // the label picked (its shape, when kind steps on its walk are still to answer)
        const picked = label || (protocol.labels().find((l) => started && Object.entries(l.path).every(([s, v]) => active.path[s] === v)) || {}).value;
        parts.push(h("fieldset", { class: "label-picker" }, h("legend", null, "Pick the label of this sentence"),
          protocol.labels().map((option) => h("button", {
            type: "button", class: "pick chip-border-" + option.value + (picked === option.value ? " chosen" : ""),
            "data-pick": option.value, "data-key": option.key, "aria-keyshortcuts": option.key, "aria-pressed": picked === option.value ? "true" : "false",
          }, kbd(option.key), " ", h("strong", null, option.label), " ", h("span", { class: "muted" }, option.definition)))));
      }
      const shown = independent ? answered.filter((s) => protocol.kindOf(s) !== "choice") : answered;
      if (shown.length) {
        parts.push(h("ol", { class: "walk", "aria-label": "Answers so far" }, shown.map((stepName) => {
          const step = protocol.step(stepName);
          if (protocol.kindOf(stepName) !== "choice") { // changed by taking it back (u): it has no answers to click
            return h("li", { class: "walk-step", "data-kind": protocol.kindOf(stepName) }, h("span", { class: "walk-question" }, step.question),
              " ", h("strong", { class: "walk-value" }, shownValue(protocol, stepName, active.path[stepName])));
          }
          return h("li", { class: "walk-step" }, h("span", { class: "walk-question" }, step.question),
            step.answers.map((a) => h("button", {
              type: "button", class: "small" + (active.path[stepName] === a.value ? " chosen" : ""), "data-step": stepName, "data-value": a.value,
              "aria-pressed": active.path[stepName] === a.value ? "true" : "false",
              "aria-label": step.question + " " + a.label + (active.path[stepName] === a.value ? "" : " (change the answer; later answers are cleared)"),
            }, a.label)));
        })));
      }
      const next = !independent || started ? protocol.nextStep(active.path) : null; // independent: a kind step after the pick
      // A text step's words are not in the signature: the field keeps them while they are typed.
      const draft = next && this.draft(active, next);
      const kind = next && protocol.kindOf(next);
      const drafted = kind === "choice" ? "" : " " + id + (kind === "multiple" ? " " + JSON.stringify(draft || []) : "");
      if (next) { parts.push(section("question " + next + drafted, () => this.question(next, draft))); } else if (!independent) {
        parts.push(h("p", { class: "done-line" }, "Labelled ", h("strong", null, labelName(label)), ". ",
          view.hasNext ? ["Press ", kbd("j"), " for the next sentence"] : "This is the last sentence", "; ", kbd("u"), " takes the last answer back."));
      }
    }
    if (keepExtras) { parts.push(keepExtras); } else { parts.push(h("div", { id: "extras-slot" })); }
    if (!closed) {
      if (answered.length) {
        parts.push(section("undo", () => h("div", { class: "undo" }, h("button", { type: "button", class: "small", id: "undo-button", "aria-keyshortcuts": "u" }, kbd("u"), " Undo the last answer"))));
      }
      const needsEvidence = data.require_evidence && label && protocol.evidenceRequired(active.path) && !active.evidence.length;
      const required = data.require_evidence && protocol.evidenceRequired(active.path);
      parts.push(section("evidence " + id + " " + required + " " + needsEvidence + " " + this.listId(active.evidence), () => h("section", { class: "evidence", "aria-labelledby": "evidence-heading" },
        h("h3", { id: "evidence-heading" }, "Evidence in the reference",
          data.require_evidence && protocol.evidenceRequired(active.path) ? [" ", h("span", { class: "required" }, "(required for this answer)")] : null),
        needsEvidence ? h("p", { class: "error", role: "status" }, "This project requires evidence for this answer: select the supporting text in the reference and press ", kbd("e"), ".") : null,
        active.evidence.length ? h("ul", { class: "evidence-list" }, active.evidence.map((span, index) => h("li", null,
          h("q", this.data.text_attributes || null, span.text.length > 160 ? span.text.slice(0, 159) + "…" : span.text), " ", h("span", { class: "muted" }, "(" + span.start + "–" + span.end + ")"), " ",
          h("button", { type: "button", class: "small", "data-remove-evidence": index, "aria-label": "Remove evidence: " + span.text.slice(0, 60) }, "Remove")))) : null,
        h("button", { type: "button", class: "small", id: "attach-evidence", "aria-keyshortcuts": "e" }, kbd("e"), " Attach the text selected in the reference"))));
      parts.push(section("note " + id + " " + JSON.stringify(active.note || ""), () => {
        const note = h("textarea", { id: "note-input", name: "note", rows: "2", maxlength: "5000" });
        note.value = active.note || "";
        return h("div", { class: "note" }, h("label", { for: "note-input" }, "Note on this sentence ",
          h("span", { class: "muted" }, "(", kbd("c"), " to write, ", kbd("Ctrl"), "+", kbd("Enter"), " to save, ", kbd("Esc"), " to leave)")),
          note, h("button", { type: "button", class: "small", id: "save-note" }, "Save note"));
      }));
    }
    const focusWasInPanel = element.contains(document.activeElement) || document.activeElement === document.body;
    reconcile(element, parts);
    if (another) { element.scrollTop = 0; } // each sentence opens at its head, not where the last one was scrolled
    this.drawn = drawing;
    const asked = element.querySelector(".question");
    if (asked && asked !== this.askedShown) { AnnotationPanel.intoView(element, asked); }
    this.askedShown = asked;
    const note = document.getElementById("note-input");
    // What is written and not saved is not kept over a redraw (Esc leaves the note as saved).
    if (note && note !== document.activeElement && note.value !== (active.note || "")) { note.value = active.note || ""; }
    const confirm = this.confirming && document.getElementById("submit-confirm");
    if (confirm) { if (document.activeElement !== confirm) { confirm.focus(); } return; } // scrolled into view
    const field = element.querySelector(".question [data-step-text]");
    const typing = inField(document.activeElement) && element.contains(document.activeElement); // the note: left there
    if (typing && document.activeElement !== field) { return; }
    if (field && !this.left.has(draftKey(active, field.dataset.stepText)) && !closed && !stopped) {
      // A text step asked: typing goes into its field (Esc leaves it, Enter goes back in).
      if (document.activeElement !== field) { field.focus({ preventScroll: true }); }
    } else if (focusWasInPanel) {
      // The question, or the panel: never an answer button, which a Space typed on would press (issue 46). The keys
      // answer wherever the focus is in the page.
      if (!element.hasAttribute("tabindex")) { element.setAttribute("tabindex", "-1"); }
      const resting = element.querySelector(".question") || element;
      if (document.activeElement !== resting) { resting.focus({ preventScroll: true }); }
    }
  };

  // What `s` opens (issue 46 item 1): a single stray `s` never submits. Enter (or this Submit button) submits, Esc or
  // any other key closes it without submitting (static/js/workspace.js); the bar's Submit button needs no confirming.
  // Closed by a key's `command`: what the panel says then (Enter submits, Esc stays; any other key is not applied).
  AnnotationPanel.prototype.closeConfirmation = function (command) {
    this.confirming = false;
    return command === "confirm" || command === "leave" ? null : { text: "Not submitted (the key was not applied): s then Enter submits the turn.", error: false };
  };
  AnnotationPanel.prototype.confirmation = function () {
    return h("div", { class: "submit-confirm", role: "group", "aria-labelledby": "submit-confirm-text" },
      h("p", { id: "submit-confirm-text" }, h("strong", null, "Submit this turn? "), kbd("Enter"), " submits · ", kbd("Esc"), " stays"),
      h("button", { type: "button", class: "primary", id: "submit-confirm", "aria-keyshortcuts": "Enter" }, kbd("Enter"), " Submit"), " ",
      h("button", { type: "button", id: "submit-stay", "aria-keyshortcuts": "Escape" }, kbd("Esc"), " Stay"));
  };

  // The severity / error type panel of a saved sentence, from the server (static/js/claims.js drives it), put in the
  // panel while `current()` holds. Resolves to the panel (null: the sentence has none), undefined when not put in.
  AnnotationPanel.prototype.loadExtras = function (url, sentence, current) {
    return fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then((response) => (response.ok ? response.text() : ""))
      .then((html) => {
        const slot = document.getElementById("claims-extras") || document.getElementById("extras-slot");
        if (!current() || !slot) { return undefined; }
        const found = new DOMParser().parseFromString(html, "text/html").getElementById("claims-extras");
        if (found) { found.dataset.sentence = String(sentence.id); slot.replaceWith(document.adoptNode(found)); return found; }
        slot.replaceWith(h("div", { id: "extras-slot" }));
        return null;
      }).catch(() => undefined);
  };

