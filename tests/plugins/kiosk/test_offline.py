"""The reporting link as an installable web app (issue #39 item 2): each
link's page names a web app manifest whose scope is that page alone, with
PNG icons; one service worker, served from /k/ so it may control a link's
page, keeps the page and exactly the files the page loads (never the API);
the pages' CSP lets the manifest and the worker load and nothing else.
The offline behaviour itself: test_offline_browser."""

from __future__ import annotations

import io
import json
import re

from PIL import Image

from tests.plugins.kiosk.support import LINKS, new_link, new_site
from tests.plugins.kiosk.test_page_browser import Page

WORKER = "/k/offline-worker.js"


def manifest_href(html: str) -> str:
    [href] = [attrs.get("href") for tag, attrs in Page(html).elements
              if tag == "link" and attrs.get("rel") == "manifest"]
    assert href
    return href


def test_each_link_is_an_app_of_its_own_page(admin, client):
    site = new_site(admin, "Plant North")
    link = new_link(admin, "Gate tablet")
    token = link["token"]
    html = client.get(f"/k/{token}?site={site}").text
    href = manifest_href(html)
    assert href.startswith(f"/k/{token}/manifest.webmanifest")
    response = client.get(href, status=200)
    assert response.content_type == "application/manifest+json"
    manifest = json.loads(response.body)
    assert manifest["scope"] == manifest["id"] == f"/k/{token}"
    assert manifest["start_url"] == f"/k/{token}?site={site}"  # where the QR code pointed
    assert manifest["display"] == "standalone"
    assert manifest["name"] == "Report an incident: Gate tablet" and manifest["short_name"] == "Report"
    assert "set-cookie" not in {name.lower() for name in response.headers}
    sizes = set()
    for icon in manifest["icons"]:
        image = Image.open(io.BytesIO(client.get(icon["src"], status=200).body))
        assert image.format == "PNG" and f"{image.width}x{image.height}" == icon["sizes"]
        sizes.add(icon["sizes"])
    assert sizes == {"192x192", "512x512"}  # what browsers ask of an installable app
    # another link is another app
    other = new_link(admin, "Canteen")
    assert json.loads(client.get(f"/k/{other['token']}/manifest.webmanifest").body)["scope"] == \
        f"/k/{other['token']}"


def test_an_unknown_or_revoked_link_has_no_manifest(admin, client):
    link = new_link(admin, "Gate tablet")
    client.get("/k/unknown/manifest.webmanifest", status=404)
    admin.patch_json(f"{LINKS}/{link['id']}", {"revoked": True}, status=200)
    response = client.get(f"/k/{link['token']}/manifest.webmanifest", status=404)
    assert "Gate tablet" not in response.text


def test_the_worker_keeps_exactly_what_the_page_loads(admin, client):
    new_site(admin, "Plant North")
    link = new_link(admin, "Gate tablet")
    html = client.get(f"/k/{link['token']}").text
    page = Page(html)
    loaded = {attrs.get("src") for tag, attrs in page.elements if tag == "script"}
    loaded |= {attrs.get("href") for tag, attrs in page.elements
               if tag == "link" and attrs.get("rel") in {"stylesheet", "icon", "apple-touch-icon"}}
    form = page.by_id("report")[1]
    assert (form.get("data-worker"), form.get("data-scope")) == (WORKER, f"/k/{link['token']}")

    response = client.get(WORKER, status=200)
    assert response.content_type == "text/javascript"
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assets = json.loads(re.match(r"var ASSETS = (\[.*?\]);\n", response.text).group(1))
    assert set(assets) >= loaded
    assert not [path for path in assets if path.startswith("/api") or path.startswith("/k/")]
    for path in assets:
        client.get(path, status=200)
    # The page is kept by its worker, the API's answers never: only GET
    # navigations to the link's page and the listed files are answered.
    assert 'request.method !== "GET"' in response.text and "ASSETS.indexOf(url.pathname)" in response.text
    # The version follows the files it keeps (a deployment replaces them).
    assert re.search(r'var VERSION = "[0-9a-f]{16}";', response.text)
    # Not a link's page: the address is the worker's, whatever the token route says.
    assert "Report an incident" not in response.text


def test_the_pages_csp_allows_only_their_own_manifest_and_worker(admin, client):
    link = new_link(admin, "Gate tablet")
    csp = client.get(f"/k/{link['token']}").headers["Content-Security-Policy"]
    assert "manifest-src 'self'" in csp and "worker-src 'self'" in csp
    assert "default-src 'none'" in csp and "unsafe" not in csp
