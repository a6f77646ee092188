// The annotation screen's "ask a question" dialog (button or key q). The question is about the
// active sentence; the server attaches the annotator's saved decision path on it, once the page has saved it. The answer
// shows up in the "Your questions on this turn" pane, which htmx polls.
import { line } from "./annotation_saving.js";
import { addLayer, ORDER } from "./keymap.js";

function start() {
  const root = document.getElementById("workspace");
  const dialog = document.getElementById("ask-dialog");
  if (!root || !dialog) { return; }

  function activeSentence() {
    const panel = document.getElementById("decision-panel");
    const id = panel ? panel.dataset.sentence : "";
    const link = id ? document.querySelector('a.sentence[data-sentence="' + id + '"]') : null;
    return { id, text: link ? link.querySelector(".sentence-text").textContent : "",
             number: link ? link.querySelector(".sentence-number").textContent : "" };
  }

  function open() {
    const form = document.getElementById("ask-form");
    const sentence = activeSentence();
    form.querySelector("[data-ask-sentence]").value = sentence.id;
    const saving = line.current;
    form.querySelector("[data-ask-path]").value = saving && sentence.id ? JSON.stringify(saving.pathOf(sentence.id)) : "";
    const about = form.querySelector("[data-ask-about]");
    about.textContent = sentence.id ? "About sentence " + sentence.number + ": “" + sentence.text + "”" : "About the whole turn.";
    dialog.showModal();
    form.querySelector("textarea").focus();
  }

  document.getElementById("ask-button").addEventListener("click", open);

  addLayer(ORDER.ask, (event, command) => {
    if (command !== "ask") { return false; }
    const target = event.target;
    if (target.closest && target.closest("textarea, input, select, [contenteditable]")) { return false; }
    if (document.querySelector("dialog[open]")) { return false; }
    open();
    return true;
  });

  // Enter (or Ctrl+Enter) sends the question, Shift+Enter starts a new line, as in the note box.
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.altKey || !event.target.matches("#ask-body")) { return; }
    event.preventDefault();
    const form = document.getElementById("ask-form");
    if (form.querySelector("textarea").value.trim()) { form.requestSubmit(); }
  });

  dialog.addEventListener("click", (event) => {
    if (event.target.closest("[data-ask-cancel]")) { dialog.close(); }
  });

  // The question carries the answers on screen: the server reads the saved ones, so the page's unsent answers go
  // first (the annotation page saves in the background, static/js/annotation_outbox.js).
  document.body.addEventListener("htmx:confirm", (event) => {
    const saving = line.current;
    if (!saving || !event.detail.elt || event.detail.elt.id !== "ask-form") { return; }
    event.preventDefault();
    saving.drain().finally(() => event.detail.issueRequest(true)); // true: without asking again
  });

  // A question sent: the pane of questions was swapped in; empty the form and close the dialog.
  document.body.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    if (!form || form.id !== "ask-form" || !event.detail.successful) { return; }
    if (event.detail.xhr.getResponseHeader("HX-Retarget")) { return; } // refused: the form shows why
    form.querySelector("textarea").value = "";
    dialog.close();
  });
}
start();
