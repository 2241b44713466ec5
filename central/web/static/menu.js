/* portgate office: the menu button on a phone (a disclosure: aria-expanded on the button, the nav
   shown while open). Without this script the menu is simply shown open. Loaded in the head without
   defer: the "js" class is set before the header is drawn (a slow phone never shows the menu open,
   then closes it under the thumb), and one listener on the document answers the button from the
   moment it is shown, before the page's other (deferred) scripts have run. */
(function () {
  document.documentElement.classList.add("js");
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".menu-toggle");
    var nav = document.getElementById("app-menu");
    if (!button || !nav) { return; }
    var open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", open ? "true" : "false");
    nav.classList.toggle("open", open);
  });
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.querySelector(".menu-toggle");
    if (button && document.getElementById("app-menu")) { button.hidden = false; }
  });
})();
