// Kiosk report page. The typed report is kept in localStorage until the
// server confirms it, so a network failure loses nothing; every attempt of
// one report sends the same clientId, so a retry never files it twice.
(function () {
  "use strict";
  var form = document.getElementById("report");
  var statusBox = document.getElementById("status");
  var token = form.getAttribute("data-token");
  var draftKey = "ehs-kiosk-draft:" + token.slice(0, 12);
  var fields = ["title", "type", "severity", "occurredAt", "siteId", "areaId", "locationDetail",
                "description", "immediateAction", "reporterName"];

  function uuid() {
    if (window.crypto && crypto.randomUUID) { return crypto.randomUUID(); }
    var b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function localNow() {
    var d = new Date();
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + "T" + pad(d.getHours()) + ":" + pad(d.getMinutes());
  }
  // datetime-local has no zone: add the device's offset so the server gets an instant.
  function withOffset(value) {
    var d = new Date(value);
    var minutes = -d.getTimezoneOffset();
    var sign = minutes >= 0 ? "+" : "-";
    minutes = Math.abs(minutes);
    return value + (value.length === 16 ? ":00" : "") + sign + pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
  }
  function loadDraft() {
    try { return JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (e) { return null; }
  }
  function saveDraft() {
    var draft = loadDraft() || { clientId: uuid() };
    fields.forEach(function (name) { draft[name] = form.elements[name].value; });
    try { localStorage.setItem(draftKey, JSON.stringify(draft)); } catch (e) { /* private mode */ }
    return draft;
  }
  function filterAreas() {
    var site = form.elements.siteId.value;
    Array.prototype.forEach.call(form.elements.areaId.options, function (option) {
      var own = option.getAttribute("data-site");
      option.hidden = own !== null && own !== site;
      if (option.hidden && option.selected) { form.elements.areaId.value = ""; }
    });
  }
  function say(text, isError) {
    statusBox.textContent = text;
    statusBox.className = isError ? "error" : "";
  }

  var draft = loadDraft();
  if (draft) {
    fields.forEach(function (name) { if (draft[name]) { form.elements[name].value = draft[name]; } });
    say("Your unsent report was restored.");
  }
  if (!form.elements.occurredAt.value) { form.elements.occurredAt.value = localNow(); }
  filterAreas();
  form.elements.siteId.addEventListener("change", filterAreas);
  form.addEventListener("input", saveDraft);

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!form.elements.title.value.trim() || !form.elements.siteId.value || !form.elements.occurredAt.value) {
      say("Please give a title, a site and when it happened.", true);
      return;
    }
    var photos = form.elements.photos.files;
    if (photos.length > 5) { say("Please choose at most 5 photos.", true); return; }
    var current = saveDraft();
    var report = {
      clientId: current.clientId,
      title: current.title.trim(),
      type: current.type,
      severity: current.severity,
      occurredAt: withOffset(current.occurredAt),
      siteId: parseInt(current.siteId, 10),
      areaId: current.areaId ? parseInt(current.areaId, 10) : null,
      locationDetail: current.locationDetail || null,
      description: current.description || null,
      immediateAction: current.immediateAction || null,
      reporterName: current.reporterName.trim() || null
    };
    var body = new FormData();
    body.append("report", JSON.stringify(report));
    Array.prototype.forEach.call(photos, function (file) { body.append("files", file, file.name); });
    var button = document.getElementById("send");
    button.disabled = true;
    say("Sending…");
    fetch("/api/kiosk/reports", {
      method: "POST", body: body, credentials: "omit", headers: { "X-Kiosk-Token": token }
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, status: response.status, data: data }; });
    }).then(function (result) {
      button.disabled = false;
      if (!result.ok) {
        var issues = (result.data.issues || []).map(function (i) { return i.path + ": " + i.message; });
        say([result.data.error || "The report was not accepted."].concat(issues).join(" "), true);
        return;
      }
      localStorage.removeItem(draftKey);
      form.hidden = true;
      say("");
      document.getElementById("reference").textContent = result.data.reference;
      var failed = result.data.failedFiles || [];
      document.getElementById("failed-files").textContent = failed.length
        ? "These files could not be attached: " + failed.map(function (f) { return f.name + " (" + f.error + ")"; }).join(", ")
        : "";
      document.getElementById("done").hidden = false;
    }).catch(function () {
      button.disabled = false;
      say("The network failed. Your report is kept on this device; press Send report to try again.", true);
    });
  });

  document.getElementById("another").addEventListener("click", function () {
    window.location.reload();
  });
})();
