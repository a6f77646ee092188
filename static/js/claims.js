// The claims panels of the annotation screen: triplet labels (RefChecker), severity and error type
// (HalluDetect, Face4RAG). Keyboard-only like the rest of the screen.
//
// Forms marked data-claims are sent in the background, each with a request id (a retry after a network
// error is applied once) and the assignment version the page holds. They take turns with the annotation
// page's own saving (annotation_saving.js, filled by workspace.js): one request on the wire at
// a time for the whole page, so the two never refuse each other as "changed in another tab". Triplet
// changes answer with the triplet panel, sentence changes with the decision panel, of which only the
// severity / error type section is taken; both carry the new version (X-Assignment-Version), which the
// page's saving continues from.
//
// Keys come through the page's keymap (keymap.js), asked before the decision panel, and are used only while
// the focus is in a claims panel (or for t, which enters the triplets; v, which enters the severity panel, is the
// decision panel's: it also opens the panel of a sentence not yet saved).
import { line } from "./annotation_saving.js";
import { addLayer, ORDER } from "./keymap.js";

function start() {
  const root = document.getElementById("workspace");
  if (!root) { return; }

  const csrf = (() => {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; }
  })();
  const decisionPanel = () => document.getElementById("decision-panel");
  const tripletPanel = () => document.getElementById("triplet-panel");
  const banner = () => document.getElementById("connection-status");
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  let queue = Promise.resolve();

  function showBanner(text) { const el = banner(); if (el) { el.textContent = text; el.hidden = false; } }
  function hideBanner() { const el = banner(); if (el) { el.hidden = true; } }
  function newRequestId() {
    if (window.crypto && crypto.randomUUID) { return crypto.randomUUID(); }
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  }
  const saving = () => line.current;
  function currentVersion() {
    if (saving()) { return String(saving().version()); }
    const panel = decisionPanel() || tripletPanel();
    return panel ? panel.dataset.version : "";
  }
  function setVersion(version, saved) {
    if (!version) { return; }
    if (saving()) { saving().setVersion(version, saved); return; }
    [decisionPanel(), tripletPanel()].forEach((el) => { if (el) { el.dataset.version = version; } });
    document.querySelectorAll('#workspace input[name="version"]').forEach((input) => { input.value = version; });
  }

  // After a swap, put the focus back where the annotator works.
  let focusAfter = null;
  function restoreFocus() {
    const wanted = focusAfter;
    focusAfter = null;
    if (!wanted) { return; }
    const element = typeof wanted === "function" ? wanted() : document.querySelector(wanted);
    if (element) { element.focus(); }
  }

  // Triplet labels given but not yet answered by the server: shown on the rows at once and drawn again on every
  // panel the server sends meanwhile (an answer carries the panel as of its own request, not of those still queued).
  const pendingLabels = new Map(); // triplet id -> {label}
  function markRow(row, label) {
    row.dataset.label = label;
    row.classList.add("labelled");
    row.querySelectorAll("button[data-key]").forEach((button) => {
      const on = button.value === label;
      button.classList.toggle("chosen", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    });
  }
  function markPending() {
    pendingLabels.forEach((mark, id) => {
      const row = document.querySelector('#triplet-panel .triplet-row[data-triplet="' + id + '"]');
      if (row) { markRow(row, mark.label); }
    });
  }

  function post(form, fields) {
    const requestId = newRequestId();
    const url = new URL(form.action, window.location.href).toString();
    const isTriplet = !!form.closest("#triplet-panel");
    // The sentence whose severity / error type this is: its answer is not drawn over another sentence's panel.
    const extras = form.closest("#claims-extras");
    const extrasSentence = extras ? extras.dataset.sentence || "" : null;
    const mark = isTriplet && fields.get("label") ? { label: fields.get("label") } : null;
    if (mark) { pendingLabels.set(fields.get("triplet"), mark); }
    const run = async () => {
      const body = new URLSearchParams();
      for (const [name, value] of fields) { if (name !== "csrfmiddlewaretoken") { body.append(name, value); } }
      body.set("version", currentVersion());
      body.set("request_id", requestId);
      for (let attempt = 0; ; attempt++) {
        let response;
        try {
          response = await fetch(url, {
            method: "POST", body, credentials: "same-origin", headers: { "X-CSRFToken": csrf, "HX-Request": "true" },
          });
        } catch (error) {
          showBanner("Connection lost: your last action is not saved yet. Retrying…");
          await sleep(Math.min(500 * 2 ** attempt, 8000));
          continue;
        }
        if (response.status >= 500 || response.status === 429) {
          showBanner("The server had a problem (" + response.status + "). Retrying your last action…");
          await sleep(Math.min(1000 * 2 ** attempt, 15000));
          continue;
        }
        hideBanner();
        if (response.status === 403 || response.status === 404) {
          showBanner("That action was refused (" + response.status + "). Reload the page.");
          return;
        }
        const html = await response.text();
        if (isTriplet) {
          if (mark && pendingLabels.get(fields.get("triplet")) === mark) { pendingLabels.delete(fields.get("triplet")); }
          // The focus stays on the row the annotator is on now (keys went on while this request was out).
          const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest(".triplet-row");
          const focusedId = focused ? focused.dataset.triplet : null;
          htmx.swap(tripletPanel(), html, { swapStyle: "outerHTML", swapDelay: 0, settleDelay: 0 });
          markPending();
          if (!focusAfter && focusedId) {
            focusAfter = () => document.querySelector('#triplet-panel .triplet-row[data-triplet="' + focusedId + '"]');
          }
        } else if (saving()) {
          // Where the annotator is now, keys having gone on while this request was out: on a control of the panel
          // (x chose the error type) the focus stays on it; outside the panel (Escape, another sentence) it is left
          // there. Only a focus lost with the replaced panel goes where this request's key meant it to.
          const active = document.activeElement;
          const inPanel = active && active.closest && active.closest("#claims-extras");
          const stay = inPanel && active.id && active.id !== "claims-extras" ? "#" + active.id : null;
          const left = active && active !== document.body && !inPanel;
          swapExtras(html, extrasSentence);
          if (left) { focusAfter = null; } else if (stay) { focusAfter = stay; }
        } else {
          htmx.swap(decisionPanel(), html, { swapStyle: "outerHTML", swapDelay: 0, settleDelay: 0 });
        }
        setVersion(response.headers.get("X-Assignment-Version"), response.ok);
        restoreFocus();
        return;
      }
    };
    const report = (error) => { showBanner("Something went wrong: " + error + ". Reload the page; saved answers are kept."); };
    if (saving()) { return saving().exclusive(run).catch(report); }
    queue = queue.then(run, run).catch(report);
    return queue;
  }

  // The decision panel is drawn by the page (workspace.js): take only the severity / error type section
  // of the server's answer, with its message if the change was refused.
  function swapExtras(html, sentence) {
    const parsed = new DOMParser().parseFromString(html, "text/html");
    const fresh = parsed.getElementById("claims-extras");
    const current = document.getElementById("claims-extras");
    // Moved on to another sentence meanwhile: its own panel stays (this answer's change is saved all the same).
    if (!fresh || !current || (sentence !== null && (current.dataset.sentence || "") !== sentence)) { return; }
    fresh.dataset.sentence = current.dataset.sentence || "";
    const refusal = parsed.querySelector(".panel-message.error");
    if (refusal) { fresh.prepend(document.adoptNode(refusal)); }
    current.replaceWith(document.adoptNode(fresh));
  }

  root.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches("form[data-claims]")) { return; }
    event.preventDefault();
    const fields = new FormData(form, event.submitter || undefined);
    if (form.classList.contains("severity-form") && !(event.submitter && event.submitter.dataset.severity)) {
      // Saving the justification alone keeps the severity already given.
      fields.set("severity", form.querySelector("#justification-input").dataset.severityValue || "");
    }
    post(form, fields);
  });

  // The error type is saved as soon as it is chosen.
  root.addEventListener("change", (event) => {
    if (event.target.id === "error-type-select") {
      focusAfter = "#error-type-select";
      event.target.form.requestSubmit();
    }
  });

  // ---- keyboard ------------------------------------------------------------------------------------

  const rows = () => Array.from(document.querySelectorAll("#triplet-panel .triplet-row"));

  function enterTriplets() {
    const all = rows();
    const target = all.find((row) => !row.dataset.label) || all[0];
    if (target) { target.focus(); target.scrollIntoView({ block: "nearest" }); return true; }
    const add = document.querySelector("#triplet-panel details.triplet-add");
    if (add) { add.open = true; document.getElementById("triplet-head").focus(); return true; }
    return false;
  }

  function moveRow(row, delta) {
    const all = rows();
    const next = all[all.indexOf(row) + delta];
    if (next) { next.focus(); next.scrollIntoView({ block: "nearest" }); }
  }

  function labelRow(row, key) {
    const button = row.querySelector('button[data-key="' + key + '"], button[data-digit="' + key + '"]');
    if (!button) { return false; }
    // The label shows and the focus moves to the next triplet without a label (or the next one) at once, before
    // the server answers: the next key applies to the row the annotator sees focused.
    button.form.requestSubmit(button);
    markRow(row, button.value);
    const all = rows();
    const after = all.slice(all.indexOf(row) + 1).concat(all.slice(0, all.indexOf(row)));
    const next = after.find((r) => !r.dataset.label) || all[all.indexOf(row) + 1] || row;
    if (next !== row) { next.focus(); next.scrollIntoView({ block: "nearest" }); }
    return true;
  }

  function leave() {
    const active = document.activeElement;
    if (active && active.blur) { active.blur(); }
    const link = document.querySelector("a.sentence.active");
    if (link) { link.focus(); }
  }

  // Asked first (keymap.js): keys inside the claims panels are theirs, whatever the decision panel would do.
  addLayer(ORDER.claims, (event) => {
    const target = event.target;
    const key = event.key;
    const inTriplets = target.closest && target.closest("#triplet-panel");
    const inExtras = target.closest && target.closest("#claims-extras");
    const typing = target.closest && target.closest("textarea, input, select, [contenteditable]");
    const help = document.getElementById("help");
    if (help && help.open) { return false; }
    let handled = true;

    if (typing) {
      if (!inTriplets && !inExtras) { return false; }
      if (key === "Escape") { leave(); }
      else if (key === "Enter" && target.id === "justification-input") {
        // Saved: back to the panel, where 1-5, r and x work again. The focus leaves the text at once, before the
        // server answers: a key pressed meanwhile applies to the panel the annotator sees, not to the text, whose
        // input the answer then replaces (the key was lost). Never onto an unchosen severity: Enter would rate it.
        const backToPanel = () => document.querySelector("#claims-extras .severity-picker button.chosen") ||
          document.getElementById("claims-extras");
        focusAfter = backToPanel;
        target.form.requestSubmit();
        const panel = backToPanel();
        if (panel) { panel.focus(); }
      } else if (key === "Enter" && target.closest(".triplet-add-form") && target.tagName !== "BUTTON") {
        focusAfter = () => document.getElementById("triplet-head") || tripletPanel();
        target.closest("form").requestSubmit();
      } else { handled = false; }
    } else if (inTriplets) {
      const row = target.closest(".triplet-row");
      if (key === "Escape") { leave(); }
      else if (key === "a") {
        const add = tripletPanel().querySelector("details.triplet-add");
        if (add) { add.open = true; document.getElementById("triplet-head").focus(); }
      }
      else if (row && (key === "j" || key === "ArrowDown")) { moveRow(row, +1); }
      else if (row && (key === "k" || key === "ArrowUp")) { moveRow(row, -1); }
      else if (row && tripletPanel().dataset.closed !== "true" && /^[encb1-4]$/.test(key)) { handled = labelRow(row, key); }
      else if (key === "?" || key === "s") { handled = false; } // help and submit stay global
      else { handled = key.length === 1; } // other letters would act on the sentence panel: swallow them here
    } else if (inExtras) {
      const form = document.querySelector("#claims-extras .severity-form");
      if (key === "Escape") { leave(); }
      else if (form && /^[0-5]$/.test(key)) {
        const button = form.querySelector('button[data-severity="' + key + '"]');
        focusAfter = () => document.querySelector('#claims-extras .severity-picker button[data-severity="' + key + '"]') ||
          document.getElementById("claims-extras");
        if (button) { form.requestSubmit(button); }
      }
      else if (key === "r") { const input = document.getElementById("justification-input"); if (input) { input.focus(); } }
      else if (key === "x") { const select = document.getElementById("error-type-select"); if (select) { select.focus(); } }
      else if (key === "?" || key === "s" || key === "j" || key === "k") { handled = false; }
      else { handled = key.length === 1; }
    } else if (key === "t") { handled = enterTriplets(); }
    else { handled = false; }
    return handled;
  });
}
start();
