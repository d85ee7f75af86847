// Keyboard shortcuts of the support page: each grade's key (2 full, 1 partial, 0 none, c contradicts when the
// workspace's scale has it: the buttons' data-key) grades the pair and moves on; n / p are app.js's.
"use strict";

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing || event.repeat) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target.isContentEditable) return;
  const form = document.getElementById("support-form");
  if (!form) return;
  const button = [...form.querySelectorAll("button[data-key]")].find((b) => b.dataset.key === event.key);
  if (!button) return; // a key the scale has not: nothing sent
  event.preventDefault();
  if (form.dataset.sent) return; // one grade per page view, however fast the keys come
  form.dataset.sent = "1";
  form.requestSubmit(button);
});
