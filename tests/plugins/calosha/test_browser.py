"""The California pages in Debian's Chromium: a supervisor fills in the
violence log's entry on the incident page, reads the printable log (with no
name of the people involved) and an employee asks for a copy from the home
page; axe-core finds no serious or critical violation, desktop and phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD


@pytest.fixture
def calosha_enabled(monkeypatch):
    monkeypatch.setenv("EHS_TEST_PLUGINS", "osha calosha")


def sign_in(page, url, email):
    page.goto(f"{url}/sign-in")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_log_entry_the_printable_log_and_asking_for_a_copy(calosha_enabled, live, new_page, viewport):
    admin = live.admin()
    body = {"name": "Oakland Yard", "timezone": "America/Los_Angeles"}
    site = admin.post_json("/api/sites", body).json["id"]
    admin.patch_json(f"/api/sites/{site}", {"state": "CA"})
    for name, email, role in (("Sam Supervisor", "sam@acme.test", "supervisor"),
                              ("Rosa Employee", "rosa@acme.test", "reporter")):
        admin.post_json("/api/users", {"name": name, "email": email, "role": role, "password": PASSWORD})
    number = admin.post_json("/api/incidents", {
        "title": "Cashier threatened", "type": "near_miss", "severity": "medium", "siteId": site,
        "occurredAt": "2025-05-02T20:00:00-07:00"}).json["number"]

    page = new_page(viewport=viewport)
    sign_in(page, live.url, "sam@acme.test")
    page.goto(f"{live.url}/incidents/{number}")
    panel = page.get_by_role("region", name="California (Cal/OSHA)")
    expect(panel).to_be_visible()
    assert_accessible(page)
    panel.get_by_label("Type of violence").select_option("2")
    panel.get_by_label("Threat of physical force").check()
    panel.get_by_label("Who the perpetrator was to the workplace").fill("A customer")
    panel.get_by_label("What happened").fill("Rex Moreno threatened Dana Whitfield over a refund")
    panel.get_by_label("Circumstances (working alone, at night, understaffed...)").fill("One cashier on duty")
    panel.get_by_label("Where it happened").fill("Front counter")
    panel.get_by_label("Consequences (injuries, work stopped...)").fill("No injury")
    panel.get_by_label("Law enforcement was called").check()
    people = panel.get_by_label("People involved, one per line (kept out of the log)")
    people.fill("Rex Moreno\nDana Whitfield")
    panel.get_by_label("Your job title").fill("Shift supervisor")
    panel.get_by_role("button", name="Save the log entry").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()

    if viewport[0] < 600:  # on a phone the menu folds behind its button
        page.get_by_role("button", name="Menu").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Violence log").click()
    expect(page.get_by_role("heading", name="Violent incident log", level=1)).to_be_visible()
    log = page.get_by_role("region", name="1 entry")
    expect(log).to_contain_text("A person threatened a person over a refund")
    for name in ("Rex", "Moreno", "Dana", "Whitfield"):
        expect(log).not_to_contain_text(name)
    expect(log).to_contain_text("Sam Supervisor, Shift supervisor")
    assert_accessible(page)

    employee = new_page(viewport=viewport)
    sign_in(employee, live.url, "rosa@acme.test")
    card = employee.get_by_role("region", name="Workplace violence log")
    assert_accessible(employee)
    card.get_by_role("button", name="Ask for a copy of the log").click()
    expect(employee.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    page.goto(f"{live.url}/")
    # The copy is a safety manager's to give: the supervisor's queue does not show it.
    expect(page.get_by_role("region", name="Owed to regulators")).not_to_contain_text("Copy of")
    owed = admin.get("/api/obligations").json["items"]
    assert [item["title"] for item in owed] == ["Copy of the violent incident log for Rosa Employee"]
