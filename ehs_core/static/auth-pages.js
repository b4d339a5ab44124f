// Emailed-link pages: take the token from the link, forget it from the
// address bar, and send it by POST only when the person presses the button.
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.search);
  var token = params.get("token") || "";
  if (window.history && window.history.replaceState) {
    window.history.replaceState(null, "", window.location.pathname);
  }
  var form = document.querySelector("form[data-endpoint]");
  var status = document.getElementById("status");
  if (!form) { return; }
  if (!token) {
    status.textContent = "This link has no token. Open the link from your email again.";
    form.querySelector("button").disabled = true;
    return;
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = { token: token };
    var password = document.getElementById("new-password");
    if (password) {
      if (password.value !== document.getElementById("confirm-password").value) {
        status.textContent = "The two passwords differ.";
        return;
      }
      body.newPassword = password.value;
    }
    var button = form.querySelector("button");
    button.disabled = true;
    status.textContent = "Working…";
    fetch(form.getAttribute("data-endpoint"), {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, data: data }; });
    }).then(function (result) {
      if (result.ok) {
        status.textContent = "Done. You are signed in.";
        window.location.assign("/");
        return;
      }
      var issues = (result.data.issues || []).map(function (i) { return i.message; });
      status.textContent = [result.data.error].concat(issues).join(" ");
      button.disabled = false;
    }).catch(function () {
      status.textContent = "The network failed; please try again.";
      button.disabled = false;
    });
  });
})();
