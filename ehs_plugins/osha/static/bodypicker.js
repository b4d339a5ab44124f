/* The case form's body picture (templates/pages/_body_picker.html): shown
   only when this script runs; a region sets the form's own <select> of
   OIICS codes (which stays the field that is posted, and the way to choose
   with a keyboard or a screen reader), and the words written on the forms
   follow the choice while they are still the former choice's title. */
(function () {
  "use strict";

  function setUp(picker) {
    var select = document.getElementById(picker.getAttribute("data-select"));
    var words = document.getElementById(picker.getAttribute("data-text"));
    if (!select) { return; }
    var regions = picker.querySelectorAll("[data-code]");
    var previous = select.value;

    function titleOf(code) {
      for (var i = 0; i < select.options.length; i++) {
        if (select.options[i].value === code && code !== "") { return select.options[i].text; }
      }
      return "";
    }

    function mark() {
      for (var i = 0; i < regions.length; i++) {
        regions[i].classList.toggle("chosen", regions[i].getAttribute("data-code") === select.value);
      }
    }

    function chosen() {
      if (select.value === previous) { mark(); return; }
      if (words) {
        var typed = words.value.trim();
        if (typed === "" || typed === titleOf(previous)) { words.value = titleOf(select.value); }
      }
      previous = select.value;
      mark();
    }

    picker.addEventListener("click", function (event) {
      var region = event.target.closest ? event.target.closest("[data-code]") : null;
      if (!region) { return; }
      select.value = region.getAttribute("data-code");
      chosen();
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    select.addEventListener("change", chosen);
    picker.hidden = false;
    mark();
  }

  function start() {
    var pickers = document.querySelectorAll("[data-body-picker]");
    for (var i = 0; i < pickers.length; i++) { setUp(pickers[i]); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
