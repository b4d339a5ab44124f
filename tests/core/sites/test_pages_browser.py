"""The sites screens in Chromium: axe-core finds no serious or critical
problem on the list, a site with its area tree, and a refused form."""

from __future__ import annotations

from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from tests.core.ui.test_browser import sign_in


def test_the_sites_screens_pass_axe(live, new_page):
    live.admin()
    page = new_page()
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/admin/sites")
    assert_accessible(page)
    page.get_by_role("button", name="Add the site").click()  # no name: the error stands by the field
    expect(page.locator("#name-error")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("Name", exact=True).fill("Plant North")
    page.get_by_role("button", name="Add the site").click()
    page.get_by_role("heading", name="Plant North").wait_for()
    page.locator("#area-name").fill("Building A")
    page.locator("#area-kind").select_option("building")
    page.get_by_role("button", name="Add the area").click()
    page.locator("#area-name").fill("Paint line")
    page.locator("#area-parentId").select_option(label="Building A")
    page.get_by_role("button", name="Add the area").click()
    assert page.locator(".area-tree .area-tree .area-name").inner_text() == "Paint line"
    assert_accessible(page)
    page.get_by_label("NAICS code").fill("12")
    page.get_by_role("button", name="Save the site").click()
    expect(page.locator("#naicsCode-error")).to_be_visible()
    assert_accessible(page)


def test_a_new_sites_zone_is_picked_from_a_list_with_the_browsers_zone_suggested(live, new_page):
    """Issue #36 item 14: the zone is chosen, not typed, and the browser's
    own zone (here Denver's) comes chosen on an empty picker."""
    admin = live.admin()
    page = new_page(timezone_id="America/Denver")
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/admin/sites")
    picker = page.get_by_label("Time zone")
    expect(picker).to_have_value("America/Denver")
    picker.select_option("America/Los_Angeles")
    page.get_by_label("Name", exact=True).fill("Plant West")
    page.get_by_role("button", name="Add the site").click()
    page.get_by_role("heading", name="Plant West").wait_for()
    zones = {s["name"]: s["timezone"] for s in admin.get("/api/sites").json}
    assert zones["Plant West"] == "America/Los_Angeles"
    expect(page.get_by_label("Time zone")).to_have_value("America/Los_Angeles")  # kept, not re-suggested
    assert_accessible(page)
