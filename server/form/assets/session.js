// The session's end, without losing what the applicant typed.
//
// A signed-in page says how many seconds its session has left (the
// session-seconds meta). Two minutes before the end (or half of the
// session, when that is shorter) a dialog warns, counts down and offers
// "Stay signed in", which renews the session. If nothing is done, the
// answers on the page are kept in this tab and the page reloads, which
// asks the applicant to confirm their email address again.
//
// Each post of a signed-in page's answers is kept in this tab (sessionStorage, gone
// when the tab closes) until a signed-in page shows that it arrived. If
// the server answers that the session had ended instead, the answers are
// put back on the same page once the applicant has signed in again.
(function () {
  "use strict";
  var KEY = "onboard-unsaved";
  var main = document.getElementById("main");
  var meta = document.querySelector("meta[name=session-seconds]");

  function read() {
    try { return JSON.parse(window.sessionStorage.getItem(KEY)); } catch (e) { return null; }
  }
  function write(d) {
    try { window.sessionStorage.setItem(KEY, JSON.stringify(d)); } catch (e) { /* storage full or off */ }
  }
  function forget() {
    try { window.sessionStorage.removeItem(KEY); } catch (e) { /* storage off */ }
  }

  // A form of answers: a post with something to type or choose, not an
  // upload, a removal or signing out.
  function answers(form) {
    return form.method.toLowerCase() === "post" && !form.hasAttribute("data-upload") &&
      !form.hasAttribute("data-confirm") && !form.classList.contains("sign-out") &&
      form.querySelector("input:not([type=hidden]):not([type=file]), select, textarea") !== null;
  }
  function capture(form, lost) {
    var fields = [];
    new FormData(form).forEach(function (value, name) {
      if (name !== "csrf" && typeof value === "string") { fields.push([name, value]); }
    });
    return { path: window.location.pathname, action: form.getAttribute("action"), fields: fields, lost: lost, at: Date.now() };
  }
  function notice(text, warn) {
    var el = document.createElement("div");
    el.className = "notice" + (warn ? " warn" : "");
    el.setAttribute("role", "status");
    el.id = "unsaved-notice";
    el.textContent = text;
    main.insertBefore(el, main.firstElementChild);
  }

  // restore puts kept answers back into the form they came from.
  function restore(d) {
    var form = null;
    document.querySelectorAll("form").forEach(function (f) {
      if (!form && f.getAttribute("action") === d.action) { form = f; }
    });
    if (!form) { return false; }
    var values = {};
    d.fields.forEach(function (kv) { (values[kv[0]] = values[kv[0]] || []).push(kv[1]); });
    Object.keys(values).forEach(function (name) {
      form.querySelectorAll("[name='" + name.replace(/'/g, "\\'") + "']").forEach(function (el) {
        if (el.type === "hidden" || el.type === "file") { return; }
        if (el.type === "checkbox" || el.type === "radio") {
          el.checked = values[name].indexOf(el.value) >= 0;
        } else {
          el.value = values[name][0];
        }
        el.dispatchEvent(new Event("change", { bubbles: true }));
      });
    });
    return true;
  }

  // What each form of answers held when the page opened, to tell whether
  // the applicant changed anything.
  var opened = [].filter.call(document.forms, answers).map(function (f) { return JSON.stringify(capture(f, false).fields); });

  var kept = read();
  if (kept && Date.now() - kept.at > 24 * 3600 * 1000) { forget(); kept = null; }
  if (document.querySelector("[data-session-ended]")) {
    // The post did not arrive: keep its answers for after signing in.
    if (kept) {
      kept.lost = true;
      write(kept);
      var p = document.createElement("p");
      p.textContent = "What you entered has been kept in this browser tab. It will be put back on the page once you have confirmed your email address.";
      document.querySelector("[data-session-ended]").after(p);
    }
  } else if (meta && kept) {
    if (!kept.lost) {
      forget(); // the post arrived
    } else if (kept.path === window.location.pathname) {
      forget();
      if (restore(kept)) {
        notice("You were signed out before your answers on this page were saved. We have put back what you entered: check it, then save.", true);
      }
    } else if (/[?&]done=verified(&|$)/.test(window.location.search)) {
      window.location.replace(kept.path); // back to where the answers were
    }
  } else if (kept && kept.lost && document.getElementById("send-code")) {
    notice("You have been signed out. Confirm your email address to continue: what you entered has been kept in this browser tab.", true);
  }

  if (!meta) { return; } // not signed in: nothing to keep or warn of

  document.addEventListener("submit", function (e) {
    if (!e.defaultPrevented && answers(e.target)) { write(capture(e.target, false)); }
  });

  // The timeout warning.
  var seconds = parseInt(meta.getAttribute("content"), 10);
  var keepalive = meta.getAttribute("data-keepalive");
  var csrf = document.querySelector("meta[name=csrf-token]");
  var deadline = 0, warnTimer = 0, tickTimer = 0, dialog = null, count = null, opener = null;
  function lead(total) { return Math.min(120, Math.floor(total / 2)); }
  function schedule(total) {
    deadline = Date.now() + total * 1000;
    window.clearTimeout(warnTimer);
    warnTimer = window.setTimeout(warn, (total - lead(total)) * 1000);
  }
  function left() {
    var s = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    if (s > 60) { return Math.ceil(s / 60) + " minutes"; }
    return s === 1 ? "1 second" : s + " seconds";
  }
  function build() {
    dialog = document.createElement("dialog");
    dialog.id = "timeout-warning";
    dialog.className = "timeout";
    dialog.setAttribute("aria-labelledby", "timeout-title");
    dialog.setAttribute("aria-describedby", "timeout-text");
    var h = document.createElement("h2");
    h.id = "timeout-title";
    h.textContent = "You will be signed out soon";
    var p = document.createElement("p");
    p.id = "timeout-text";
    p.appendChild(document.createTextNode("To protect your information, you will be signed out in "));
    count = document.createElement("strong");
    p.appendChild(count);
    p.appendChild(document.createTextNode(". Anything you have not saved is kept in this browser tab."));
    var stay = document.createElement("button");
    stay.type = "button";
    stay.className = "primary";
    stay.id = "stay-signed-in";
    stay.textContent = "Stay signed in";
    stay.addEventListener("click", staySignedIn);
    dialog.appendChild(h);
    dialog.appendChild(p);
    dialog.appendChild(stay);
    // Escape means "stay", as the only choice the dialog offers.
    dialog.addEventListener("cancel", function (e) { e.preventDefault(); staySignedIn(); });
    document.body.appendChild(dialog);
  }
  function warn() {
    if (!dialog) { build(); }
    opener = document.activeElement;
    count.textContent = left();
    if (typeof dialog.showModal === "function") { dialog.showModal(); } else { dialog.setAttribute("open", ""); }
    window.clearInterval(tickTimer);
    tickTimer = window.setInterval(function () {
      if (Date.now() >= deadline) { expire(); return; }
      count.textContent = left();
    }, 1000);
  }
  function close() {
    window.clearInterval(tickTimer);
    if (dialog.open) { if (typeof dialog.close === "function") { dialog.close(); } else { dialog.removeAttribute("open"); } }
    if (opener && opener.focus) { opener.focus(); }
  }
  function staySignedIn() {
    var body = new URLSearchParams();
    body.set("csrf", csrf ? csrf.getAttribute("content") : "");
    fetch(keepalive, { method: "POST", body: body, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (text) {
        close();
        schedule(parseInt(text, 10) || seconds);
      })
      .catch(expire);
  }
  // expire keeps the page's answers, then reloads it: the server, whose
  // session has ended too, asks the applicant to sign in again.
  function expire() {
    window.clearInterval(tickTimer);
    [].filter.call(document.forms, answers).forEach(function (f, i) {
      var now = capture(f, true);
      if (JSON.stringify(now.fields) !== opened[i]) { write(now); }
    });
    window.location.reload();
  }
  schedule(seconds);
}());
