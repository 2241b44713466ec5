// The page watches its own feed: the screen process pushes the status bar every second over SSE.
// No message for STALE_MS (process dead or hung, socket gone): grey page + "TELA SEM ATUALIZAÇÃO",
// and the status bar no longer claims what it cannot know ("Central: conectada" becomes "sem
// informação") until the feed comes back (the next push replaces the bar).
(function () {
  var STALE_MS = 3000;
  var last = Date.now();
  function beat() { last = Date.now(); check(); }
  function check() {
    var stale = Date.now() - last > STALE_MS;
    document.documentElement.classList.toggle("stale", stale);
    var b = document.getElementById("stale-banner");
    if (b) { b.hidden = !stale; }
    var broker = document.getElementById("st-broker");
    if (stale && broker && broker.dataset.state !== "stale") {
      broker.dataset.state = "stale";
      broker.textContent = broker.dataset.staleText || "?";
      broker.className = "bad";
    }
  }
  document.addEventListener("htmx:sseMessage", beat);
  document.addEventListener("htmx:sseOpen", beat);
  setInterval(check, 500);
})();
