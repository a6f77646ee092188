// The annotation screen: keyboard shortcuts, autosave queue, evidence selection, time per sentence.
//
// Every form marked data-ws is sent in the background instead of reloading the page. Requests go
// out one at a time, in order, each carrying the assignment version the page last saw and a
// request id; a request that fails on the network is retried with the same id, so the server
// applies it once. The server answers with the decision panel, and the sentence chip, progress
// count and reference highlights swapped out of band (htmx.swap).
(function () {
  "use strict";
  const root = document.getElementById("workspace");
  if (!root) { return; }

  const csrf = (() => {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; }
  })();
  const actUrl = (action) => root.dataset.actUrl.replace("ACTION", action);
  const panel = () => document.getElementById("decision-panel");
  const banner = () => document.getElementById("connection-status");
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  let queue = Promise.resolve();
  let since = performance.now();

  function showBanner(text) { const el = banner(); if (el) { el.textContent = text; el.hidden = false; } }
  function hideBanner() { const el = banner(); if (el) { el.hidden = true; } }
  function newRequestId() {
    if (window.crypto && crypto.randomUUID) { return crypto.randomUUID(); }
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  }
  function takeSeconds() {
    const now = performance.now();
    const seconds = (now - since) / 1000;
    since = now;
    return seconds.toFixed(2);
  }
  function enqueue(task) {
    const run = () => task().catch((error) => { showBanner("Something went wrong: " + error + ". Reload the page; saved answers are kept."); });
    queue = queue.then(run, run);
    return queue;
  }

  function swapPanel(html) {
    const old = panel();
    const focusWasInPanel = old.contains(document.activeElement) || document.activeElement === document.body;
    htmx.swap(old, html, { swapStyle: "outerHTML", swapDelay: 0, settleDelay: 0 });
    syncActive();
    // Keep keyboard focus where the work is: on the first answer of the new question.
    if (focusWasInPanel) {
      const next = panel().querySelector(".question .answer, .label-picker .pick.chosen, .label-picker .pick");
      if (next) { next.focus({ preventScroll: true }); }
    }
  }

  function syncActive() {
    const current = panel();
    const id = current ? current.dataset.sentence : "";
    document.querySelectorAll("a.sentence").forEach((link) => {
      const on = link.dataset.sentence === id;
      link.classList.toggle("active", on);
      if (on) { link.setAttribute("aria-current", "true"); link.scrollIntoView({ block: "nearest" }); }
      else { link.removeAttribute("aria-current"); }
    });
    if (id) { history.replaceState(null, "", "?sentence=" + id); }
  }

  // Send one change; retried with the same request id until the server has it.
  function post(action, fields) {
    const requestId = newRequestId();
    return enqueue(async () => {
      const current = panel();
      const body = new URLSearchParams();
      for (const [name, value] of fields) { body.append(name, value); }
      body.set("version", current.dataset.version);
      body.set("request_id", requestId);
      if (action !== "submit") {
        if (!body.get("sentence")) { body.set("sentence", current.dataset.sentence); }
        body.set("seconds", takeSeconds());
      }
      for (let attempt = 0; ; attempt++) {
        let response;
        try {
          response = await fetch(actUrl(action), {
            method: "POST", body, credentials: "same-origin",
            headers: { "X-CSRFToken": csrf, "HX-Request": "true" },
          });
        } catch (error) {
          showBanner("Connection lost: your last action is not saved yet. Retrying…");
          await sleep(Math.min(500 * 2 ** attempt, 8000));
          continue;
        }
        if (response.status >= 500 || response.status === 429) {
          showBanner(response.status === 503
            ? "The server cannot reach its database for a moment: your last action is not saved yet. Retrying…"
            : "The server had a problem (" + response.status + "). Retrying your last action…");
          await sleep(Math.min(1000 * 2 ** attempt, 15000));
          continue;
        }
        hideBanner();
        const redirect = response.headers.get("HX-Redirect");
        if (redirect) { window.location.assign(redirect); return; }
        if (response.status === 204) { return; }
        if (response.status === 403 || response.status === 404) {
          showBanner("That action was refused (" + response.status + "). Reload the page.");
          return;
        }
        swapPanel(await response.text());
        return;
      }
    });
  }

  function recordTime(sentenceId, seconds) {
    if (!sentenceId || panel().dataset.closed === "true" || Number(seconds) < 0.5) { return; }
    const body = new URLSearchParams({ sentence: sentenceId, seconds: seconds, csrfmiddlewaretoken: csrf });
    fetch(actUrl("time"), { method: "POST", body, credentials: "same-origin", keepalive: true }).catch(() => {});
  }

  function goTo(sentenceId) {
    const current = panel();
    if (!sentenceId || current.dataset.sentence === String(sentenceId)) { return; }
    const leaving = current.dataset.sentence;
    const seconds = takeSeconds();
    enqueue(async () => {
      recordTime(leaving, seconds);
      const response = await fetch(root.dataset.panelUrl + "?sentence=" + encodeURIComponent(sentenceId), {
        headers: { "HX-Request": "true" }, credentials: "same-origin",
      });
      if (response.ok) { swapPanel(await response.text()); hideBanner(); }
      else { showBanner("Could not open that sentence (" + response.status + ")."); }
    });
  }

  function move(delta) {
    const links = Array.from(document.querySelectorAll("a.sentence"));
    const index = links.findIndex((link) => link.dataset.sentence === panel().dataset.sentence);
    const next = links[index + delta];
    if (next) { goTo(next.dataset.sentence); }
  }

  // Character offsets of the current selection inside the reference (null if none there).
  function referenceSelection() {
    const reference = document.getElementById("reference-text");
    const selection = document.getSelection();
    if (!reference || !selection || selection.rangeCount === 0 || selection.isCollapsed) { return null; }
    const range = selection.getRangeAt(0);
    if (!reference.contains(range.startContainer) || !reference.contains(range.endContainer)) { return null; }
    const offset = (node, position) => {
      const prefix = document.createRange();
      prefix.selectNodeContents(reference);
      prefix.setEnd(node, position);
      return prefix.toString().length;
    };
    return { start: offset(range.startContainer, range.startOffset), end: offset(range.endContainer, range.endOffset) };
  }

  root.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches("form[data-ws]")) { return; }
    event.preventDefault();
    const fields = new FormData(form, event.submitter || undefined);
    fields.delete("csrfmiddlewaretoken");
    if (form.id === "evidence-form") {
      const span = referenceSelection();
      fields.set("start", span ? span.start : "");
      fields.set("end", span ? span.end : "");
    }
    const action = new URL(form.action, window.location.href).pathname.split("/").filter(Boolean).pop();
    post(action, fields);
  });

  // Keep the reference selection when the attach button is clicked with the mouse.
  root.addEventListener("mousedown", (event) => {
    if (event.target.closest("#attach-evidence")) { event.preventDefault(); }
  });

  root.addEventListener("click", (event) => {
    const link = event.target.closest("a.sentence");
    if (link) { event.preventDefault(); goTo(link.dataset.sentence); return; }
    if (event.target.closest("#help-button")) { document.getElementById("help").showModal(); }
  });

  function clickAnswer(selector) {
    const button = panel().querySelector(selector);
    if (!button) { return false; }
    button.form.requestSubmit(button);
    return true;
  }

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) { return; }
    const target = event.target;
    if (target.closest && target.closest("textarea, input, select, [contenteditable]")) {
      if (target.id === "note-input") {
        if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); target.form.requestSubmit(); target.blur(); }
        else if (event.key === "Escape") { event.preventDefault(); target.blur(); }
      }
      return;
    }
    const help = document.getElementById("help");
    if (help.open) {
      if (event.key === "?") { event.preventDefault(); help.close(); }
      return;
    }
    const inPane = target.closest && target.closest(".ws-reference, .ws-history");
    const key = event.key;
    let handled = true;
    if (key === "?") { help.showModal(); }
    else if (key === "j" || (!inPane && (key === "ArrowDown" || key === "ArrowRight"))) { move(+1); }
    else if (key === "k" || (!inPane && (key === "ArrowUp" || key === "ArrowLeft"))) { move(-1); }
    else if (key === "u") { if (panel().dataset.closed !== "true") { post("undo", []); } }
    else if (key === "e") { const form = document.getElementById("evidence-form"); if (form) { form.requestSubmit(); } }
    else if (key === "c") { const note = document.getElementById("note-input"); if (note) { note.focus(); } }
    else if (key === "s") { const form = document.getElementById("submit-form"); if (form) { form.requestSubmit(); } }
    else if (key === "y" || key === "n") { handled = clickAnswer('.question button[data-yn="' + key + '"]'); }
    else if (/^[1-7]$/.test(key)) {
      handled = clickAnswer('.question button[data-key="' + key + '"], .label-picker button[data-key="' + key + '"]');
    }
    else { handled = false; }
    if (handled) { event.preventDefault(); }
  });

  // Time on a sentence stops counting while the tab is hidden; what was counted is sent.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") {
      const current = panel();
      const seconds = takeSeconds();
      if (current && current.dataset.closed !== "true" && Number(seconds) >= 0.5) {
        const body = new URLSearchParams({ sentence: current.dataset.sentence, seconds, csrfmiddlewaretoken: csrf });
        navigator.sendBeacon(actUrl("time"), body);
      }
    } else {
      since = performance.now();
    }
  });

  syncActive();
})();
