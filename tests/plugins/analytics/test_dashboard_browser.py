"""The dashboard in Debian's Chromium: a supervisor opens it, finds the
charts' numbers beside them, and drills from a bar into the incident list
with that bar's filter; axe-core finds no serious or critical violation."""

from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD


def test_a_supervisor_drills_from_a_chart_into_the_list(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "America/Chicago"}).json["id"]
    admin.post_json("/api/users", {"name": "Sam Supervisor", "email": "sam@acme.test", "role": "supervisor",
                                   "password": PASSWORD})
    when = (dt.datetime.now(dt.UTC) - dt.timedelta(days=2)).isoformat()
    for title, kind in (("Box fell", "near_miss"), ("Cut finger", "injury"), ("Loose rail", "near_miss")):
        admin.post_json("/api/incidents", {"title": title, "type": kind, "severity": "low", "siteId": site,
                                           "occurredAt": when})

    page = new_page()
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill("sam@acme.test")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Analytics").click()
    page.get_by_label("Quick choice").select_option("30")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name="By type and severity")).to_be_visible()
    expect(page.get_by_role("table", name="Incidents by type and severity")).to_be_visible()
    assert_accessible(page)

    page.get_by_role("link", name="Near miss: 2 incidents").click()
    page.wait_for_url(re.compile(r"/incidents\?.*type=near_miss"))
    results = page.locator("#results")
    expect(results.get_by_text("Box fell").is_visible() and results.get_by_text("Loose rail")).to_be_visible()
    assert results.get_by_text("Cut finger").count() == 0


def test_the_dashboard_fits_a_phone_with_long_site_and_area_names(live, new_page):
    """WCAG 2.2 1.4.10 Reflow: at 320 CSS pixels nothing but a wide data
    table (in its own scrolling region) scrolls sideways; the long names
    of the site-and-area table wrap."""
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "North Distribution Center Fabrication Works"}).json["id"]
    area = admin.post_json(f"/api/sites/{site}/areas",
                           {"name": "Maintenance Bay by the Loading Dock"}).json["id"]
    when = (dt.datetime.now(dt.UTC) - dt.timedelta(days=2)).isoformat()
    admin.post_json("/api/incidents", {"title": "Box fell", "type": "near_miss", "severity": "low",
                                       "siteId": site, "areaId": area, "occurredAt": when})
    page = new_page(viewport=(320, 700))
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill("admin@acme.test")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live.url}/analytics")
    expect(page.get_by_role("table", name="Incidents by site and area (the ten with most)")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert_accessible(page)
