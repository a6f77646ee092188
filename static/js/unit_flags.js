// The annotation screen's "flag this unit" dialog (key f): the annotator reports that the active unit is two
// sentences, not a sentence, or something else, with a note. Keys 1-3 pick the kind and move to the note, Enter
// sends, Esc cancels; the key that opened the dialog and the kind keys are never typed into the note. The flag is
// saved at once and the unit gets a "flagged" mark in the list; flagging it again edits the open flag.
// The key that opens it is the keymap's (keymap.js); the keys inside the dialog are the dialog's own.
import { addLayer, ORDER } from "./keymap.js";
function start() {
  const root = document.getElementById("workspace");
  const dialog = document.getElementById("flag-dialog");
  const dataElement = document.getElementById("unit-flags-data");
  if (!root || !dialog || !dataElement) { return; }
  // unit id -> {kind, kind_display, note, status, status_display, resolution}: the annotator's own flags, the open
  // one of each unit or else the latest one a lead closed (its outcome is shown when the dialog opens).
  const flags = JSON.parse(dataElement.textContent);
  const isOpen = (flag) => !!flag && flag.status === "open";
  const form = document.getElementById("flag-form");
  const note = document.getElementById("flag-note");
  const error = document.getElementById("flag-error");
  const kinds = () => [...form.querySelectorAll('input[name="kind"]')];

  function mark(id) {
    const link = document.querySelector('a.sentence[data-sentence="' + id + '"]');
    if (!link) { return; }
    let badge = link.querySelector(".flag-mark");
    const flag = flags[id];
    if (!isOpen(flag)) { if (badge) { badge.remove(); } return; }
    if (!badge) {
      badge = document.createElement("span");
      badge.className = "flag-mark";
      link.querySelector(".sentence-text").after(badge);
    }
    badge.textContent = "flagged";
    badge.title = "You flagged this unit: " + flag.kind_display + (flag.note ? " — " + flag.note : "");
  }

  function activeUnit() {
    const panel = document.getElementById("decision-panel");
    const id = panel ? panel.dataset.sentence : "";
    const link = id ? document.querySelector('a.sentence[data-sentence="' + id + '"]') : null;
    return link ? { id, text: link.querySelector(".sentence-text").textContent,
                    number: link.querySelector(".sentence-number").textContent } : null;
  }

  function open() {
    const unit = activeUnit();
    if (!unit) { return; }
    const known = flags[unit.id];
    const flag = isOpen(known) ? known : null;
    form.querySelector("[data-flag-sentence]").value = unit.id;
    form.querySelector("[data-flag-about]").textContent = (flag ? "Your flag on unit " : "Unit ") + unit.number + ": “" + unit.text + "”";
    const outcome = form.querySelector("[data-flag-outcome]");
    outcome.hidden = !known || !!flag;
    outcome.textContent = known && !flag ? "Your earlier flag here (" + known.kind_display.toLowerCase() + "): " +
      known.status_display.toLowerCase() + (known.resolution ? " — “" + known.resolution + "”" : "") + "." : "";
    kinds().forEach((input) => { input.checked = !!flag && input.value === flag.kind; });
    note.value = flag ? flag.note : "";
    error.hidden = true;
    dialog.showModal();
    // Focus on the kinds, never in the note: the next key picks a kind (1-3) rather than being typed.
    (kinds().find((input) => input.checked) || kinds()[0]).focus();
  }

  function pick(input) {
    input.checked = true;
    note.focus();
  }

  async function send() {
    if (!kinds().some((input) => input.checked)) { showError("Choose what is wrong with the unit (1, 2 or 3)."); return; }
    const body = new FormData(form);
    try {
      const response = await fetch(form.action, { method: "POST", body, credentials: "same-origin",
        headers: { "X-CSRFToken": body.get("csrfmiddlewaretoken"), Accept: "application/json" } });
      if (response.ok) {
        const saved = await response.json();
        flags[saved.sentence] = saved;
        mark(saved.sentence);
        dialog.close();
        return;
      }
      showError(response.status === 404 ? "This unit was changed by a lead: reload the page to see the new units."
        : (await response.text()) || "The flag could not be saved (" + response.status + ").");
    } catch (e) {
      showError("Sending a flag needs the connection; try again when you are back online.");
    }
  }

  function showError(text) {
    error.textContent = text;
    error.hidden = false;
  }

  dialog.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    const inNote = event.target === note;
    if (!inNote && /^[1-9]$/.test(event.key)) {
      event.preventDefault(); // also keeps the annotation screen from reading the key
      const input = kinds().find((k) => k.dataset.flagKey === event.key);
      if (input) { pick(input); }
    } else if (event.key === "Enter" && !event.shiftKey && (inNote || event.target.matches('input[name="kind"]'))) {
      event.preventDefault();
      send();
    } else if (!inNote && event.key.length === 1 && event.key !== " ") {
      event.preventDefault(); // a letter in the dialog is no shortcut of the screen behind it
    }
  });
  kinds().forEach((input) => input.addEventListener("click", (event) => { if (event.detail) { pick(input); } }));
  form.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  dialog.addEventListener("click", (event) => { if (event.target.closest("[data-flag-cancel]")) { dialog.close(); } });

  addLayer(ORDER.flag, (event, command) => {
    if (command !== "flag") { return false; }
    const target = event.target;
    if (target.closest && target.closest("textarea, input, select, [contenteditable]")) { return false; }
    if (document.querySelector("dialog[open]")) { return false; }
    open();
    return true;
  });
  document.getElementById("flag-button")?.addEventListener("click", open);
  Object.keys(flags).forEach(mark);
}
start();
