// The People page's invite links: a Copy button beside each (the field shows the whole link, and the button
// puts it on the clipboard). The clipboard API where the page may use it, else the selected field and the
// browser's copy command; either way the button says what happened.
function copyField(button) {
  const field = document.getElementById(button.dataset.copyTarget);
  const status = document.getElementById(button.dataset.copyStatus);
  if (!field) { return; }
  const said = (text) => { if (status) { status.textContent = text; } };
  const fallback = () => {
    field.focus();
    field.select();
    const copied = document.execCommand && document.execCommand("copy");
    said(copied ? "Link copied." : "Press Ctrl+C (⌘C) to copy the selected link.");
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(() => { said("Link copied."); field.select(); }, fallback);
  } else {
    fallback();
  }
}

document.querySelectorAll("button[data-copy-target]").forEach((button) => {
  button.hidden = false;  // shown only when this script runs: without it, the field is still there to select
  button.addEventListener("click", () => { copyField(button); });
});
