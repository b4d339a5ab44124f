"""Disabled plugins: without `analytics` in ehs.plugins its URLs answer 404;
without `osha` the analytics page has no injury rates and no case figures
(they come from the OSHA plugin's cases and hours).

Each test builds a second application on the test's database transaction,
with other plugins enabled, and signs in to it."""

from __future__ import annotations

import pytest

from ehs_core.testing import Client
from tests.plugins.analytics import (
    ADMIN_EMAIL,
    ANALYTICS,
    OVERVIEW,
    VIEWS,
    add_case,
    analytics,
    app_with_plugins,
    new_site,
    put_hours,
    report,
    signed_in,
)

PERIOD = {"from": "2024-01-01", "to": "2024-06-30"}


@pytest.fixture
def without_analytics(registry, app_settings, dbsession):
    with app_with_plugins(registry, app_settings, "osha kiosk") as app:
        yield app


@pytest.fixture
def without_osha(registry, app_settings, dbsession):
    with app_with_plugins(registry, app_settings, "kiosk analytics") as app:
        yield app


def assert_not_found(response) -> None:
    assert response.status_int == 404
    assert response.json == {"error": "Not found"}


def test_with_analytics_disabled_its_urls_answer_404(admin, without_analytics):
    body = {"page": "analytics", "name": "Mine", "filters": {}, "shared": True}
    view = admin.post_json(VIEWS, body, status=201).json
    for browser in (signed_in(without_analytics, ADMIN_EMAIL), Client(without_analytics)):
        assert_not_found(browser.get(OVERVIEW, status=404))
        assert_not_found(browser.get(ANALYTICS, params=PERIOD, status=404))
        assert_not_found(browser.get(VIEWS, status=404))
        assert_not_found(browser.get(VIEWS, params={"page": "analytics"}, status=404))
        assert_not_found(browser.post_json(VIEWS, dict(body, name="New"), status=404))
        assert_not_found(browser.delete(f"{VIEWS}/{view['id']}", status=404))
    # the rest of the application works, and the view was left alone
    assert signed_in(without_analytics, ADMIN_EMAIL).get("/api/auth/me", status=200).json["user"]["email"] \
        == ADMIN_EMAIL
    assert [v["id"] for v in admin.get(VIEWS, status=200).json] == [view["id"]]


def test_with_osha_disabled_there_are_no_rates_or_case_figures(admin, make_user, without_osha):
    site = new_site(admin)["id"]
    put_hours(admin, site, 2024, dict.fromkeys(range(1, 7), 100_000))
    number = report(admin, site, "2024-03-10T10:00:00+00:00", "injury")
    add_case(admin, number, workRelated=True, newCase=True, daysAwayFromWork=True, daysAway=4)
    supervisor = make_user("supervisor")

    # With the OSHA plugin the supervisor gets the rates, an admin the case figures too ...
    assert analytics(supervisor, PERIOD["from"], PERIOD["to"])["rates"]["rolling12Months"]["trir"] == 0.33
    enabled = analytics(admin, PERIOD["from"], PERIOD["to"])
    assert enabled["rates"]["rolling12Months"]["trir"] == 0.33  # 1 x 200,000 / 600,000 hours
    assert enabled["rates"]["rolling12Months"]["recordableCases"] == 1
    assert enabled["lagging"]["recordableCases"] == {"current": 1, "previous": 0}

    # ... without it, not (but the other figures are there).
    for email in (supervisor.user["email"], ADMIN_EMAIL):
        body = analytics(signed_in(without_osha, email), PERIOD["from"], PERIOD["to"])
        assert "rates" not in body
        assert set(body["lagging"]) == {"injuries", "illnesses"}
        assert body["lagging"]["injuries"] == {"current": 1, "previous": 0}
        assert body["leading"]["reported"] == {"current": 1, "previous": 0}
    assert signed_in(without_osha, ADMIN_EMAIL).get(OVERVIEW, status=200).json["openIncidents"] == 1
