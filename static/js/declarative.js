// Small behaviours declared in the templates with data attributes, in place of inline handlers
// (onchange=, onfocus=, hx-on=): the Content-Security-Policy runs no inline script, and htmx runs with
// allowEval off (the htmx-config meta tag in templates/base.html), so neither would run.
//   data-autosubmit            on a <select>: submit its form when the choice changes
//   data-select-on-focus       on an <input>: select its text on focus (a token to copy)
//   data-reset-after-success   on an htmx form: empty it once its request succeeded
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.matches && field.matches("select[data-autosubmit]") && field.form) {
      if (field.form.requestSubmit) field.form.requestSubmit(); else field.form.submit();
    }
  });
  document.addEventListener("focusin", function (event) {
    var field = event.target;
    if (field.matches && field.matches("input[data-select-on-focus]")) field.select();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail && event.detail.elt;
    if (form && form.matches && form.matches("form[data-reset-after-success]") && event.detail.successful) {
      form.reset();
    }
  });
})();
