// Where the annotation page opens, and what it says after a conflict (an ES module).
//
// A reload lands where work is: the sentence being walked (answered in part), else the first sentence without a
// label; never a sentence just finished (the address follows the keys with a delay, so it may name one). An address
// the annotator followed (a link with ?sentence=, not a reload) is kept, as is the sentence a reload the page made
// itself asks to stay on (dropping a refused change reloads onto that sentence).
//
// After a conflict (another tab or window wrote this assignment since this tab's copy was made, or a lead split or
// merged its units or changed the project's protocol) nothing this tab still holds can be saved: the page forgets
// it, reloads to show what is saved, and says on the new page which sentences' changes were not kept
// (sessionStorage carries that across the reload, for this tab only).

  const stayKey = (assignment) => "annotator-stay:" + assignment;
  const noticeKey = (assignment) => "annotator-conflict:" + assignment;
  const take = (key) => {
    try { const value = sessionStorage.getItem(key); sessionStorage.removeItem(key); return value; } catch (e) { return null; }
  };
  const keep = (key, value) => { try { sessionStorage.setItem(key, value); } catch (e) { /* refused: nothing carried */ } };

  function isReload() {
    const entry = performance.getEntriesByType && performance.getEntriesByType("navigation")[0];
    return !!entry && entry.type === "reload";
  }

  // sentences: the page's sentences (path already restored from the outbox); addressed: the one the address names;
  // restored: the sentence of the last change kept in this browser (or null).
  function landing(protocol, sentences, addressed, restored, assignment) {
    const stay = Number(take(stayKey(assignment)));
    const byId = (id) => sentences.find((s) => s.id === id) || null;
    if (stay && byId(stay)) { return byId(stay); }
    if (addressed && new URLSearchParams(location.search).has("sentence") && !isReload()) { return addressed; }
    const walking = (s) => !!s && Object.keys(s.path).length > 0 && !protocol.labelOf(s.path);
    const candidate = restored || addressed;
    if (walking(candidate)) { return candidate; }
    return sentences.find((s) => !protocol.labelOf(s.path)) || candidate || sentences[0] || null;
  }

  // Changes kept in this browser back on their sentences; returns the sentence of the last one (or null).
  function restore(protocol, byId, changes) {
    return changes.reduce((last, change) => {
      const sentence = byId.get(change.sentence);
      if (!sentence) { return last; }
      sentence.path = protocol.ordered(change.path || {});
      if (change.note !== undefined) { sentence.note = change.note; }
      if (change.evidence !== undefined) { sentence.evidence = change.evidence; }
      return sentence;
    }, null);
  }

  // The next load of this tab stays on `sentenceId`.
  function stayOn(assignment, sentenceId) { keep(stayKey(assignment), String(sentenceId)); }

  // What a conflict costs, said on the page that shows what is saved: changes {sentence, path}, described by number.
  function rememberConflict(assignment, changes, describe) {
    const seen = new Map();
    changes.forEach((change) => seen.set(change.sentence, change));
    const lost = [...seen.values()].map(describe).filter(Boolean);
    keep(noticeKey(assignment), "This assignment was changed in another tab or window (or by a project lead: its units or " +
      "the project's protocol), so this tab's copy was out of date. " +
      (lost.length ? "Not saved from this tab: " + lost.join("; ") + ". " : "") +
      "What you see now is what is saved; keys apply to it.");
  }
  function conflictNotice(assignment) { return take(noticeKey(assignment)); }
  // Everything the outbox holds (refused, in flight, queued) is said, forgotten, and the page shows what is saved.
  function forgetAndReload(assignment, outbox, describe, warnBeforeLeaving) {
    const changes = outbox.refused.map((r) => r.change).concat(outbox.batches.flatMap((b) => b.changes), outbox.records);
    // Time alone is not work the annotator would redo: only answers, notes and evidence are named.
    rememberConflict(assignment, changes.filter((c) => c.steps.length || c.note !== undefined || c.evidence !== undefined), describe);
    outbox.discard();
    window.removeEventListener("beforeunload", warnBeforeLeaving);
    window.location.reload();
  }

  export { landing, restore, stayOn, conflictNotice, forgetAndReload };
