"""The people panel in Debian's Chromium, on a desktop and a phone: a
supervisor names a witness with their statement (htmx swaps the panel,
the announcement says who was added), edits them on their own page, and
axe-core finds no serious or critical problem on either."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD, report_body


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_supervisor_names_a_witness_with_their_statement(live, new_page, viewport):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "UTC"}).json["id"]
    number = admin.post_json("/api/incidents", report_body(site)).json["number"]
    page = new_page(viewport=viewport)
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill("admin@acme.test")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live.url}/incidents/{number}")
    panel = page.locator("#people")
    expect(panel.get_by_role("heading", name="People involved")).to_be_visible()
    expect(panel.get_by_text("Nobody named yet.")).to_be_visible()
    assert_accessible(page)

    panel.get_by_label("Name", exact=True).fill("Wanda Witness")
    panel.get_by_label("Involved as").select_option("witness")
    panel.get_by_label("Works here as").select_option("contractor")
    panel.get_by_label("What they said or wrote").fill("I saw the pallet tip over.")
    panel.get_by_role("button", name="Add person").click()
    panel = page.locator("#people")
    expect(panel.get_by_text("I saw the pallet tip over.")).to_be_visible()
    expect(panel.locator("strong", has_text="Wanda Witness")).to_be_visible()
    expect(panel.get_by_role("button", name="Remove Wanda Witness")).to_be_visible()
    assert page.url.endswith(f"/incidents/{number}")  # swapped in place by htmx
    assert_accessible(page)

    panel.get_by_role("link", name="Edit Wanda Witness").click()
    expect(page.get_by_role("heading", name="Edit Wanda Witness")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("Contact").fill("wanda@example.com")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#people").get_by_text("wanda@example.com")).to_be_visible()
