"""The report page a link opens at /k/<token>: server-rendered HTML with
labels and a camera input, pre-filled from ?site= and ?area=, no referrer,
404 for unknown or revoked tokens; and one real report filed with a headless
Chromium against a live server.

Spec: Reporting links ("The web application opens a link at /k/<token>")."""

from __future__ import annotations

import os
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ehs_core.testing import PASSWORD, Client, base_settings, free_port
from tests.core.attachments import samples
from tests.plugins.kiosk.support import LINKS, new_area, new_link, new_site

CHROMIUM = "/usr/bin/chromium"
FIELDS = ("title", "type", "severity", "occurredAt", "siteId", "areaId", "locationDetail", "description",
          "immediateAction", "photos", "reporterName")


class Page(HTMLParser):
    """The elements of a page (tag, attributes) and the `for` of its labels."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.labels: set[str] = set()
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if tag == "label" and attributes.get("for"):
            self.labels.add(attributes["for"] or "")

    def by_id(self, element_id: str) -> tuple[str, dict[str, str | None]]:
        found = [item for item in self.elements if item[1].get("id") == element_id]
        assert len(found) == 1, element_id
        return found[0]

    def options(self) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == "option"]


def options_of(html: str, select_id: str) -> list[tuple[str, bool]]:
    """(value, selected) of one select's options."""
    parser = _SelectParser(select_id)
    parser.feed(html)
    return parser.found


class _SelectParser(HTMLParser):
    def __init__(self, select_id: str) -> None:
        super().__init__()
        self.select_id = select_id
        self.inside = False
        self.found: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "select":
            self.inside = attributes.get("id") == self.select_id
        elif tag == "option" and self.inside:
            self.found.append((attributes.get("value") or "", "selected" in attributes))

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.inside = False


def selected(html: str, select_id: str) -> list[str]:
    return [value for value, chosen in options_of(html, select_id) if chosen]


def offered(html: str, select_id: str) -> list[str]:
    return [value for value, _ in options_of(html, select_id) if value]


# --- the page as served ------------------------------------------------------------------------


@pytest.fixture
def place(admin) -> dict[str, Any]:
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    return {"north": north, "south": south, "workshop": new_area(admin, north, "Workshop"),
            "dock": new_area(admin, south, "Loading dock"), "link": new_link(admin, "Gate tablet")}


def test_the_page_is_server_rendered_html_with_labels(place, client):
    token = place["link"]["token"]
    response = client.get(f"/k/{token}", status=200)
    assert response.content_type == "text/html"
    assert "Acme Works" in response.text and "Gate tablet" in response.text
    assert "Plant North" in response.text and "Loading dock" in response.text  # rendered, not fetched
    page = Page(response.text)
    for field in FIELDS:
        tag, attributes = page.by_id(field)
        assert tag in {"input", "select", "textarea"}
        assert field in page.labels or attributes.get("aria-label"), f"{field} has no label"
    assert [attrs.get("type") for tag, attrs in page.elements if tag == "form"] == [None]
    assert "set-cookie" not in {name.lower() for name in response.headers}


def test_the_photo_input_opens_the_camera(place, client):
    page = Page(client.get(f"/k/{place['link']['token']}").text)
    tag, attributes = page.by_id("photos")
    assert (tag, attributes.get("type")) == ("input", "file")
    assert "capture" in attributes
    assert "image/" in (attributes.get("accept") or "")
    assert "multiple" in attributes


def test_the_page_sends_no_referrer_and_runs_only_its_own_script(place, client):
    response = client.get(f"/k/{place['link']['token']}")
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    page = Page(response.text)
    scripts = [attrs.get("src") for tag, attrs in page.elements if tag == "script"]
    assert scripts and all(src and src.startswith("/") for src in scripts)
    for src in scripts:
        client.get(src, status=200)


def test_without_a_query_nothing_is_preselected_among_several_sites(place, client):
    html = client.get(f"/k/{place['link']['token']}").text
    assert offered(html, "siteId") == [str(place["north"]), str(place["south"])]
    assert selected(html, "siteId") == []
    assert sorted(offered(html, "areaId")) == sorted([str(place["dock"]), str(place["workshop"])])
    assert selected(html, "areaId") == []


def test_site_and_area_are_prefilled_from_the_query(place, client):
    token, south, dock = place["link"]["token"], place["south"], place["dock"]
    html = client.get(f"/k/{token}?site={south}").text
    assert selected(html, "siteId") == [str(south)]
    assert selected(html, "areaId") == []
    html = client.get(f"/k/{token}?site={south}&area={dock}").text
    assert selected(html, "siteId") == [str(south)]
    assert selected(html, "areaId") == [str(dock)]


@pytest.mark.parametrize("query", ["site=9999", "site=abc", "site=-1", "site=1e3",
                                   "site=99999999999999999999"])
def test_an_unknown_or_malformed_site_in_the_query_is_ignored(place, client, query):
    html = client.get(f"/k/{place['link']['token']}?{query}", status=200).text
    assert selected(html, "siteId") == []


def test_an_area_of_another_site_is_not_preselected(place, client):
    html = client.get(f"/k/{place['link']['token']}?site={place['north']}&area={place['dock']}").text
    assert selected(html, "siteId") == [str(place["north"])]
    assert selected(html, "areaId") == []


def test_a_link_tied_to_a_site_offers_and_selects_only_that_site(place, admin, client):
    link = new_link(admin, "South gate", site_id=place["south"])
    for query in ("", f"?site={place['north']}", f"?site={place['south']}"):
        html = client.get(f"/k/{link['token']}{query}").text
        assert offered(html, "siteId") == [str(place["south"])]
        assert selected(html, "siteId") == [str(place["south"])]
        assert offered(html, "areaId") == [str(place["dock"])]


def test_archived_sites_and_areas_are_not_offered(place, admin, client):
    admin.patch_json(f"/api/sites/{place['north']}", {"archived": True}, status=200)
    shed = new_area(admin, place["south"], "Old shed")
    admin.patch_json(f"/api/areas/{shed}", {"archived": True}, status=200)
    html = client.get(f"/k/{place['link']['token']}?site={place['north']}").text
    assert offered(html, "siteId") == [str(place["south"])]
    assert offered(html, "areaId") == [str(place["dock"])]
    assert "Old shed" not in html and "Plant North" not in html


@pytest.mark.parametrize("token", ["unknown", "x" * 43, "x" * 65, "x" * 3000])
def test_an_unknown_token_answers_404(place, client, token):
    response = client.get(f"/k/{token}", status=404)
    assert "Gate tablet" not in response.text and "Acme Works" not in response.text
    # not a bare "Not found": what happened and what to do instead
    assert "This reporting link does not work" in response.text
    assert "ask your supervisor or safety team for the new link" in response.text


def test_a_revoked_link_answers_404_at_once(place, admin, client):
    link = place["link"]
    client.get(f"/k/{link['token']}", status=200)
    admin.patch_json(f"{LINKS}/{link['id']}", {"revoked": True}, status=200)
    response = client.get(f"/k/{link['token']}?site={place['north']}", status=404)
    assert "Gate tablet" not in response.text and "This reporting link does not work" in response.text


def test_names_are_escaped(admin, client):
    site = new_site(admin, '"><img src=x onerror=alert(1)>')
    new_area(admin, site, "<script>alert(2)</script>")
    link = new_link(admin, "<script>alert(3)</script>")
    html = client.get(f"/k/{link['token']}").text
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html


# --- a real browser against a live server ---------------------------------------------------------


@pytest.fixture
def live(tmp_path: Path, smtp_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The application on a fresh SQLite file (real commits), served over HTTP."""
    from webtest.http import StopableWSGIServer

    from ehs_core.config import configure
    from ehs_core.migrations import upgrade

    for name in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    port = free_port()
    public_url = f"http://127.0.0.1:{port}"
    settings = base_settings(f"sqlite:///{tmp_path}/k.sqlite", smtp_server.port, str(tmp_path / "uploads"))
    config = configure(dict(settings, **{"sqlalchemy.url": f"sqlite:///{tmp_path}/k.sqlite",
                                         "ehs.public_url": public_url}))
    upgrade(config.registry)
    app = config.make_wsgi_app()
    server = StopableWSGIServer.create(app, host="127.0.0.1", port=port)
    try:
        assert server.wait(), "the live server did not start"
        yield {"url": public_url, "app": app, "engine": config.registry["db.engine"]}
    finally:
        server.shutdown()
        config.registry["db.engine"].dispose()


def test_a_report_with_a_photo_filed_from_chromium(live, new_page, tmp_path):
    from ehs_core.attachments.models import Attachment
    from ehs_core.incidents.models import Incident
    from ehs_plugins.kiosk.models import KioskReport

    admin = Client(live["app"], origin=live["url"])
    admin.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                   "email": "admin@acme.test", "password": PASSWORD}, status=201)
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    dock = new_area(admin, south, "Loading dock")
    link = new_link(admin, "Gate tablet")
    photo = tmp_path / "photo.png"
    photo.write_bytes(samples.png(seed=42, width=4, height=4))

    page = new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"{message.text} {message.location.get('url')}")
            if message.type == "error" and "favicon" not in str(message.location.get("url")) else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live['url']}/k/{link['token']}?site={south}")
    assert "Acme Works" in page.title()
    assert page.locator("#siteId").input_value() == str(south)
    assert str(north) in page.locator("#siteId option").evaluate_all("els => els.map(e => e.value)")
    page.fill("#title", "Broken step on the stairs")
    page.select_option("#type", "near_miss")
    page.select_option("#severity", "low")
    page.select_option("#areaId", str(dock))
    page.set_input_files("#photos", str(photo))
    page.click("#send")

    page.wait_for_function(
        "() => document.getElementById('reference').textContent === 'INC-0001'"
        " || (document.getElementById('status').className || '').includes('error')", timeout=20_000)
    status = page.locator("#status").text_content()
    assert page.locator("#reference").text_content() == "INC-0001", status
    assert page.locator("#done").is_visible()
    assert page.locator("#failed-files").text_content() == ""
    assert problems == []

    incident = admin.get("/api/incidents/1", status=200).json
    assert incident["title"] == "Broken step on the stairs"
    assert (incident["type"], incident["severity"]) == ("near_miss", "low")
    assert (incident["siteId"], incident["areaId"]) == (south, dock)
    assert incident["channel"] == "kiosk"
    assert (incident["kiosk"]["id"], incident["kiosk"]["name"]) == (link["id"], "Gate tablet")
    assert incident["anonymous"] is True and incident["reporter"] is None
    # an anonymous report keeps no name the phone gave the file
    assert [(item["filename"], item["contentType"]) for item in incident["attachments"]] == [
        ("attachment.png", "image/png")]
    assert admin.get(incident["attachments"][0]["url"]).body == photo.read_bytes()
    with live["engine"].connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(Incident)).scalar() == 1
        assert conn.execute(sa.select(sa.func.count()).select_from(Attachment)).scalar() == 1
        assert conn.execute(sa.select(KioskReport.kiosk_id)).scalars().all() == [link["id"]]
