// Promoting a question to a guideline example: the answer list offers only the answers of the step chosen
// (the server checks the pair too).
(function () {
  "use strict";
  const step = document.getElementById("promote-step");
  const answer = document.getElementById("promote-answer");
  if (!step || !answer) { return; }
  function show() {
    answer.querySelectorAll("optgroup[data-step]").forEach((group) => {
      const on = group.dataset.step === step.value;
      group.hidden = !on;
      group.disabled = !on;
    });
    const chosen = answer.selectedOptions[0];
    if (!chosen || chosen.parentElement.disabled) {
      const first = answer.querySelector('optgroup[data-step="' + step.value + '"] option');
      if (first) { first.selected = true; }
    }
  }
  step.addEventListener("change", show);
  show();
})();
