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
    box.addEventListener("input", function () { store.setItem(key, box.value); });
  });
})();
