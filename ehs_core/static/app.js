// Progressive enhancement for the pages; everything works without it.
// - After htmx swaps a region, focus moves to it and the change is
//   announced, so keyboard and screen-reader users know what happened.
// - Emailed-link pages forget the token from the address bar.
// - The error summary of a refused form takes focus.
(function () {
  "use strict";
  var announcer = document.getElementById("announcer");

  function announce(text) {
    if (!announcer || !text) { return; }
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    var region = event.detail.target;
    if (!region) { return; }
    // After an outerHTML swap the target is the element that was replaced;
    // its successor carries the same id.
    if (!region.isConnected && region.id) { region = document.getElementById(region.id); }
    if (!region) { return; }
    var focusable = region.querySelector("[data-focus]") || region;
    if (!focusable.hasAttribute("tabindex") && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(focusable.tagName)) {
      focusable.setAttribute("tabindex", "-1");
    }
    if (!region.hasAttribute("data-keep-focus")) { focusable.focus({ preventScroll: false }); }
    var said = region.querySelector("[data-announce]");
    announce(said ? said.getAttribute("data-announce") : region.getAttribute("data-announce"));
  });

  document.addEventListener("htmx:responseError", function () {
    announce(document.documentElement.getAttribute("data-error-text") || "Something went wrong; please try again.");
  });

  document.addEventListener("DOMContentLoaded", function () {
    if (document.querySelector("[data-forget-query]") && window.history && window.history.replaceState) {
      window.history.replaceState(null, "", window.location.pathname);
    }
    var summary = document.getElementById("error-summary");
    if (summary) { summary.focus(); }
  });
})();
