// portgate, the worker's pages: a defence or appeal being typed is kept on this phone (localStorage)
// until the page says it was recorded, so a dropped connection or a refused send loses nothing.
(function () {
  "use strict";
  var store;
  try { store = window.localStorage; } catch (e) { return; }
  if (!store) { return; }
  var saved = document.getElementById("saved");
  document.querySelectorAll("form[data-draft]").forEach(function (form) {
    var key = "portgate-draft-" + form.getAttribute("data-draft");
    var box = form.querySelector("textarea");
    if (!box) { return; }
    if (saved && form.getAttribute("data-draft").indexOf(saved.getAttribute("data-saved") + "-") === 0) {
      store.removeItem(key);
    } else if (!box.value && store.getItem(key)) {
      box.value = store.getItem(key);
    }
    var keep = function () { if (box.value) { store.setItem(key, box.value); } else { store.removeItem(key); } };
    keep();  // typed before this script ran (a slow phone): kept as well
    box.addEventListener("input", keep);
    form.addEventListener("submit", keep);  // the send itself may be the request that is lost
  });
})();

// the escala follows the office: every data-refresh seconds the days are fetched again and put in
// place (no page reload, no lost focus; skipped while the worker types in a form or the page is
// hidden). A meta refresh would reload the whole page under his thumb (WCAG 2.2.1).
(function () {
  "use strict";
  var days = document.getElementById("escala-days");
  if (!days || !window.fetch || !window.DOMParser) { return; }
  var every = parseInt(days.getAttribute("data-refresh"), 10);
  if (!(every > 0)) { return; }
  window.setInterval(function () {
    var active = document.activeElement;
    if (document.hidden || (active && days.contains(active) && /INPUT|TEXTAREA|SELECT/.test(active.tagName))) { return; }
    if (days.querySelector("details[open]")) { return; }
    window.fetch(window.location.href, {credentials: "same-origin"}).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (!html) { return; }
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("escala-days");
      if (fresh && fresh.innerHTML !== days.innerHTML) { days.innerHTML = fresh.innerHTML; }
    }).catch(function () { /* offline: the days shown stay; the next round tries again */ });
  }, every * 1000);
})();
