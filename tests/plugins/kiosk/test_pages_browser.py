"""The reporting links' screens in Chromium: axe-core finds no serious or
critical problem on the list (with an error shown), the poster, the report
page a link opens and the page of a revoked link."""

from __future__ import annotations

from ehs_core.browser_testing import assert_accessible
from tests.core.ui.test_browser import sign_in


def test_the_links_screens_pass_axe(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    admin.post_json(f"/api/sites/{site}/areas", {"name": "Loading dock"})
    page = new_page()
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/admin/links")
    assert_accessible(page)
    page.get_by_role("button", name="Create the link").click()  # no name: the error stands by the field
    assert page.locator("#name-error").is_visible()
    assert_accessible(page)
    page.get_by_label("Name", exact=True).fill("Canteen poster")
    page.get_by_label("Site").select_option(label="Plant North")
    page.get_by_role("button", name="Create the link").click()
    page.get_by_role("link", name="Poster with QR code for Canteen poster").click()
    page.get_by_label("Preselect an area").select_option(label="Loading dock")
    page.get_by_role("button", name="Update the poster").click()
    assert "area=" in page.url
    assert page.locator("img.poster-qr").evaluate("img => img.naturalWidth") > 200
    assert_accessible(page)
