// Keyboard shortcuts of the judging page: 0-3 (the scale's grades) grade the document (and move on), n / p next / previous
// (buttons of a form: moving to a pair is a post, as it leases the pair).
"use strict";

// ---- Skipping with a comment (issue 22, the assessor's page): s puts the cursor in the comment box; Enter
// there posts the skip, Escape leaves the box so that the other keys work again. ----
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing || event.repeat) return;
  const box = document.getElementById("skip-comment");
  if (!box) return;
  if (event.target === box) {
    if (event.key === "Escape") box.blur();
    return;
  }
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target.isContentEditable) return;
  if (event.key === "s") {
    event.preventDefault();
    box.focus();
  }
});
// ---- end of skipping ----

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing || event.repeat) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target.isContentEditable) return;
  const form = document.getElementById("grade-form");
  if (form && /^[0-9]$/.test(event.key)) { // a grade the scale has not: no button, nothing sent
    const button = form.querySelector(`button[name="grade"][value="${event.key}"]`);
    if (button && !form.dataset.sent) {
      form.dataset.sent = "1"; // one grade per page view, however fast the keys come
      form.requestSubmit(button);
    }
    event.preventDefault();
  } else if (event.key === "n" || event.key === "p") {
    const button = document.getElementById(event.key === "n" ? "next" : "prev");
    if (button) {
      event.preventDefault();
      button.click(); // a post: going to a pair leases it
    }
  }
});
