/* portgate office: the menu button on a phone (a disclosure: aria-expanded on the button, the nav
   shown while open). Without this script the menu is simply shown open. */
(function () {
  document.documentElement.classList.add("js");
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.querySelector(".menu-toggle");
    var nav = document.getElementById("app-menu");
    if (!button || !nav) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", open ? "true" : "false");
      nav.classList.toggle("open", open);
    });
  });
})();
