// The poster's print button (printing from the browser's menu works as well).
(function () {
  "use strict";
  var button = document.getElementById("print-poster");
  if (!button) { return; }
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
})();
