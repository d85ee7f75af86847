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

// Marking evidence (the nugget's mark page): the text selected in the open passage becomes the span to add,
// as characters of the passage's text (the form also sends the selected text, which the server trusts where
// the browser counts characters differently); typing the characters works without a mouse.
(() => {
  const text = document.getElementById("doc-text");
  const form = document.getElementById("mark-form");
  if (!text || !form) return;
  const start = form.elements.namedItem("start");
  const end = form.elements.namedItem("end");
  const selected = document.getElementById("mark-selected");
  const preview = document.getElementById("selection-preview");
  const show = (words) => {
    preview.textContent = "";
    if (!words) {
      preview.textContent = "Nothing selected yet.";
      return;
    }
    const quote = document.createElement("q");
    quote.textContent = words.length > 200 ? words.slice(0, 199) + "…" : words;
    preview.append("Selected: ", quote);
  };
  document.addEventListener("selectionchange", () => {
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    const range = selection.getRangeAt(0);
    if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) return;
    const before = document.createRange();
    before.selectNodeContents(text);
    before.setEnd(range.startContainer, range.startOffset);
    const from = before.toString().length;
    const words = range.toString();
    start.value = String(from);
    end.value = String(from + words.length);
    selected.value = words;
    document.getElementById("scope-span").checked = true;
    show(words);
  });
  const typed = () => { // characters typed by hand: what the passage has there
    selected.value = "";
    const a = Number(start.value), b = Number(end.value);
    show(start.value !== "" && end.value !== "" && a < b ? text.textContent.slice(a, b) : "");
  };
  start.addEventListener("input", typed);
  end.addEventListener("input", typed);
})();
