// Kiosk report page. The typed report is kept until the server confirms
// it, so a network failure loses nothing; every attempt of one report sends
// the same clientId, so a retry never files it twice (the server answers a
// repeat with the first reference and attaches no photo again).
// A report sent is first put in the device's outbox (IndexedDB, with its
// photos and clientId): sent at once when the network works, else it waits
// there ("Waiting to send") and goes when the network returns (the page
// tries when it opens, when the browser says it is online, and every 30
// seconds), then leaves the device as soon as the server confirms it ("Sent
// as INC-0042"). The outbox is not a draft: nobody can read it back on the
// page, which shows only how many reports wait. The service worker
// (offline_worker.js) lets the page open again without a network.
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

  // --- the outbox ----------------------------------------------------------------------------
  var outboxBox = document.getElementById("outbox");
  var queuedBox = document.getElementById("queued");
  var doneBox = document.getElementById("done");
  var RETRY_MS = 30 * 1000;
  var inFlight = {};   // clientId → true while this page sends it
  var held = {};       // clientId → true: refused, waits for the form to be free
  var shownId = null;  // the report whose "Waiting to send" is shown
  var sentRefs = [];

  var outbox = (function () {
    var STORE = "reports";
    function open() {
      return new Promise(function (resolve, reject) {
        if (!window.indexedDB) { reject(new Error("no IndexedDB")); return; }
        var request = indexedDB.open("ehs-kiosk-outbox", 1);
        request.onupgradeneeded = function () {
          request.result.createObjectStore(STORE, { keyPath: "clientId" });
        };
        request.onsuccess = function () { resolve(request.result); };
        request.onerror = function () { reject(request.error); };
      });
    }
    function run(mode, work) {
      return open().then(function (db) {
        return new Promise(function (resolve, reject) {
          var tx = db.transaction(STORE, mode);
          var request = work(tx.objectStore(STORE));
          tx.oncomplete = function () { db.close(); resolve(request ? request.result : undefined); };
          tx.onerror = tx.onabort = function () { db.close(); reject(tx.error); };
        });
      });
    }
    return {
      put: function (entry) { return run("readwrite", function (store) { return store.put(entry); }); },
      remove: function (id) { return run("readwrite", function (store) { return store.delete(id); }); },
      // This link's reports only: another link's token is not this page's to use.
      all: function () {
        return run("readonly", function (store) { return store.getAll(); }).then(function (entries) {
          return (entries || []).filter(function (entry) { return entry.token === token; });
        });
      }
    };
  })();

  function showOutbox(waiting) {
    var parts = [];
    if (waiting) { parts.push(words.waiting.replace("{count}", String(waiting))); }
    sentRefs.forEach(function (reference) { parts.push(words.sentAs.replace("{reference}", reference)); });
    outboxBox.textContent = parts.join(" ");
  }
  function countOutbox() {
    return outbox.all().then(function (entries) { showOutbox(entries.length); return entries; },
                             function () { return []; });
  }

  // One attempt: {ok, status, data}, or a rejection when the network fails.
  function post(entry) {
    var body = new FormData();
    body.append("report", JSON.stringify(entry.report));
    entry.files.forEach(function (file) { body.append("files", file.blob, file.name); });
    return fetch("/api/kiosk/reports", {
      method: "POST", body: body, credentials: "omit", headers: { "X-Kiosk-Token": token }
    }).then(function (response) {
      return response.json().then(function (data) {
        return { ok: response.ok, status: response.status, data: data };
      }, function () { return { ok: false, status: response.status, data: {} }; });
    });
  }
  // Worth another try later: no answer, the server (or a proxy before it)
  // failing, or the link's cap of reports reached.
  function transient(status) { return status >= 500 || status === 429 || status === 408; }

  function showDone(data) {
    clearTimeout(idleTimer);
    form.hidden = true;
    queuedBox.hidden = true;
    shownId = null;
    say("");
    document.getElementById("reference").textContent = data.reference;
    var failed = data.failedFiles || [];
    document.getElementById("failed-files").textContent = failed.length
      ? words.failedFiles + " " + failed.map(function (f) { return f.name + " (" + f.error + ")"; }).join(", ")
      : "";
    showFollowUp(data.followUpCode);
    doneBox.hidden = false;
    document.getElementById("done-title").focus();
  }
  // A report without a name: its follow-up code, shown this once (the
  // service keeps only a hash of it), with the page that uses it and that
  // page's QR code. Only on the report's own thanks screen: a report the
  // outbox sends after its screen was left shows only its reference (the
  // next person at a shared tablet must not get someone else's code).
  function showFollowUp(code) {
    var box = document.getElementById("follow-up");
    var qr = document.getElementById("follow-up-qr");
    if (!code) { box.hidden = true; qr.removeAttribute("src"); return; }
    var address = window.location.origin + "/f/" + code;
    document.getElementById("follow-up-code").textContent = code;
    var link = document.getElementById("follow-up-link");
    link.href = address;
    link.textContent = address;
    qr.src = "/f/" + code + "/qr.svg";
    box.hidden = false;
  }
  function showQueued(entry) {
    clearTimeout(idleTimer);
    forgetDraft();
    form.hidden = true;
    doneBox.hidden = true;
    shownId = entry.clientId;
    say("");
    queuedBox.hidden = false;
    document.getElementById("queued-title").focus();
  }
  function showForm() {
    queuedBox.hidden = true;
    doneBox.hidden = true;
    shownId = null;
    form.hidden = false;
  }
  // A report the server refused for good, back in the form with its errors
  // (when nobody is typing another one), no longer on the device.
  function giveBack(entry, result) {
    if (!form.hidden && form.elements.title.value) { held[entry.clientId] = true; return Promise.resolve(); }
    return outbox.remove(entry.clientId).then(function () {
      showForm();
      startOver("");
      var report = entry.report;
      fields.forEach(function (name) {
        var value = report[name];
        if (name === "occurredAt" && value) { value = String(value).slice(0, 16); }
        form.elements[name].value = value === null || value === undefined ? "" : String(value);
      });
      filterAreas();
      try {
        var transfer = new DataTransfer();
        entry.files.forEach(function (file) {
          transfer.items.add(new File([file.blob], file.name, { type: file.blob.type }));
        });
        form.elements.photos.files = transfer.files;
      } catch (e) { /* the photos cannot be put back here */ }
      typed();
      var issues = (result.data && result.data.issues) || [];
      showErrors(issues, words.returned + (issues.length ? "" : " " + (result.data.error || words.refused)));
    });
  }

  // Send what waits, one report at a time; stop at the first that cannot go.
  var flushing = false;
  function flush() {
    if (flushing) { return Promise.resolve(); }
    flushing = true;
    return countOutbox().then(function (entries) {
      var next = function (i) {
        if (i >= entries.length) { return null; }
        var entry = entries[i];
        if (inFlight[entry.clientId] || held[entry.clientId]) { return next(i + 1); }
        return deliver(entry).then(function (gone) { return gone === false ? null : next(i + 1); });
      };
      return next(0);
    }).then(function () { flushing = false; return countOutbox(); },
            function () { flushing = false; return countOutbox(); });
  }
  // Resolves false when the network (or the server) is still unavailable.
  function deliver(entry) {
    inFlight[entry.clientId] = true;
    return post(entry).then(function (result) {
      delete inFlight[entry.clientId];
      if (result.ok) {
        return outbox.remove(entry.clientId).then(function () {
          sentRefs.push(result.data.reference);
          if (shownId === entry.clientId) { showDone(result.data); }
          return true;
        });
      }
      if (transient(result.status)) { return false; }
      return giveBack(entry, result).then(function () { return true; });
    }, function () {
      delete inFlight[entry.clientId];
      return false;
    });
  }

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
    var entry = {
      clientId: current.clientId,
      token: token,
      queuedAt: Date.now(),
      report: {
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
      },
      files: Array.prototype.map.call(photos, function (file) { return { name: file.name, blob: file }; })
    };
    var button = document.getElementById("send");
    button.disabled = true;
    say(words.sending);
    // Kept on the device before the first attempt: a page closed while
    // sending loses nothing either (the repeat files nothing twice).
    outbox.put(entry).then(function () { return true; }, function () { return false; }).then(function (kept) {
      inFlight[entry.clientId] = true;
      return post(entry).then(function (result) {
        delete inFlight[entry.clientId];
        button.disabled = false;
        if (result.ok) {
          forgetDraft();
          return (kept ? outbox.remove(entry.clientId) : Promise.resolve()).then(function () {
            showDone(result.data);
            return countOutbox();
          });
        }
        if (kept && transient(result.status) && result.status !== 429) {
          showQueued(entry);
          return countOutbox();
        }
        if (kept) { outbox.remove(entry.clientId).then(countOutbox, countOutbox); }
        var issues = result.data.issues || [];
        // Issues that name a field stand beside it; a refusal without
        // issues (too many reports, too large) is said in the status line.
        showErrors(issues, issues.length ? "" : (result.data.error || words.refused));
        return null;
      }, function () {
        delete inFlight[entry.clientId];
        button.disabled = false;
        if (!kept) { say(words.offline, true); return null; }
        showQueued(entry);
        return countOutbox();
      });
    });
  });

  document.getElementById("print-code").addEventListener("click", function () {
    window.print();
  });

  document.getElementById("another").addEventListener("click", function () {
    window.location.reload();
  });
  document.getElementById("another-queued").addEventListener("click", function () {
    showForm();
    startOver("");
    form.elements.title.focus();
  });

  window.addEventListener("online", flush);
  setInterval(flush, RETRY_MS);
  flush();

  // The page opens again without a network once its worker keeps it.
  if ("serviceWorker" in navigator) {
    var ready = function () {
      if (navigator.serviceWorker.controller) { document.getElementById("offline-ready").hidden = false; }
    };
    navigator.serviceWorker.addEventListener("controllerchange", ready);
    navigator.serviceWorker.register(form.getAttribute("data-worker"), { scope: form.getAttribute("data-scope") })
      .then(ready, function () { /* the page still works while online */ });
  }
})();
