// Kiosk report page. The typed report is kept until the server confirms
// it, so a network failure loses nothing; every attempt of one report sends
// the same clientId, so a retry never files it twice.
// A link often runs on a shared tablet: the draft lives in this window only
// (sessionStorage) and for the idle time the page names (data-idle-seconds)
// without typing, after which the form is cleared; "Start over" and a sent
// report clear it too, and a draft found when the page opens is restored
// only when the person asks for it.
(function () {
  "use strict";
  var form = document.getElementById("report");
  var statusBox = document.getElementById("status");
  var token = form.getAttribute("data-token");
  var draftKey = "ehs-kiosk-draft:" + token.slice(0, 12);
  var idleMs = parseInt(form.getAttribute("data-idle-seconds"), 10) * 1000;
  var offer = document.getElementById("draft-offer");
  var idleTimer = null;
  var fields = ["title", "type", "severity", "occurredAt", "siteId", "areaId", "locationDetail",
                "description", "immediateAction", "reporterName"];
  var words = document.getElementById("words").dataset;
  var summary = document.getElementById("error-summary");
  var errorList = document.getElementById("error-list");
  // Where the server's issue paths are answered on the page.
  var FIELD_OF = { files: "photos", clientId: null, report: null, anonymous: "reporterName" };

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
  function forgetDraft() {
    try { sessionStorage.removeItem(draftKey); } catch (e) { /* storage refused */ }
  }
  // The draft of this window, unless the idle time has passed since it was typed.
  function loadDraft() {
    var draft;
    try { draft = JSON.parse(sessionStorage.getItem(draftKey) || "null"); } catch (e) { return null; }
    if (draft && !(Date.now() - (draft.savedAt || 0) < idleMs)) {
      forgetDraft();
      return null;
    }
    return draft;
  }
  function saveDraft() {
    var draft = loadDraft() || { clientId: uuid() };
    fields.forEach(function (name) { draft[name] = form.elements[name].value; });
    draft.savedAt = Date.now();
    try { sessionStorage.setItem(draftKey, JSON.stringify(draft)); } catch (e) { /* private mode */ }
    return draft;
  }
  // An empty form, as the page came, and no draft.
  function startOver(message) {
    clearTimeout(idleTimer);
    forgetDraft();
    offer.hidden = true;
    form.reset();
    form.elements.occurredAt.value = localNow();
    filterAreas();
    clearErrors();
    say(message || "");
  }
  // Typing keeps the draft and starts the idle time again.
  function typed() {
    if (!offer.hidden) {  // a new report, not the one found: that one goes
      forgetDraft();
      offer.hidden = true;
    }
    saveDraft();
    clearTimeout(idleTimer);
    idleTimer = setTimeout(function () { startOver(words.cleared); }, idleMs);
  }
  function filterAreas() {
    var site = form.elements.siteId.value;
    Array.prototype.forEach.call(form.elements.areaId.options, function (option) {
      var own = option.getAttribute("data-site");
      option.hidden = own !== null && own !== site;
      if (option.hidden && option.selected) { form.elements.areaId.value = ""; }
    });
  }
  function fieldOf(path) {
    var name = String(path || "").split(".")[0];
    if (Object.prototype.hasOwnProperty.call(FIELD_OF, name)) { return FIELD_OF[name]; }
    return document.getElementById(name + "-error") ? name : null;
  }
  function labelOf(name) {
    var label = document.querySelector("label[for='" + name + "']");
    return label ? label.firstChild.textContent.trim() : name;
  }
  // The API's words for a missing value, said as a person would.
  function plain(message) {
    return message === "Required" ? words.required : message;
  }
  function clearErrors() {
    Array.prototype.forEach.call(form.querySelectorAll(".field-error"), function (p) {
      p.hidden = true; p.textContent = "";
      var input = document.getElementById(p.id.replace(/-error$/, ""));
      input.removeAttribute("aria-invalid"); input.removeAttribute("aria-describedby");
      input.closest(".field").classList.remove("has-error");
    });
    errorList.textContent = "";
    summary.hidden = true;
  }
  // Each error beside its field (and listed, linked, at the top); errors
  // about no field stand in the status line.
  function showErrors(errors, general) {
    clearErrors();
    errors.forEach(function (error) {
      var name = fieldOf(error.path);
      var item = document.createElement("li");
      if (name) {
        var p = document.getElementById(name + "-error");
        var input = document.getElementById(name);
        if (!p.hidden) { return; }
        p.textContent = plain(error.message);
        p.hidden = false;
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", p.id);
        input.closest(".field").classList.add("has-error");
        var a = document.createElement("a");
        a.href = "#" + name;
        a.textContent = labelOf(name) + ": " + plain(error.message);
        item.appendChild(a);
      } else {
        item.textContent = plain(error.message);
      }
      errorList.appendChild(item);
    });
    say(general || "", Boolean(general));
    if (errorList.children.length) {
      summary.hidden = false;
      summary.focus();
    }
  }

  function say(text, isError) {
    statusBox.textContent = text;
    statusBox.className = isError ? "error" : "";
  }

  // Drafts of earlier versions of this page were kept in localStorage for good.
  try { localStorage.removeItem(draftKey); } catch (e) { /* storage refused */ }
  if (loadDraft()) { offer.hidden = false; }
  document.getElementById("draft-continue").addEventListener("click", function () {
    var draft = loadDraft();
    offer.hidden = true;
    if (!draft) { startOver(words.cleared); return; }
    fields.forEach(function (name) { if (draft[name]) { form.elements[name].value = draft[name]; } });
    filterAreas();
    say(words.restored);
    clearTimeout(idleTimer);
    idleTimer = setTimeout(function () { startOver(words.cleared); }, idleMs);
    form.elements.title.focus();
  });
  document.getElementById("draft-discard").addEventListener("click", function () {
    startOver("");
    form.elements.title.focus();
  });
  document.getElementById("start-over").addEventListener("click", function () {
    startOver(words.startedOver);
    form.elements.title.focus();
  });
  if (!form.elements.occurredAt.value) { form.elements.occurredAt.value = localNow(); }
  filterAreas();
  form.elements.siteId.addEventListener("change", filterAreas);
  form.addEventListener("input", typed);

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var missing = [];
    if (!form.elements.title.value.trim()) { missing.push({ path: "title", message: words.required }); }
    if (!form.elements.occurredAt.value) { missing.push({ path: "occurredAt", message: words.when }); }
    if (!form.elements.siteId.value) { missing.push({ path: "siteId", message: words.chooseSite }); }
    var photos = form.elements.photos.files;
    if (photos.length > 5) { missing.push({ path: "files", message: words.tooMany }); }
    if (missing.length) { showErrors(missing); return; }
    clearErrors();
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
    say(words.sending);
    fetch("/api/kiosk/reports", {
      method: "POST", body: body, credentials: "omit", headers: { "X-Kiosk-Token": token }
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, status: response.status, data: data }; });
    }).then(function (result) {
      button.disabled = false;
      if (!result.ok) {
        var issues = result.data.issues || [];
        // Issues that name a field stand beside it; a refusal without
        // issues (too many reports, too large) is said in the status line.
        showErrors(issues, issues.length ? "" : (result.data.error || words.refused));
        return;
      }
      clearTimeout(idleTimer);
      forgetDraft();
      form.hidden = true;
      say("");
      document.getElementById("reference").textContent = result.data.reference;
      var failed = result.data.failedFiles || [];
      document.getElementById("failed-files").textContent = failed.length
        ? words.failedFiles + " " + failed.map(function (f) { return f.name + " (" + f.error + ")"; }).join(", ")
        : "";
      document.getElementById("done").hidden = false;
      document.getElementById("done-title").focus();
    }).catch(function () {
      button.disabled = false;
      say(words.offline, true);
    });
  });

  document.getElementById("another").addEventListener("click", function () {
    window.location.reload();
  });
})();
