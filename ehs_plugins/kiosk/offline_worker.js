// The service worker of a reporting link's page (offline.py serves it, with
// ASSETS and VERSION above this line). Its scope is one link's page: it keeps
// a copy of that page and of the files the page loads, so the page opens
// again without a network. The page is asked from the network first (a
// changed or revoked link shows at once) and the copy is used only when the
// network fails; the page's files are answered from the copy. Nothing else
// passes through the copy: the API's answers (a link's reports, anyone's
// data) are never kept. Reports typed offline wait in the page's outbox
// (kiosk.js), not here.
/* global ASSETS, VERSION */
"use strict";
var SCOPE = self.registration.scope;  // the link's page, without a query
var PREFIX = "ehs-kiosk:" + SCOPE + ":";
var CACHE = PREFIX + VERSION;

function withoutHash(url) { return url.split("#")[0]; }
function isPage(url) {
  url = withoutHash(url);
  return url === SCOPE || url.indexOf(SCOPE + "?") === 0;
}
function keep(cache, url) {
  return fetch(url, { credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store" })
    .then(function (response) { return response.ok ? cache.put(url, response) : null; });
}

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    var files = ASSETS.map(function (path) { return new Request(path, { cache: "reload" }); });
    return cache.addAll(files).then(function () {
      return self.clients.matchAll({ type: "window", includeUncontrolled: true });
    }).then(function (windows) {
      var pages = [SCOPE];
      windows.forEach(function (w) {
        var url = withoutHash(w.url);
        if (isPage(url) && pages.indexOf(url) < 0) { pages.push(url); }
      });
      return Promise.all(pages.map(function (url) { return keep(cache, url); }));
    });
  }).then(function () { return self.skipWaiting(); }));
});

// An older version's copy goes; the open page is served from now on.
self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) {
      return name.indexOf(PREFIX) === 0 && name !== CACHE;
    }).map(function (name) { return caches.delete(name); }));
  }).then(function () { return self.clients.claim(); }));
});

// A link that no longer works keeps nothing on the device (and this worker,
// until the page is closed, answers nothing more from a copy).
var forgotten = false;
function forget() {
  forgotten = true;
  return caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) { return name.indexOf(PREFIX) === 0; })
      .map(function (name) { return caches.delete(name); }));
  }).then(function () { return self.registration.unregister(); });
}

function kept(url) {
  return caches.open(CACHE).then(function (cache) {
    return cache.match(url).then(function (hit) { return hit || cache.match(SCOPE); });
  });
}

function page(event) {
  var url = withoutHash(event.request.url);
  return fetch(event.request).then(function (response) {
    if (response.ok) {
      var copy = response.clone();
      event.waitUntil(caches.open(CACHE).then(function (cache) { return cache.put(url, copy); }));
    } else if (response.status === 404) {
      event.waitUntil(forget());
    } else if (response.status >= 500) {  // a proxy whose server is away: no network either
      return kept(url).then(function (hit) { return hit || response; });
    }
    return response;
  }, function () {
    return kept(url).then(function (hit) { return hit || Response.error(); });
  });
}

function asset(event) {
  return caches.open(CACHE).then(function (cache) {
    return cache.match(event.request).then(function (hit) {
      return hit || fetch(event.request).then(function (response) {
        if (response.ok) { cache.put(event.request, response.clone()); }
        return response;
      });
    });
  });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (forgotten || request.method !== "GET") { return; }
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) { return; }
  if (request.mode === "navigate" && isPage(request.url)) {
    event.respondWith(page(event));
  } else if (ASSETS.indexOf(url.pathname) >= 0 && !url.search) {
    event.respondWith(asset(event));
  }
});
