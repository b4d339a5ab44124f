"""With the kiosk plugin disabled (ehs.plugins without `kiosk`) on the same
database, its URLs answer 404, a link token opens nothing, and incidents carry
no `channel` or `kiosk`, not even those filed through a link earlier."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ehs_core.config import configure
from ehs_core.testing import Client
from tests.core.attachments import samples
from tests.plugins.kiosk.support import (
    CONFIG,
    HEADER,
    LINKS,
    REPORTS,
    assert_error,
    file_report,
    incident_count,
    new_link,
    new_site,
    report_body,
)


@pytest.fixture
def without_kiosk(app_settings: dict[str, Any], registry: Any,
                  dbsession: Any) -> Iterator[Callable[[], Client]]:
    """Clients of a second application built without the kiosk plugin, sharing
    the test's database transaction."""
    config = configure(dict(app_settings, **{"ehs.plugins": "osha analytics"}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    app = config.make_wsgi_app()
    yield lambda: Client(app)
    config.registry["db.engine"].dispose()


@pytest.fixture
def history(admin, client) -> dict:
    """With the plugin enabled: a link, a report filed through it (INC-0001)
    and one filed on the web (INC-0002)."""
    site = new_site(admin)
    link = new_link(admin)
    file_report(client, link["token"], report_body(site, title="Via the kiosk"),
                files=[("a.png", samples.PNG, "image/png")])
    admin.post_json("/api/incidents", report_body(site, title="Via the web"), status=201)
    assert admin.get("/api/incidents/1").json["channel"] == "kiosk"
    return {"site": site, "link": link, "token": link["token"]}


def test_the_enabled_app_has_the_kiosk_and_the_disabled_one_does_not(registry, without_kiosk):
    assert "kiosk" in registry["enabled_plugins"]
    app = without_kiosk()
    assert "kiosk" not in app.app.registry["enabled_plugins"]


def test_link_management_answers_404(history, without_kiosk, dbsession):
    admin = without_kiosk()
    admin.login("admin@acme.test")
    assert_error(admin.get(LINKS, status=404), 404)
    assert_error(admin.post_json(LINKS, {"name": "New link"}, status=404), 404)
    assert_error(admin.patch_json(f"{LINKS}/{history['link']['id']}", {"revoked": True}, status=404), 404)
    anonymous = without_kiosk()
    assert_error(anonymous.get(LINKS, status=404), 404)


def test_the_link_endpoints_and_page_answer_404_even_with_a_valid_token(history, without_kiosk, dbsession):
    browser = without_kiosk()
    token = history["token"]
    assert_error(browser.get(CONFIG, headers={HEADER: token}, status=404), 404)
    response = file_report(browser, token, report_body(history["site"]), status=404)
    assert_error(response, 404)
    browser.post(REPORTS, headers={HEADER: token}, status=404)
    browser.get(f"/k/{token}", status=404)
    browser.get(f"/k/{token}?site={history['site']}", status=404)
    browser.get("/kiosk-static/kiosk.js", status=404)
    browser.get("/kiosk-static/kiosk.css", status=404)
    assert incident_count(dbsession) == 2


def test_a_link_token_still_opens_nothing_else(history, without_kiosk):
    browser = without_kiosk()
    headers = {HEADER: history["token"]}
    for path in ("/api/incidents", "/api/incidents/1", "/api/sites", "/api/auth/me"):
        assert_error(browser.get(path, headers=headers, status=401), 401)


def test_incidents_carry_no_channel_or_kiosk(history, without_kiosk):
    admin = without_kiosk()
    admin.login("admin@acme.test")
    items = admin.get("/api/incidents").json["items"]
    assert [item["title"] for item in items] == ["Via the web", "Via the kiosk"]
    for item in items:
        assert "channel" not in item and "kiosk" not in item
    detail = admin.get("/api/incidents/1").json
    assert "channel" not in detail and "kiosk" not in detail
    assert detail["anonymous"] is True and detail["reporter"] is None
    assert len(detail["attachments"]) == 1  # the core's data is untouched
    created = admin.post_json("/api/incidents", report_body(history["site"], title="Later"), status=201).json
    assert "channel" not in created and "kiosk" not in created


def test_the_enabled_app_still_shows_the_channel_afterwards(history, without_kiosk, admin):
    without_kiosk().get(CONFIG, headers={HEADER: history["token"]}, status=404)
    assert admin.get("/api/incidents/1").json["channel"] == "kiosk"
    assert admin.get(LINKS).json[0]["revoked"] is False
