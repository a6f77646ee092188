// Starts ReDoc on the API reference page (templates/drf_spectacular/redoc.html). A file rather than an
// inline script: the Content-Security-Policy allows scripts from the site's own static files only.
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  if (!container || typeof Redoc === "undefined") return;
  var settings = container.dataset.settings ? JSON.parse(container.dataset.settings) : {};
  Redoc.init(container.dataset.schemaUrl, settings, container);
})();
