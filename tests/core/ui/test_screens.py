"""Plugins add screens through directives (menu entries, incident panels,
home cards), shown only to those who hold their permission; a disabled
plugin adds none; a name claimed twice stops start-up."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from pyramid.exceptions import ConfigurationError

import ehs_core.plugins
from ehs_core.config import configure
from ehs_core.migrations import upgrade
from ehs_core.plugins import GROUP
from ehs_core.testing import PASSWORD, Client, base_settings


@pytest.fixture
def build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    for name in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch.delenv(name)
    real_discover = ehs_core.plugins.discover
    monkeypatch.setattr(ehs_core.plugins, "discover", lambda: {
        **real_discover(),
        "weather": EntryPoint(name="weather", value="tests.core.ui.screens_plugin:includeme", group=GROUP)})
    configs = []

    def make(plugins: str) -> Client:
        database = f"sqlite:///{tmp_path}/{len(configs)}.sqlite"
        config = configure(dict(base_settings(database, 1025, str(tmp_path / "uploads")),
                                **{"ehs.plugins": plugins}))
        upgrade(config.registry)
        configs.append(config)
        return Client(config.make_wsgi_app())

    yield make
    for config in configs:
        config.registry["db.engine"].dispose()


def people(admin: Client) -> dict[str, Client]:
    clients = {}
    for role in ("reporter", "supervisor"):
        email = f"{role}@acme.test"
        admin.post_json("/api/users", {"name": role.title(), "email": email, "role": role,
                                       "password": PASSWORD})
        browser = Client(admin.app)
        browser.login(email)
        clients[role] = browser
    return clients


def setup(browser: Client) -> Client:
    browser.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                     "email": "admin@acme.test", "password": PASSWORD})
    return browser


def test_a_plugins_menu_entry_card_and_panel_show_to_the_roles_allowed(build):
    admin = setup(build("weather"))
    users = people(admin)
    site = admin.post_json("/api/sites", {"name": "Plant"}).json["id"]
    number = users["reporter"].post_json("/api/incidents", {
        "title": "Slip", "type": "hazard", "severity": "low", "occurredAt": "2026-01-05T08:00:00Z",
        "siteId": site}).json["number"]

    supervisor_home = users["supervisor"].get("/")
    assert 'href="/weather"' in supervisor_home.text and "3 storms" in supervisor_home.text
    assert "Wind at incident" in users["supervisor"].get(f"/incidents/{number}").text
    assert "Dry all week" in users["supervisor"].get("/weather").text

    reporter_home = users["reporter"].get("/")
    assert 'href="/weather"' not in reporter_home.text and "storms" not in reporter_home.text
    assert "Wind at incident" not in users["reporter"].get(f"/incidents/{number}").text
    assert "Not allowed" in users["reporter"].get("/weather", status=403).text


def test_a_plugins_badge_counts_for_the_person_who_looks(build):
    """A badge expression names the person as `bindparam("me")`: one
    statement made once serves everyone, each with their own count."""
    admin = setup(build("weather"))
    site = admin.post_json("/api/sites", {"name": "Plant"}).json["id"]
    for _ in range(2):
        admin.post_json("/api/incidents", {"title": "Slip", "type": "hazard", "severity": "low",
                                           "occurredAt": "2026-01-05T08:00:00Z", "siteId": site})
    users = people(admin)
    badge = re.compile(r'href="/weather"[^>]*>Weather(?: <span class="badge"[^>]*>(\d+)</span>)?</a>')
    assert badge.search(admin.get("/incidents").text)[1] == "2"
    assert badge.search(users["supervisor"].get("/incidents").text)[1] is None
    users["supervisor"].post_json("/api/incidents", {"title": "Trip", "type": "hazard", "severity": "low",
                                                     "occurredAt": "2026-01-05T08:00:00Z", "siteId": site})
    assert badge.search(users["supervisor"].get("/incidents").text)[1] == "1"
    assert badge.search(admin.get("/").text)[1] == "2"


def test_a_badge_whose_sql_is_written_as_it_runs_counts_too(build):
    """An expression with an IN of a list of values (SQL written as it
    runs) is read through SQLAlchemy; the others on the DBAPI cursor."""
    admin = setup(build("weather"))
    site = admin.post_json("/api/sites", {"name": "Plant"}).json["id"]
    alerts = re.compile(r'>Alerts(?: <span class="badge"[^>]*>(\d+)</span>)?</a>')
    assert alerts.search(admin.get("/incidents").text)[1] is None
    for severity in ("high", "low", "critical"):
        number = admin.post_json("/api/incidents", {
            "title": "Slip", "type": "hazard", "severity": severity, "occurredAt": "2026-01-05T08:00:00Z",
            "siteId": site}).json["number"]
    assert alerts.search(admin.get("/incidents").text)[1] == "2"
    assert alerts.search(admin.get(f"/incidents/{number}").text)[1] == "2"
    assert alerts.search(admin.get("/").text)[1] == "2"


def test_a_disabled_plugin_adds_no_menu_entry_card_panel_or_route(build):
    admin = setup(build("osha kiosk analytics"))
    home = admin.get("/")
    assert "Weather" not in home.text and "storms" not in home.text
    assert "Page not found" in admin.get("/weather", status=404).text


def test_menu_entries_come_in_their_order(build):
    admin = setup(build("weather"))
    text = admin.get("/").text
    positions = [text.index(f'href="{path}"') for path in ("/", "/incidents", "/incidents/new", "/weather")]
    assert positions == sorted(positions)


def test_a_screen_name_claimed_twice_stops_start_up(tmp_path, monkeypatch):
    real_discover = ehs_core.plugins.discover
    monkeypatch.setattr(ehs_core.plugins, "discover", lambda: {
        **real_discover(),
        "second": EntryPoint(name="second", value=f"{__name__}:_claims_home", group=GROUP)})
    with pytest.raises(ConfigurationError, match="nav_item 'home' is already registered"):
        configure(dict(base_settings(f"sqlite:///{tmp_path}/x.sqlite", 1025, str(tmp_path)),
                       **{"ehs.plugins": "second"}))


def _claims_home(config):
    config.add_nav_item("home", "Mine", "home")


def test_unknown_pages_answer_the_404_page_and_the_api_keeps_json(client):
    page = client.get("/no/such/page", status=404)
    assert page.content_type == "text/html" and "Page not found" in page.text
    assert client.get("/api/no/such", status=404).json == {"error": "Not found"}


def test_pages_ask_to_sign_in_and_come_back(admin, new_client):
    response = new_client().get("/incidents/7", status=302)
    assert response.location == "http://ehs.test/sign-in?next=%2Fincidents%2F7"


def test_static_files_are_served_with_htmx_and_its_licence(client):
    assert "htmx" in client.get("/static/vendor/htmx-2.0.11.min.js").text
    assert "Zero-Clause BSD" in client.get("/static/vendor/htmx-LICENSE.txt").text
