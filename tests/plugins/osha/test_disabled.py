"""With `osha` left out of ehs.plugins, the service has no /api/osha/ URL at
all (404, not 401/403/405) and incidents carry no injuredCount.

A second application is built on the same database (the test's session
factory, bound to the outer transaction) with the other plugins only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ehs_core.config import configure
from ehs_core.testing import Client
from tests.plugins.osha import (
    INCIDENTS,
    OSHA,
    WORK,
    assert_error,
    call,
    cases_of,
    endpoints,
    new_case,
    new_incident,
    put_hours,
)


@pytest.fixture
def without_osha(app_settings: dict[str, Any], registry: Any, dbsession: Any) -> Iterator[Any]:
    config = configure(dict(app_settings, **{"ehs.plugins": "kiosk analytics"}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    app = config.make_wsgi_app()
    yield app
    config.registry["db.engine"].dispose()


@pytest.fixture
def existing(manager: Any, site: int) -> tuple[int, int, int]:
    """An incident with a case and hours, made while the plugin is enabled."""
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, daysAway=3)
    put_hours(manager, site, [{"month": 1, "hours": 9, "averageEmployees": 1}])
    return number, case["id"], site


def test_plugin_disabled_every_osha_url_is_404(without_osha: Any, manager: Any,
                                               existing: tuple[int, int, int]) -> None:
    browser = Client(without_osha)
    browser.login("admin@acme.test")
    assert browser.get("/api/auth/me").json["user"]["role"] == "admin"
    signed_out = Client(without_osha)
    urls = set()
    for method, url, body in endpoints(*existing):
        assert_error(call(browser, method, url, body, status=404), 404)
        assert_error(call(signed_out, method, url, body, status=404), 404)
        urls.add(url)
    for url in urls:  # other methods too: no route, not 405
        for method, body in (("GET", None), ("POST", {}), ("PUT", []), ("PATCH", {}), ("DELETE", None)):
            assert_error(call(browser, method, url, body, status=404), 404)
    assert_error(browser.get(f"{OSHA}/", status=404), 404)
    # Nothing was changed through the disabled app.
    number, case_id, _ = existing
    assert [case["id"] for case in cases_of(manager, number)] == [case_id]


def test_plugin_disabled_incidents_have_no_injured_count(without_osha: Any, manager: Any,
                                                         existing: tuple[int, int, int]) -> None:
    number = existing[0]
    # Enabled: the key is there.
    assert manager.get(f"{INCIDENTS}/{number}").json["injuredCount"] == 1
    browser = Client(without_osha)
    browser.login("admin@acme.test")
    detail = browser.get(f"{INCIDENTS}/{number}", status=200).json
    assert detail["number"] == number
    assert "injuredCount" not in detail
    items = browser.get(INCIDENTS, status=200).json["items"]
    assert [item["number"] for item in items] == [number]
    assert all("injuredCount" not in item for item in items)
    created = browser.post_json(INCIDENTS, {"title": "Slip", "type": "injury", "severity": "low",
                                            "occurredAt": "2025-03-11T10:00:00+00:00",
                                            "siteId": existing[2]}, status=201).json
    assert "injuredCount" not in created


def test_plugin_disabled_no_screen_panel_menu_or_card(without_osha: Any, manager: Any,
                                                      existing: tuple[int, int, int]) -> None:
    number, case_id, site = existing
    assert "Injured or ill people" in manager.get(f"/incidents/{number}").text  # enabled: the panel
    browser = Client(without_osha)
    browser.login("admin@acme.test")
    page = browser.get(f"/incidents/{number}", status=200)
    assert "Injured or ill people" not in page.text and "Injury records" not in page.text
    assert "Injury records" not in browser.get("/", status=200).text
    for url in ("/osha/log", "/osha/summary", "/osha/hours", "/osha/submission", f"/osha/cases/{case_id}",
                f"/osha/log.pdf?siteId={site}&year=2025", f"/osha/cases/{case_id}/301.pdf"):
        assert "Page not found" in browser.get(url, status=404).text
