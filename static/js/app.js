// App-wide behaviour: tell the user when a request failed, so no answer is silently dropped.
(function () {
  const status = () => document.getElementById("connection-status");
  function show(message) { const el = status(); if (el) { el.textContent = message; el.hidden = false; } }
  function hide() { const el = status(); if (el) { el.hidden = true; } }
  // htmx does not send a failed request again: say so, the person sends it again when the connection is back.
  document.addEventListener("htmx:sendError", () => show("Connection lost - your last action was not saved. Do it again once you are back online."));
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    const code = xhr.status;
    if (code === 409) { return; } // conflicts are rendered by the page itself
    // A malformed request is answered 400 with what was wrong, as plain text.
    const reason = code === 400 && (xhr.getResponseHeader("Content-Type") || "").startsWith("text/plain")
      ? xhr.responseText : "";
    show(code >= 500 ? "The server had a problem (" + code + "). Your last action was not saved; please retry." :
         reason ? "That action was refused: " + reason : "That action was refused (" + code + ").");
  });
  document.addEventListener("htmx:afterRequest", (event) => { if (event.detail.successful) { hide(); } });
  // A page restored from the back-forward cache shows its counters as they were when it was left (a queue's
  // "in progress", an open-dispute count): fetch it again. (The annotation page keeps its unsent answers in
  // the browser's storage, so reloading it loses nothing.)
  window.addEventListener("pageshow", (event) => { if (event.persisted) { window.location.reload(); } });
})();
