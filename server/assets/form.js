// Enhancements of the applicant's form. Everything works without this file:
// it adds upload progress, inline validation and focus on error summaries.
(function () {
  "use strict";

  var summary = document.getElementById("error-summary");
  if (summary) { summary.focus(); }

  // Inline validation: a field's data-pattern is checked when the applicant
  // leaves it; the server checks everything again on save.
  function errorFor(input) {
    var id = input.id + "-inline-error";
    var el = document.getElementById(id);
    if (!el) {
      el = document.createElement("p");
      el.id = id;
      el.className = "error-message";
      el.setAttribute("aria-live", "polite");
      input.parentNode.insertBefore(el, input);
    }
    return el;
  }
  function check(input) {
    var pattern = input.getAttribute("data-pattern");
    var value = input.value.trim();
    var ok = true;
    if (pattern && value !== "") {
      try { ok = new RegExp(pattern).test(value); } catch (e) { ok = true; }
    }
    if (ok && input.type === "email" && value !== "") { ok = /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value); }
    var el = document.getElementById(input.id + "-inline-error");
    if (ok) {
      if (el) { el.remove(); }
      input.removeAttribute("aria-invalid");
      return;
    }
    errorFor(input).textContent = input.getAttribute("data-message") || "Check the format of this answer.";
    input.setAttribute("aria-invalid", "true");
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

  // Confirmations before removing something.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { e.preventDefault(); }
    });
  });

  // Uploads with a progress bar. The server answers the upload with the
  // documents page (after a redirect), which replaces this one.
  document.querySelectorAll("form[data-upload]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      var file = form.querySelector("input[type=file]");
      if (!file || !file.files || file.files.length === 0 || !window.XMLHttpRequest || !window.FormData) { return; }
      e.preventDefault();
      var max = parseInt(form.getAttribute("data-max") || "0", 10);
      if (max > 0 && file.files[0].size > max) {
        errorFor(file).textContent = form.getAttribute("data-max-message");
        file.setAttribute("aria-invalid", "true");
        return;
      }
      var bar = form.querySelector("progress");
      var button = form.querySelector("button[type=submit]");
      if (bar) { bar.hidden = false; bar.value = 0; }
      if (button) { button.disabled = true; }
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.upload.addEventListener("progress", function (ev) {
        if (bar && ev.lengthComputable) { bar.value = Math.round(ev.loaded * 100 / ev.total); }
      });
      xhr.addEventListener("load", function () {
        if (xhr.status === 200 && xhr.responseURL) {
          window.location.assign(xhr.responseURL);
          return;
        }
        document.open();
        document.write(xhr.responseText);
        document.close();
      });
      xhr.addEventListener("error", function () {
        if (button) { button.disabled = false; }
        if (bar) { bar.hidden = true; }
        errorFor(file).textContent = "The upload failed. Check your connection and try again.";
      });
      xhr.send(new FormData(form));
    });
  });
})();
