// Adjudication screen keyboard: j/k move between disputes, 1/2 answer, u undo,
// a/b side with an annotator, r reason, Enter save (Shift+Enter: new line), Esc leave a field.
(function () {
  const container = document.getElementById("disputes");
  if (!container) { return; }
  let activeId = null;

  const disputes = () => Array.from(container.querySelectorAll("[data-dispute]"));
  const openDisputes = () => disputes().filter((el) => el.classList.contains("dispute-open"));
  const active = () => (activeId && document.getElementById(activeId)) || null;

  // Highlight the active dispute's evidence spans in the reference (offsets into its text).
  const reference = document.getElementById("reference-text");
  const referenceText = reference ? reference.textContent : "";
  function showEvidence(el) {
    if (!reference) { return; }
    const data = el && document.getElementById("evidence-" + el.dataset.dispute);
    const spans = data ? JSON.parse(data.textContent) : [];
    const legend = document.getElementById("evidence-legend");
    if (legend) { legend.hidden = spans.length === 0; }
    const cuts = new Set([0, referenceText.length]);
    spans.forEach(([start, end]) => { cuts.add(Math.max(0, Math.min(start, referenceText.length))); cuts.add(Math.max(0, Math.min(end, referenceText.length))); });
    const points = Array.from(cuts).sort((x, y) => x - y);
    const fragment = document.createDocumentFragment();
    let first = null;
    for (let i = 0; i < points.length - 1; i++) {
      const [from, to] = [points[i], points[i + 1]];
      const sides = spans.filter(([start, end]) => start <= from && end >= to).map((s) => s[2]);
      const text = document.createTextNode(referenceText.slice(from, to));
      if (sides.length) {
        const mark = document.createElement("mark");
        mark.className = Array.from(new Set(sides)).map((k) => "ev-" + k).join(" ");
        mark.title = "Evidence of annotator " + Array.from(new Set(sides)).join(" and ").toUpperCase();
        mark.appendChild(text);
        fragment.appendChild(mark);
        if (!first) { first = mark; }
      } else {
        fragment.appendChild(text);
      }
    }
    reference.replaceChildren(fragment);
    // Bring the first span into view inside the reference panel, without scrolling the page.
    const panel = reference.closest(".adj-reference");
    if (first && panel && panel.scrollHeight > panel.clientHeight) { panel.scrollTop = Math.max(0, first.offsetTop - 40); }
  }

  function activate(el, focus) {
    disputes().forEach((d) => d.classList.remove("active"));
    document.querySelectorAll(".sentence.current").forEach((s) => s.classList.remove("current"));
    if (!el) { activeId = null; return; }
    activeId = el.id;
    el.classList.add("active");
    showEvidence(el);
    const sentence = document.querySelector('[data-goto="' + el.id + '"]');
    if (sentence) { sentence.classList.add("current"); }
    if (focus !== false) {
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }

  function move(step) {
    const list = disputes();
    if (!list.length) { return; }
    const current = list.indexOf(active());
    const next = current < 0 ? 0 : Math.min(list.length - 1, Math.max(0, current + step));
    activate(list[next]);
  }

  function nextOpenAfter(id) {
    const list = disputes();
    const start = list.findIndex((d) => d.id === id);
    const after = list.slice(start + 1).concat(list.slice(0, start + 1));
    return after.find((d) => d.classList.contains("dispute-open")) || null;
  }

  function click(selector) {
    const el = active();
    const target = el && el.querySelector(selector);
    if (target && !target.disabled) {
      // A key pressed right after a swap can reach a button htmx has not wired yet (it does so when
      // the swap settles): wire it now, so that no keystroke of a fast adjudicator is lost.
      if (window.htmx) { window.htmx.process(target); }
      target.click();
      return true;
    }
    return false;
  }

  function save() {
    const el = active();
    const form = el && el.querySelector("form.decision");
    if (form) {
      if (window.htmx) { window.htmx.process(form); }  // as in click(): the form may have just been swapped in
      form.requestSubmit();
    }
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    const target = event.target;
    const typing = target.matches("textarea, input[type=text], select");
    if (typing) {
      if (event.key === "Escape") { target.blur(); const el = target.closest("[data-dispute]"); if (el) { el.focus(); } event.preventDefault(); }
      else if (event.key === "Enter" && !event.shiftKey && target.matches("[data-reason]")) { event.preventDefault(); save(); }
      return;
    }
    if (target.closest("[data-dispute]") && target.closest("[data-dispute]") !== active()) {
      activate(target.closest("[data-dispute]"), false);
    }
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "1": case "2": click('[data-answer-key="' + event.key + '"]'); break;
      case "u": click("[data-undo]"); break;
      case "a": case "b": case "c": {
        const radio = active() && active().querySelector('[data-side-key="' + event.key + '"]');
        if (radio && !radio.disabled) { radio.checked = true; radio.dispatchEvent(new Event("change", { bubbles: true })); }
        break;
      }
      case "r": { const reason = active() && active().querySelector("[data-reason]"); if (reason) { reason.focus(); } break; }
      case "Enter":
        if (target.matches("button, a, summary, input[type=radio]") && !target.matches("[data-dispute] input[type=radio]")) { return; }
        save(); break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("click", (event) => {
    const sentence = event.target.closest("[data-goto]");
    if (sentence) { activate(document.getElementById(sentence.dataset.goto)); return; }
    const dispute = event.target.closest("[data-dispute]");
    if (dispute) { activate(dispute, false); }
  });

  // A dispute card swapped in by htmx is a new element: keep it active, or after a
  // decision was saved move on to the next open dispute.
  document.addEventListener("htmx:load", (event) => {
    const swapped = event.detail.elt;
    if (!swapped || !swapped.matches || !swapped.matches("[data-dispute]")) { return; }
    const goto = document.querySelector('[data-goto="' + swapped.id + '"]');
    if (swapped.classList.contains("dispute-resolved")) {
      if (goto) { goto.classList.remove("open"); }
      const done = document.getElementById("turn-done");
      if (done) { done.hidden = openDisputes().length > 0; }
      activate(nextOpenAfter(swapped.id) || swapped);
      return;
    }
    activate(swapped);
    const error = swapped.querySelector("[role=alert]");
    const reason = swapped.querySelector("[data-reason]");
    if (error && reason && /reason/i.test(error.textContent)) { reason.focus(); }
  });

  activate(openDisputes()[0] || disputes()[0] || null);
})();
