// One-step uploads for the documents of the form and of RFI requests.
// Without this file each document has a file input and an Upload button,
// and the server answers the upload with the whole page. With it,
// choosing a file sends it at once, with a progress bar; the document's
// section is then replaced in place by the server's new version of it
// (with the error summary, the notice and the counts that depend on it),
// so the page keeps its place and the result is announced.
(function () {
  "use strict";
  if (!window.XMLHttpRequest || !window.FormData || !window.DOMParser) { return; }
  document.documentElement.classList.add("uploads");

  // The live region that announces each upload's progress and result.
  var announcer = document.createElement("div");
  announcer.id = "upload-announce";
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  announcer.setAttribute("aria-live", "polite");
  document.body.appendChild(announcer);
  function announce(message) { announcer.textContent = message; }

  // A message about a file, at its section and on its input, styled as
  // the server's errors are (form.js); an uploaded file's hidden chooser
  // shows with it.
  function showSlotError(form, message) {
    var input = form.querySelector("input[type=file]");
    form.classList.remove("replace");
    window.onboardErrors.show(input, input.id + "-error", message, form);
    announce(message);
  }

  // sync puts the server's version of the element id in place of this
  // page's (inserting it before before, or removing it, as the server's
  // page has it or not).
  function sync(fresh, id, before) {
    var mine = document.getElementById(id);
    var theirs = fresh.getElementById(id);
    if (mine && theirs) {
      mine.replaceWith(document.importNode(theirs, true));
    } else if (mine) {
      mine.remove();
    } else if (theirs && before) {
      before.parentNode.insertBefore(document.importNode(theirs, true), before);
    }
  }

  // settle shows the server's answer to an upload from form: its new
  // section, error summary, notice and counts, keeping the section where
  // it was on the screen. It returns false when the answer is not a page
  // with the section (a session that ended, say).
  function settle(form, html) {
    var section = form.closest("section.doc");
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var next = section && fresh.getElementById(section.id);
    if (!next) { return false; }
    var top = section.getBoundingClientRect().top;
    var main = document.getElementById("main");
    // The notice and the summary describe the page as it is now.
    var oldNotice = main.querySelector(":scope > .notice");
    if (oldNotice) { oldNotice.remove(); }
    var newNotice = fresh.querySelector("main > .notice");
    sync(fresh, "error-summary", main.firstElementChild);
    if (newNotice) {
      main.insertBefore(document.importNode(newNotice, true), main.firstElementChild);
    }
    document.querySelectorAll("[data-sync]").forEach(function (el) { sync(fresh, el.id); });
    document.title = fresh.title;
    var placed = document.importNode(next, true);
    section.replaceWith(placed);
    window.scrollBy(0, placed.getBoundingClientRect().top - top);
    var status = placed.querySelector(".error-message") || placed.querySelector(".status[tabindex]");
    if (status) {
      // What a sighted applicant reads ("certificate.pdf, uploaded"),
      // without the link's "(opens in a new tab)".
      var words = status.cloneNode(true);
      words.querySelectorAll("a .visually-hidden").forEach(function (e) { e.remove(); });
      announce(words.textContent.replace(/\s+/g, " ").trim());
      status.setAttribute("tabindex", "-1");
      status.focus({ preventScroll: true });
    }
    return true;
  }

  function send(form) {
    var input = form.querySelector("input[type=file]");
    if (!input || !input.files || input.files.length === 0 || form.hasAttribute("data-uploading")) { return; }
    var file = input.files[0];
    var max = parseInt(form.getAttribute("data-max") || "0", 10);
    if (max > 0 && file.size > max) {
      showSlotError(form, form.getAttribute("data-max-message"));
      input.value = "";
      return;
    }
    var progress = form.querySelector(".progress");
    var bar = progress && progress.querySelector("progress");
    var text = progress && progress.querySelector(".progress-text");
    var section = form.closest("section.doc");
    form.setAttribute("data-uploading", "");
    form.classList.remove("replace");
    if (section) { section.setAttribute("aria-busy", "true"); }
    if (progress) { progress.hidden = false; bar.value = 0; text.textContent = "Uploading " + file.name + "…"; }
    announce("Uploading " + file.name);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.upload.addEventListener("progress", function (ev) {
      if (!progress || !ev.lengthComputable) { return; }
      var pct = Math.round(ev.loaded * 100 / ev.total);
      bar.value = pct;
      text.textContent = "Uploading " + file.name + "… " + pct + "%";
    });
    function done() {
      form.removeAttribute("data-uploading");
      if (section) { section.removeAttribute("aria-busy"); }
      if (progress) { progress.hidden = true; }
    }
    xhr.addEventListener("load", function () {
      done();
      if (settle(form, xhr.responseText)) { return; }
      // Not a documents page: show what the server said, as a plain
      // post would have.
      if (xhr.status === 200 && xhr.responseURL) {
        window.location.assign(xhr.responseURL);
        return;
      }
      document.open();
      document.write(xhr.responseText);
      document.close();
    });
    xhr.addEventListener("error", function () {
      done();
      input.value = "";
      showSlotError(form, "The file was not uploaded. Check your connection and choose the file again.");
    });
    xhr.send(new FormData(form));
  }

  // Choosing a file sends it; so does the Upload button (kept for a
  // keyboard user who submits the form).
  document.addEventListener("change", function (e) {
    var input = e.target;
    if (input.matches && input.matches("form[data-upload] input[type=file]")) { send(input.form); }
  });
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches("form[data-upload]")) { return; }
    e.preventDefault();
    send(form);
  });
  // "Replace" opens the file chooser of its document's hidden upload.
  document.addEventListener("click", function (e) {
    var button = e.target.closest ? e.target.closest("[data-replace]") : null;
    if (!button) { return; }
    var input = document.getElementById(button.getAttribute("data-replace"));
    if (input) { input.click(); }
  });
}());
