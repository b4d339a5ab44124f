// Progressive enhancement for the pages; everything works without it.
// - After htmx swaps a region, focus moves to it and the change is
//   announced, so keyboard and screen-reader users know what happened.
// - Emailed-link pages forget the token from the address bar.
// - The error summary of a refused form takes focus.
// - An empty time-zone picker suggests the browser's zone.
// - On a phone the main menu folds behind a Menu button.
// - The incident page's photos open in a viewer on the page (a native
//   modal dialog: focus stays in it, Escape closes it and focus returns to
//   the photo), with the previous and next photo, also by the arrow keys.
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

  function photoViewer() {
    var viewer = document.getElementById("photo-viewer");
    if (!viewer || typeof viewer.showModal !== "function") { return; }
    var links = Array.prototype.slice.call(document.querySelectorAll("a[data-viewer]"));
    var image = viewer.querySelector("img");
    var caption = viewer.querySelector("figcaption");
    var original = viewer.querySelector("[data-original]");
    var shown = 0;

    function show(index) {
      shown = (index + links.length) % links.length;
      var link = links[shown];
      var preview = link.querySelector("img");
      image.src = link.getAttribute("href");
      image.alt = preview ? preview.alt : "";
      caption.textContent = (preview ? preview.alt : "") + " (" + (shown + 1) + " / " + links.length + ")";
      original.setAttribute("href", link.getAttribute("href"));
      viewer.querySelectorAll("[data-step]").forEach(function (button) { button.hidden = links.length < 2; });
    }

    links.forEach(function (link, index) {
      link.addEventListener("click", function (event) {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || event.button !== 0) { return; }
        event.preventDefault();
        show(index);
        viewer.showModal();
        viewer.querySelector("[data-close]").focus();
      });
    });
    viewer.addEventListener("click", function (event) {
      var step = event.target.closest("[data-step]");
      if (step) { show(shown + Number(step.getAttribute("data-step"))); }
      if (event.target.closest("[data-close]") || event.target === viewer) { viewer.close(); }
    });
    viewer.addEventListener("keydown", function (event) {
      if (event.key === "ArrowRight") { show(shown + 1); }
      if (event.key === "ArrowLeft") { show(shown - 1); }
    });
    viewer.addEventListener("close", function () { image.removeAttribute("src"); links[shown].focus(); });
  }

  // An empty zone picker suggests the browser's own zone (the person sees
  // it chosen and may change it); without JavaScript it stays empty.
  function suggestZone() {
    var zone;
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
    document.querySelectorAll("select[data-suggest-zone]").forEach(function (select) {
      if (select.value) { return; }
      for (var i = 0; i < select.options.length; i++) {
        if (select.options[i].value === zone) { select.value = zone; return; }
      }
    });
  }

  // On a phone the main menu folds behind its Menu button.
  function foldMenu() {
    var toggle = document.querySelector(".menu-toggle");
    var nav = document.getElementById("mainnav");
    if (!toggle || !nav) { return; }
    toggle.hidden = false;
    toggle.closest(".topbar").classList.add("menu-fold");
    function show(open) {
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      nav.classList.toggle("open", open);
    }
    toggle.addEventListener("click", function () { show(toggle.getAttribute("aria-expanded") !== "true"); });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && nav.classList.contains("open")) { show(false); toggle.focus(); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    photoViewer();
    foldMenu();
    suggestZone();
    if (document.querySelector("[data-forget-query]") && window.history && window.history.replaceState) {
      window.history.replaceState(null, "", window.location.pathname);
    }
    var summary = document.getElementById("error-summary");
    if (summary) { summary.focus(); }
  });
})();
