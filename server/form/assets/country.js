// Country questions as a type-ahead. Without this file each is a plain
// <select> of countries by name, which works everywhere; with it, the
// select is hidden and kept in step with an ARIA 1.2 combobox: type part of
// a name ("ire") or a code ("IE"), pick with the arrow keys and Enter, a
// tap or a click. The select stays in the form and is what is posted.
(function () {
  "use strict";

  var MAX = 8; // suggestions shown at once
  // Names people type that are not the list's: each leads to its country.
  var ALIASES = {
    GB: ["uk", "u.k.", "great britain", "britain", "england", "scotland", "wales", "northern ireland"],
    US: ["usa", "u.s.a.", "u.s.", "america", "united states of america"],
    NL: ["holland", "the netherlands"],
    IE: ["eire", "republic of ireland"]
  };
  var MESSAGE = "Choose a country from the list";

  function norm(s) {
    return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();
  }

  function enhance(select) {
    var options = [].slice.call(select.options).filter(function (o) { return o.value !== ""; })
      .map(function (o) { return { code: o.value, name: o.text, key: norm(o.text), aliases: ALIASES[o.value] || [] }; });
    var id = select.id;
    var input = document.createElement("input");
    var list = document.createElement("ul");
    var wrap = document.createElement("div");
    wrap.className = "combobox";
    select.id = id + "-select";
    select.hidden = true;
    select.setAttribute("aria-hidden", "true");
    select.tabIndex = -1;
    input.id = id;
    input.type = "text";
    input.className = "input--width-20";
    input.autocomplete = "off";
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-controls", id + "-listbox");
    ["aria-describedby", "aria-invalid"].forEach(function (a) {
      if (select.hasAttribute(a)) {
        input.setAttribute(a, select.getAttribute(a));
        select.removeAttribute(a);
      }
    });
    if (select.disabled) { input.readOnly = true; }
    list.id = id + "-listbox";
    list.className = "combobox-list";
    list.setAttribute("role", "listbox");
    list.hidden = true;
    var selected = select.options[select.selectedIndex];
    input.value = selected && selected.value ? selected.text : "";
    select.parentNode.insertBefore(wrap, select);
    wrap.appendChild(input);
    wrap.appendChild(list);
    wrap.appendChild(select);
    var status = document.createElement("div");
    status.className = "visually-hidden";
    status.setAttribute("role", "status");
    wrap.appendChild(status);

    var shown = [];
    var active = -1;
    var moved = false; // the applicant moved through the suggestions

    function choose(o) {
      select.value = o ? o.code : "";
      input.value = o ? o.name : "";
      unmark();
      close();
    }
    // An answer that is no country is kept as typed and marked, as the
    // server's errors are (form.js), so that it is never silently dropped.
    var errorId = id + "-inline-error";
    function mark() { window.onboardErrors.show(input, errorId, MESSAGE, wrap); }
    function unmark() { window.onboardErrors.clear(input, errorId); }
    input.form && input.form.addEventListener("submit", function (e) {
      if (norm(input.value) !== "" && select.value === "") {
        e.preventDefault();
        e.stopImmediatePropagation();
        mark();
        input.focus();
      }
    });
    function close() {
      list.hidden = true;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
      active = -1;
    }
    function highlight(i) {
      active = i;
      [].forEach.call(list.children, function (li, j) { li.setAttribute("aria-selected", j === i ? "true" : "false"); });
      if (i >= 0) {
        input.setAttribute("aria-activedescendant", list.children[i].id);
        list.children[i].scrollIntoView({ block: "nearest" });
      } else {
        input.removeAttribute("aria-activedescendant");
      }
    }
    function suggest() {
      var q = norm(input.value);
      list.textContent = "";
      if (q === "") { close(); return; }
      var exact = [], starts = [], contains = [];
      options.forEach(function (o) {
        if (o.code.toLowerCase() === q || o.key === q || o.aliases.indexOf(q) >= 0) {
          exact.push(o);
        } else if (o.key.indexOf(q) === 0 || o.aliases.some(function (a) { return a.indexOf(q) === 0; })) {
          starts.push(o);
        } else if (o.key.indexOf(q) > 0) {
          contains.push(o);
        }
      });
      shown = exact.concat(starts, contains).slice(0, MAX);
      moved = false;
      shown.forEach(function (o, i) {
        var li = document.createElement("li");
        li.id = id + "-option-" + i;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        li.textContent = o.name;
        // mousedown, not click: it comes before the input's blur.
        li.addEventListener("mousedown", function (e) { e.preventDefault(); choose(o); });
        list.appendChild(li);
      });
      list.hidden = shown.length === 0;
      input.setAttribute("aria-expanded", shown.length ? "true" : "false");
      status.textContent = shown.length ? shown.length + (shown.length === 1 ? " country" : " countries") + " found" : "No country found";
      highlight(shown.length ? 0 : -1);
    }
    // What the applicant typed counts when they leave: a whole name, a
    // code or a common other name ("UK") chooses that country, a
    // suggestion chosen with the arrow keys is taken, nothing clears it,
    // and anything else stays as typed, marked as an error.
    function settle() {
      var q = norm(input.value);
      if (q === "") { choose(null); return; }
      var exact = options.filter(function (o) { return o.key === q || o.code.toLowerCase() === q || o.aliases.indexOf(q) >= 0; })[0];
      if (exact) { choose(exact); return; }
      if (moved && active >= 0 && shown[active]) { choose(shown[active]); return; }
      select.value = "";
      close();
      mark();
    }
    // Enter that chooses a country does not also send the form (some
    // input methods deliver its keypress even after keydown was handled).
    var chose = false;
    input.addEventListener("keypress", function (e) {
      if (e.key === "Enter" && chose) { e.preventDefault(); }
      chose = false;
    });
    input.addEventListener("input", suggest);
    input.addEventListener("blur", settle);
    // A value set on the select from elsewhere (answers put back after a
    // session ended) shows in the input.
    select.addEventListener("change", function () {
      var o = select.options[select.selectedIndex];
      input.value = o && o.value !== "" ? o.text : "";
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        if (list.hidden) { suggest(); return; }
        var n = shown.length;
        if (n) { highlight((active + (e.key === "ArrowDown" ? 1 : n - 1)) % n); moved = true; }
      } else if (e.key === "Enter" && !list.hidden && active >= 0) {
        e.preventDefault();
        chose = true;
        choose(shown[active]);
      } else if (e.key === "Escape") {
        close();
      }
    });
  }

  document.querySelectorAll("select[data-countries]").forEach(enhance);
})();
