// The reference pane's tools on the annotation screen: find in the reference (/) and the resizable split
// between the reference and the dialogue. workspace.js calls them; they never change the reference's text.
//
// Find highlights matches with the CSS Custom Highlight API (ranges over the text, no elements added), so the
// reference's characters stay exactly Dialogue.reference and selection offsets stay evidence offsets.

  export function ReferenceFind(element, onClose) {
    this.element = element;
    this.onClose = onClose;
    this.bar = document.getElementById("reference-find-bar");
    this.input = document.getElementById("reference-find");
    this.count = document.getElementById("reference-find-count");
    this.matches = [];
    this.current = -1;
    if (!this.bar || !this.input) { return; }
    this.input.addEventListener("input", () => { this.search(); });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); this.step(event.shiftKey ? -1 : 1); }
      else if (event.key === "Escape") { event.preventDefault(); this.close(); }
    });
  }
  ReferenceFind.prototype.isOpen = function () { return !!this.bar && !this.bar.hidden; };
  ReferenceFind.prototype.open = function () {
    if (!this.bar) { return; }
    this.bar.hidden = false;
    this.input.focus();
    this.input.select();
    this.search();
  };
  ReferenceFind.prototype.close = function () {
    if (!this.bar) { return; }
    this.bar.hidden = true;
    this.matches = [];
    this.current = -1;
    this.paint();
    this.onClose();
  };
  // Find folds case, width and composition: each character is compared in its NFKC form, lower-cased, so "ＡＢＣ"
  // finds "abc", "１２３" finds "123", "，" finds "," and half-width katakana find full-width ones. A character
  // is normalised together with the combining marks after it (and Hangul's vowel and final jamo), so "café"
  // written as e + U+0301 folds to the same "café" as a precomposed é, whichever way the query was typed.
  // Matches are mapped back to the page's own characters, so a highlight covers exactly the characters that
  // matched, a letter's accents included.
  const WITH_ITS_MARKS = /.[\p{M}\u1160-\u11FF\uD7B0-\uD7FF]*/gsu;
  function folded(text) {
    let out = "";
    const starts = [], ends = [];
    for (const match of text.matchAll(WITH_ITS_MARKS)) {
      const form = match[0].normalize("NFKC").toLowerCase();
      const start = match.index, end = match.index + match[0].length;
      for (let k = 0; k < form.length; k++) { starts.push(start); ends.push(end); }
      out += form;
    }
    return { text: out, starts, ends };
  }
  ReferenceFind.folded = folded;
  ReferenceFind.prototype.search = function () {
    const query = this.input.value.normalize("NFKC").toLowerCase();
    const text = this.element.textContent;
    if (!this.fold || this.fold.source !== text) { this.fold = { source: text, ...folded(text) }; }
    const fold = this.fold;
    this.matches = [];
    if (query.trim()) {
      for (let at = fold.text.indexOf(query); at >= 0; at = fold.text.indexOf(query, at + query.length)) {
        const match = [fold.starts[at], fold.ends[at + query.length - 1]];
        const last = this.matches[this.matches.length - 1];
        if (!last || match[0] >= last[1]) { this.matches.push(match); } // a character folded to several never matches twice
      }
    }
    this.current = this.matches.length ? 0 : -1;
    this.paint();
  };
  ReferenceFind.prototype.step = function (delta) {
    if (!this.matches.length) { return; }
    this.current = (this.current + delta + this.matches.length) % this.matches.length;
    this.paint();
  };
  // The reference's children were drawn again (evidence changed): the ranges must be made again.
  ReferenceFind.prototype.redrawn = function () { if (this.isOpen()) { this.paint(); } };

  ReferenceFind.prototype.range = function (start, end) {
    const walker = document.createTreeWalker(this.element, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let seen = 0, started = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const length = node.textContent.length;
      if (!started && start <= seen + length) { range.setStart(node, start - seen); started = true; }
      if (started && end <= seen + length) { range.setEnd(node, end - seen); return range; }
      seen += length;
    }
    return null;
  };
  ReferenceFind.prototype.paint = function () {
    const ranges = this.matches.map(([start, end]) => this.range(start, end)).filter(Boolean);
    if (window.CSS && CSS.highlights && window.Highlight) {
      CSS.highlights.set("reference-find", new Highlight(...ranges));
      const current = ranges[this.current];
      if (current) { CSS.highlights.set("reference-find-current", new Highlight(current)); }
      else { CSS.highlights.delete("reference-find-current"); }
    }
    if (this.count) {
      this.count.textContent = !this.input.value.trim() ? "" :
        this.matches.length ? (this.current + 1) + " of " + this.matches.length : "no match";
    }
    this.element.dataset.findMatches = String(this.matches.length);
    const current = ranges[this.current];
    const pane = this.element.closest(".ws-pane");
    if (current && pane) {
      // Bring the current match to the upper third of the pane, below the sticky heading and find bar.
      const rect = current.getBoundingClientRect(), box = pane.getBoundingClientRect();
      if (rect.top < box.top + 80 || rect.bottom > box.bottom - 10) { pane.scrollTop += rect.top - box.top - pane.clientHeight / 3; }
    }
  };

  // The split: the dialogue's height under the reference, dragged or moved with the arrow keys, kept per browser.
  export function ResizableSplit(separator, column, below) {
    if (!separator || !column || !below) { return; }
    const KEY = "annotator-split-dialogue-px";
    const STEP = 32;
    const limits = () => [48, Math.max(48, column.clientHeight * 0.7)];
    const set = (px, keep) => {
      const [low, high] = limits();
      const height = Math.round(Math.min(high, Math.max(low, px)));
      column.style.setProperty("--ws-history-height", height + "px");
      separator.setAttribute("aria-valuenow", String(Math.round(100 - (100 * height) / Math.max(1, column.clientHeight))));
      if (keep) { try { localStorage.setItem(KEY, String(height)); } catch (e) { /* not kept: fine */ } }
    };
    let stored = null;
    try { stored = Number(localStorage.getItem(KEY)) || null; } catch (e) { stored = null; }
    set(stored || below.getBoundingClientRect().height, false);
    separator.addEventListener("keydown", (event) => {
      const height = below.getBoundingClientRect().height;
      const moves = { ArrowDown: height - STEP, ArrowUp: height + STEP, End: 0, Home: Infinity };
      if (!(event.key in moves)) { return; }
      event.preventDefault(); // the page's own arrow keys (next / previous sentence) do not apply here
      set(moves[event.key], true);
    });
    separator.addEventListener("pointerdown", (event) => {
      separator.setPointerCapture(event.pointerId);
      const move = (e) => { set(column.getBoundingClientRect().bottom - e.clientY, true); };
      const up = () => { separator.removeEventListener("pointermove", move); separator.removeEventListener("pointerup", up); };
      separator.addEventListener("pointermove", move);
      separator.addEventListener("pointerup", up);
    });
  }

  // The annotator's selection in the reference as evidence offsets {start, end, text}, or null: trimmed of spaces,
  // and a drag that starts or ends inside a word takes the whole word (evidence is never half a word).
  // `unspaced`: [low, high] code point ranges of the scripts written without spaces (Chinese, Japanese), from the
  // page's data (domain/languages.py UNSPACED_RANGES): there a character is the unit, not a run of letters.
  export function referenceSelection(referenceElement, referenceText, unspaced) {
    const selection = document.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) { return null; }
    const range = selection.getRangeAt(0);
    if (!referenceElement.contains(range.startContainer) || !referenceElement.contains(range.endContainer)) { return null; }
    const offset = (node, position) => {
      const prefix = document.createRange();
      prefix.selectNodeContents(referenceElement);
      prefix.setEnd(node, position);
      return prefix.toString().length;
    };
    let start = offset(range.startContainer, range.startOffset);
    let end = offset(range.endContainer, range.endOffset);
    while (start < end && /\s/.test(referenceText[start])) { start++; }
    while (end > start && /\s/.test(referenceText[end - 1])) { end--; }
    const unspacedCharacter = new RegExp("[" + (unspaced || []).map(([low, high]) =>
      "\\u{" + low.toString(16) + "}-\\u{" + high.toString(16) + "}").join("") + "]", "u");
    const inWord = (i) => i >= 0 && i < referenceText.length && /[\p{L}\p{N}_]/u.test(referenceText[i])
      && !unspacedCharacter.test(referenceText[i]);
    if (start < end) {
      while (inWord(start - 1) && inWord(start)) { start--; }
      while (inWord(end) && inWord(end - 1)) { end++; }
    }
    return start < end ? { start, end, text: referenceText.slice(start, end) } : null;
  }
