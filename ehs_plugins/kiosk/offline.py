"""The reporting link as an installable web app that opens without a network
(issue #39 item 2): a web app manifest per link, whose scope is that link's
page alone, and one service worker script for every link, registered by the
page with the link's page as its scope.

The worker (offline_worker.js, outside static/: served only by `worker`)
keeps a copy of the link's page and of the files the page loads, and
nothing else: the API's answers never pass through its cache. The reports
typed while offline wait in the page's own outbox (IndexedDB, kiosk.js),
not in the worker. This module only names the
files to keep and serves the worker with a version that changes when any of
them changes, so a deployment replaces what devices keep."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pyramid.httpexceptions import HTTPNotFound
from pyramid.i18n import TranslationStringFactory
from pyramid.path import AssetResolver
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config

from ehs_plugins.kiosk.security import active_link

_ = TranslationStringFactory("ehs_kiosk")

WORKER = "ehs_plugins.kiosk:offline_worker.js"
# What the link's page loads (templates/_kiosk_base.html, report.html), kept by
# the worker so that the page opens again without a network.
ASSETS = ("ehs_core:static/app.css", "ehs_plugins.kiosk:static/kiosk.css",
          "ehs_plugins.kiosk:static/kiosk.js", "ehs_plugins.kiosk:static/icons/icon-192.png",
          "ehs_plugins.kiosk:static/icons/icon-512.png")
ICONS = (("ehs_plugins.kiosk:static/icons/icon-192.png", "192x192"),
         ("ehs_plugins.kiosk:static/icons/icon-512.png", "512x512"))
THEME = "#14213d"  # the top bar's colour (app.css)


def _read(spec: str) -> bytes:
    with open(AssetResolver().resolve(spec).abspath(), "rb") as handle:
        return handle.read()


def _query(request: Request) -> dict[str, str]:
    """The site and area a QR code preselects, kept in the installed app's start address."""
    return {key: value for key in ("site", "area")
            if (value := request.GET.get(key, "")).isdigit() and len(value) < 10}


@view_config(route_name="kiosk.manifest", request_method="GET", permission=NO_PERMISSION_REQUIRED)
def manifest(request: Request) -> Response:
    """The link's web app manifest: it starts at the link's page and its
    scope is that page alone (another link is another app). An unknown or
    revoked link has none (404)."""
    token = request.matchdict["token"]
    link = active_link(request.dbsession, token)
    if link is None:
        raise HTTPNotFound()
    page = request.route_path("kiosk.page", token=token)
    translate = request.localizer.translate
    body: dict[str, Any] = {
        "id": page,
        "name": translate(_("Report an incident: ${link}", mapping={"link": link.name})),
        "short_name": translate(_("Report")),
        "description": translate(_("Report an incident, a near miss or a hazard, even without a network.")),
        "lang": request.localizer.locale_name,
        "start_url": request.route_path("kiosk.page", token=token, _query=_query(request)),
        "scope": page,
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": THEME,
        "icons": [{"src": request.static_path(spec), "sizes": sizes, "type": "image/png", "purpose": "any"}
                  for spec, sizes in ICONS]
        + [{"src": request.static_path(spec), "sizes": sizes, "type": "image/png", "purpose": "maskable"}
           for spec, sizes in ICONS],
    }
    response = Response(content_type="application/manifest+json", charset="utf-8",
                        body=json.dumps(body, ensure_ascii=False).encode("utf-8"))
    response.headers.update({"Cache-Control": "no-cache", "Referrer-Policy": "no-referrer",
                             "X-Content-Type-Options": "nosniff"})
    return response


@view_config(route_name="kiosk.worker", request_method="GET", permission=NO_PERMISSION_REQUIRED)
def worker(request: Request) -> Response:
    """The service worker of every link's page, told which files to keep
    and under which version (a digest of those files and of the worker: a
    changed file is a new worker, which drops the old copies)."""
    assets = [request.static_path(spec) for spec in ASSETS]
    digest = hashlib.sha256(_read(WORKER))
    for spec in ASSETS:
        digest.update(_read(spec))
    head = f"var ASSETS = {json.dumps(assets)};\nvar VERSION = {json.dumps(digest.hexdigest()[:16])};\n"
    response = Response(content_type="text/javascript", charset="utf-8",
                        body=head.encode("utf-8") + _read(WORKER))
    # Checked again on every visit (the browser's own rule for workers, said
    # explicitly); the kept page needs no address of another site.
    response.headers.update({"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
                             "Content-Security-Policy": "default-src 'self'"})
    return response
