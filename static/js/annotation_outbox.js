// The annotation page's memory: the outbox that saves in the background (the protocol is walked by protocol_walk.js).
//
// AnnotationOutbox keeps every change not yet confirmed by the server in localStorage (one key per tab and
// assignment), so a reload, a closed tab or a crash keeps it. Changes are grouped per sentence (one change holds
// the whole walk on a sentence, its note, evidence and time); a sentence's change is sent when it is ready (the
// sentence got its label, was left, or its note / evidence changed, or after a few idle seconds), several ready
// changes in one request. Batches go out one at a time, in order, each with its request ids (a batch retried after a
// network error is applied once) and the version its changes were made on. The outbox of a tab that is gone
// (closed, crashed) is taken over by the next page of the same assignment (Web Locks tell which tabs are alive).
//
// Versions: every change keeps its base, the assignment version the page showed when the change began, and is sent
// with it, so the server refuses (409) a change made on a copy that another tab has changed since, also after a
// reload or when another tab's outbox is taken over. The page's own writes move the bases on: when the server
// answers that a batch led from version A to B (a 200: nothing else was written in between or since), the changes
// queued on A are on B. Nothing else moves a base (a reload does not: the page's fresh version is not what the change saw).
//
// Refusals: a change the server refuses (400 malformed, 422 not allowed, 413 too large) is never sent again as it is.
// A refused batch of several changes is sent again one change at a time, to find the one at fault; that one is set
// aside with the server's reason (`refused`), shown on its sentence, and the rest keeps saving. The annotator fixes it
// (any new change on that sentence takes it back into the line, the fix on top) or drops it. Only what concerns every
// change (409: another copy was written; 401/403/404: no longer allowed) stops the outbox.

  // ---- the outbox ---------------------------------------------------------------------------------------
  const IDLE_MS = 3000;
  const newId = () => (window.crypto && crypto.randomUUID ? crypto.randomUUID()
    : Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 12) + Math.random().toString(36).slice(2, 12));
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // options: assignment, url, csrf, version, onChange(status), onSaved(result), onStopped(kind, message),
  // onRefused(sentenceId, message)
  export function AnnotationOutbox(options) {
    this.o = options;
    this.version = options.version;
    this.prefix = "annotator-outbox:" + options.assignment + ":";
    this.batches = [];   // frozen batches {version, changes}, the first one possibly in flight
    this.records = [];   // changes not yet in a batch, at most one per sentence, in the order they began
    this.sending = false;
    this.offline = false;
    this.refused = [];   // {change, base, error}: changes the server refused (400, 422), kept until fixed or dropped
    this.stopped = null; // "conflict" / "refused": nothing more is sent until the page is reloaded
    this.chain = Promise.resolve();
    this.idleTimer = null;
    this.tab = this._claimTab();
    this._load(this.key());
    this.savedKey = "annotator-saved:" + options.assignment;
  }

  // The highest version this browser's own saves of the assignment reached, kept across reloads. A reload can race
  // the page's own save: the server renders the new page before the save commits, while the old page still hears the
  // save confirmed and forgets the change. That new page shows less than was saved, and its older version would make
  // the next change look like another tab's: `behind()` tells the page to fetch itself again.
  AnnotationOutbox.prototype.behind = function () {
    let saved = 0;
    try { saved = Number(localStorage.getItem(this.savedKey)) || 0; } catch (e) { saved = 0; }
    if (saved > this.version) { return true; }
    try { localStorage.removeItem(this.savedKey); } catch (e) { /* storage refused: nothing kept */ }
    return false;
  };
  // A page rendered before this browser's own save was committed (a reload that raced it) fetches itself again, once
  // per version, so that it shows what was saved and carries the version that save reached. True: reloading.
  AnnotationOutbox.prototype.refetchIfBehind = function (version) {
    if (!this.behind()) { return false; }
    let again = true;
    try {
      const guard = "annotator-refetched:" + this.o.assignment;
      again = sessionStorage.getItem(guard) !== String(version);
      sessionStorage.setItem(guard, String(version));
    } catch (e) { again = false; }
    if (again) { window.location.reload(); }
    return again;
  };
  AnnotationOutbox.prototype._rememberSaved = function (version) {
    try {
      if (version > (Number(localStorage.getItem(this.savedKey)) || 0)) { localStorage.setItem(this.savedKey, String(version)); }
    } catch (e) { /* storage refused: a racing reload then shows the older copy, as without this check */ }
  };
  AnnotationOutbox.prototype.key = function () { return this.prefix + this.tab; };

  // A tab keeps its id across reloads (sessionStorage) and holds a lock on it while it lives.
  AnnotationOutbox.prototype._claimTab = function () {
    let tab = "shared";
    try {
      tab = sessionStorage.getItem(this.prefix + "tab") || newId();
      sessionStorage.setItem(this.prefix + "tab", tab);
    } catch (e) { /* storage refused: one shared key */ }
    if (navigator.locks) { navigator.locks.request(this.prefix + tab, () => new Promise(() => {})); }
    return tab;
  };
  AnnotationOutbox.prototype._load = function (key) {
    let stored = null;
    try { stored = JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { stored = null; }
    if (!stored) { return []; }
    const changes = [];
    (stored.refused || []).forEach((entry) => { this.refused.push(entry); changes.push(entry.change); });
    (stored.batches || []).forEach((batch) => { this.batches.push(batch); changes.push(...batch.changes); });
    (stored.records || []).forEach((record) => {
      // A change kept without its base cannot prove what it was made on: version 0 (never written) is the only safe one.
      record.base = Number.isInteger(record.base) ? record.base : 0;
      record.ready = true;
      this._merge(record);
      changes.push(record);
    });
    return changes;
  };
  // Take over the outboxes of tabs of this assignment that are gone; calls back with their changes.
  AnnotationOutbox.prototype.adoptOrphans = function (restore) {
    if (!navigator.locks) { return; }
    const keys = [];
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key && key.startsWith(this.prefix) && key !== this.key()) { keys.push(key); }
    }
    keys.forEach((key) => {
      navigator.locks.request(key, { ifAvailable: true }, (lock) => {
        if (!lock) { return; } // that tab is alive and sends its own changes
        const changes = this._load(key);
        localStorage.removeItem(key);
        this.persist();
        if (changes.length) { restore(changes); this.pump(); }
      });
    });
  };
  AnnotationOutbox.prototype._merge = function (record) {
    const open = this.records.find((r) => r.sentence === record.sentence);
    if (!open) { this.records.push(record); return; }
    open.base = Math.min(open.base, record.base); // the older copy decides: it may not have seen a write
    open.steps.push(...record.steps);
    open.path = record.path;
    open.seconds += record.seconds;
    if (record.note !== undefined) { open.note = record.note; }
    if (record.evidence !== undefined) { open.evidence = record.evidence; }
  };
  AnnotationOutbox.prototype.persist = function () {
    try {
      if (!this.batches.length && !this.records.length && !this.refused.length) { localStorage.removeItem(this.key()); return; }
      localStorage.setItem(this.key(), JSON.stringify({ batches: this.batches, records: this.records, refused: this.refused }));
    } catch (e) { /* full or refused: the changes are still in memory and sent */ }
  };
  // The open change of a sentence (created on first use; a refused change of the sentence comes back as it: the
  // annotator is changing the sentence again, which is how a refusal is fixed).
  AnnotationOutbox.prototype.recordFor = function (sentence, path) {
    let record = this.records.find((r) => r.sentence === sentence.id);
    const refused = this.refused.find((entry) => entry.change.sentence === sentence.id);
    if (!record && refused) {
      this.refused = this.refused.filter((entry) => entry !== refused);
      record = { ...refused.change, base: refused.base, ready: false };
      this.records.push(record);
    }
    if (!record) {
      record = { request_id: newId(), sentence: sentence.id, base: this.version, steps: [], path, seconds: 0, ready: false };
      this.records.push(record);
    }
    return record;
  };
  // What the bar says (text) and its colour (state), given why the page stopped saving ({kind}, or null).
  AnnotationOutbox.prototype.status = function (stopped) {
    const count = this.pendingCount();
    const plural = (n) => n + " change" + (n === 1 ? "" : "s");
    if (stopped) { return { state: "stopped", text: stopped.kind === "conflict" ? "Not saved: changed in another tab" : "Not saved: refused" }; }
    if (this.refused.length) { return { state: "stopped", text: "Not saved: " + plural(this.refused.length) + " refused" + (count ? ", saving " + count : "") }; }
    if (count && this.offline) { return { state: "offline", text: "Offline — " + plural(count) + " kept, will send" }; }
    return count ? { state: "saving", text: "Saving " + count } : { state: "saved", text: "Saved" };
  };
  AnnotationOutbox.prototype.pendingCount = function () {
    return this.records.length + this.batches.reduce((n, batch) => n + batch.changes.length, 0);
  };
  // Time spent on a sentence, counted with its open change (or its refused one: looking at it is no fix).
  AnnotationOutbox.prototype.addTime = function (sentence, seconds) {
    const refused = this.refusalOf(sentence.id);
    if (refused) { refused.change.seconds += seconds; this.persist(); return null; }
    const record = this.recordFor(sentence, sentence.path);
    record.seconds += seconds;
    return record;
  };
  AnnotationOutbox.prototype.refusalOf = function (sentenceId) {
    return this.refused.find((entry) => entry.change.sentence === sentenceId) || null;
  };
  // Forget a refused change: what the server has for the sentence stays (the page reloads to show it).
  AnnotationOutbox.prototype.drop = function (sentenceId) {
    this.refused = this.refused.filter((entry) => entry.change.sentence !== sentenceId);
    this.persist();
  };
  // A change of the sentence that time can still join (not yet frozen in a batch).
  AnnotationOutbox.prototype.hasUnsentChange = function (sentenceId) {
    return this.records.some((r) => r.sentence === sentenceId) || !!this.refusalOf(sentenceId);
  };
  // A change of the sentence the server has not confirmed yet (not sent, refused, or in a batch on its way).
  AnnotationOutbox.prototype.hasOpenChange = function (sentenceId) {
    return this.hasUnsentChange(sentenceId) ||
      this.batches.some((batch) => batch.changes.some((c) => c.sentence === sentenceId));
  };
  // Something changed: keep it, send what is ready, make the rest ready after a pause.
  AnnotationOutbox.prototype.touched = function () {
    this.persist();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => { this.readyAll(); }, IDLE_MS);
    this.o.onChange();
    this.pump();
  };
  AnnotationOutbox.prototype.readyAll = function () {
    this.records.forEach((r) => { r.ready = true; });
    this.persist();
    this.pump();
  };
  // Run `task` when no batch is on the wire (other writers of the page, e.g. the claims panels, share the line).
  AnnotationOutbox.prototype.exclusive = function (task) {
    const run = this.chain.then(task, task);
    this.chain = run.catch(() => {});
    return run;
  };
  AnnotationOutbox.prototype.pump = function () {
    if (this.sending || this.stopped) { return this.drained; }
    this.sending = true;
    this.drained = this.exclusive(() => this._sendAll()).finally(() => {
      this.sending = false;
      this.o.onChange();
      // Something became ready while the last batch was answered: go again.
      if (!this.stopped && this.records.some((r) => r.ready)) { this.pump(); }
    });
    return this.drained;
  };
  AnnotationOutbox.prototype._sendAll = async function () {
    for (;;) {
      if (!this.batches.length) {
        // One batch carries one version: the ready changes made on the same base as the oldest ready one.
        const first = this.records.find((r) => r.ready);
        if (!first) { return; }
        const taken = this.records.filter((r) => r.ready && r.base === first.base);
        this.records = this.records.filter((r) => !taken.includes(r));
        this.batches.push({ version: first.base, changes: taken.map(({ ready: _, base: __, ...change }) => change) });
        this.persist();
      }
      const batch = this.batches[0];
      const answer = await this._send(batch);
      if (answer.status === 200) {
        // A 200 continues from the version the batch's own changes reached (a batch sent again after its answer was
        // lost is answered 409 when anything was written since: a lead's split or merge, another tab).
        this._rememberSaved(answer.body.version);
        this.batches.shift();
        this.advance(batch.version, answer.body.version);
        this.persist();
        this.o.onSaved(answer.body, batch);
        continue;
      }
      if (answer.status === 400 || answer.status === 413 || answer.status === 422) {
        this._refuse(batch, (answer.body && answer.body.error) || ("The server refused the change (" + answer.status + ")."));
        continue;
      }
      this.stopped = answer.status === 409 ? "conflict" : "refused";
      this.o.onStopped(this.stopped, (answer.body && answer.body.error) || ("The server refused the change (" + answer.status + ")."));
      return;
    }
  };
  // A batch was refused: one change is set aside with the reason; several are sent again one by one to find it.
  AnnotationOutbox.prototype._refuse = function (batch, error) {
    if (batch.changes.length > 1) {
      this.batches.splice(0, 1, ...batch.changes.map((change) => ({ version: batch.version, changes: [change] })));
      this.persist();
      return;
    }
    this.batches.shift();
    let change = batch.changes[0];
    // A change of the same sentence made since builds on the refused one: it waits with it, on top of it.
    const open = this.records.find((r) => r.sentence === change.sentence);
    if (open) {
      this.records = this.records.filter((r) => r !== open);
      change = { ...change, steps: change.steps.concat(open.steps), path: open.path, seconds: change.seconds + open.seconds,
                 note: open.note !== undefined ? open.note : change.note,
                 evidence: open.evidence !== undefined ? open.evidence : change.evidence };
    }
    this.refused.push({ change, base: batch.version, error });
    this.persist();
    this.o.onRefused(change.sentence, error);
  };
  // The page's own write led from version `from` to `to` with nothing in between: what was queued on `from` is on `to`.
  AnnotationOutbox.prototype.advance = function (from, to) {
    this._rememberSaved(to);
    this.batches.forEach((b) => { if (b.version === from) { b.version = to; } });
    this.records.forEach((r) => { if (r.base === from) { r.base = to; } });
    this.refused.forEach((entry) => { if (entry.base === from) { entry.base = to; } });
    if (this.version === from) { this.version = to; }
    this.persist();
  };
  // POST one batch until the server answers it (network errors, 5xx and 429 are retried with the same ids).
  AnnotationOutbox.prototype._send = async function (batch) {
    for (let attempt = 0; ; attempt++) {
      let response = null;
      try {
        response = await fetch(this.o.url, {
          method: "POST", credentials: "same-origin", body: JSON.stringify(batch),
          headers: { "Content-Type": "application/json", "X-CSRFToken": this.o.csrf },
        });
      } catch (error) { response = null; }
      if (response && response.status < 500 && response.status !== 429) {
        this.offline = false;
        let body = null;
        try { body = await response.json(); } catch (e) { body = null; }
        return { status: response.status, body };
      }
      this.offline = true;
      this.o.onChange();
      await sleep(Math.min(500 * 2 ** attempt, 5000));
    }
  };
  // Forget this tab's unsent changes (the annotator chose to reload what is saved after a conflict).
  AnnotationOutbox.prototype.discard = function () {
    this.batches = [];
    this.records = [];
    this.refused = [];
    this.persist();
  };
