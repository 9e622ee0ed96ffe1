// Enhancements of the applicant's form. Everything works without this file:
// it adds inline validation, confirmations and focus on error summaries
// (upload.js sends documents in one step).
(function () {
  "use strict";

  var summary = document.getElementById("error-summary");
  if (summary) { summary.focus(); }
  // Each link of the summary moves the focus to the input to fix (the
  // first one of a group: an address, radios, a date) and scrolls so
  // that its question (label or legend) is in view, as GOV.UK's does.
  // The listener is the document's: upload.js replaces the summary.
  document.addEventListener("click", function (e) {
    var link = e.target.closest ? e.target.closest("#error-summary a[href^='#']") : null;
    if (!link) { return; }
    var target = document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
    if (!target) { return; }
    var input = target.matches("input, select, textarea") ? target :
      target.querySelector("[aria-invalid=true]") ||
      target.querySelector("input:not([type=hidden]):not([disabled]), select, textarea");
    if (!input) { return; }
    e.preventDefault();
    var group = input.closest("fieldset");
    var question = (group && group.querySelector("legend")) ||
      (input.id && document.querySelector("label[for='" + input.id.replace(/'/g, "\\'") + "']")) || input;
    question.scrollIntoView();
    input.focus({ preventScroll: true });
  });

  // Inline messages, shared with country.js and upload.js (which run
  // after this file): a message looks and reads like the server's, above
  // what it is about, "Error:" for screen readers, the field's group
  // marked, the input described by it, and announced.
  var errors = {
    // show puts message in the element id (created before before, or
    // before input), and marks input as wrong.
    show: function (input, id, message, before) {
      var el = document.getElementById(id);
      if (!el) {
        el = document.createElement("p");
        el.id = id;
        el.className = "error-message";
        el.setAttribute("aria-live", "polite");
        var at = before || input;
        at.parentNode.insertBefore(el, at);
      }
      el.textContent = "";
      var prefix = document.createElement("span");
      prefix.className = "visually-hidden";
      prefix.textContent = "Error: ";
      el.appendChild(prefix);
      el.appendChild(document.createTextNode(message));
      var field = input.closest(".field, section.doc");
      if (field) { field.classList.add("invalid"); }
      var described = (input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
      if (described.indexOf(id) < 0) { described.push(id); }
      input.setAttribute("aria-describedby", described.join(" "));
      input.setAttribute("aria-invalid", "true");
    },
    // clear removes the message id about input, and the marks when no
    // other message remains.
    clear: function (input, id) {
      var el = document.getElementById(id);
      if (!el) { return; }
      el.remove();
      var described = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (d) { return d && d !== id; });
      if (described.length) { input.setAttribute("aria-describedby", described.join(" ")); } else { input.removeAttribute("aria-describedby"); }
      input.removeAttribute("aria-invalid");
      var field = input.closest(".field");
      if (field && !field.querySelector(".error-message")) { field.classList.remove("invalid"); }
    }
  };
  window.onboardErrors = errors;

  // Inline validation: a field's data-pattern is checked when the applicant
  // leaves it; the server checks everything again on save.
  function check(input) {
    var pattern = input.getAttribute("data-pattern");
    var value = input.value.trim();
    var ok = true;
    if (pattern && value !== "") {
      try { ok = new RegExp(pattern).test(value); } catch (e) { ok = true; }
    }
    if (ok && input.type === "email" && value !== "") { ok = /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value); }
    if (ok) {
      errors.clear(input, input.id + "-inline-error");
      return;
    }
    errors.show(input, input.id + "-inline-error", input.getAttribute("data-message") || "Enter the answer in the correct format");
  }
  // A message inserted while a finger or the mouse is down moves the page
  // under it, and the tap (on "Save", say) would land on something else:
  // leaving a field by pressing something checks it once the press is over.
  var pressing = false;
  var pending = [];
  document.addEventListener("pointerdown", function () { pressing = true; }, true);
  function release() {
    setTimeout(function () {
      pressing = false;
      var todo = pending;
      pending = [];
      todo.forEach(check);
    }, 0);
  }
  document.addEventListener("pointerup", release, true);
  document.addEventListener("pointercancel", release, true);
  document.querySelectorAll("input[data-pattern], input[type=email]").forEach(function (input) {
    input.addEventListener("blur", function () {
      if (pressing) { pending.push(input); } else { check(input); }
    });
  });

  // Confirmations before removing something (forms that upload.js puts
  // in place later included).
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form.matches("form[data-confirm]") && !window.confirm(form.getAttribute("data-confirm"))) { e.preventDefault(); }
  });
})();
