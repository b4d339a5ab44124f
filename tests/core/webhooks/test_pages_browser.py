"""The webhooks page in Debian's Chromium, on a desktop and a phone: an
admin adds a webhook, copies its secret, a report is delivered, and its
deliveries are listed; axe-core finds no serious or critical problem."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD, report_body


@pytest.fixture
def live_settings():
    return {"webhooks.allow_private": "true", "webhooks.http_hosts": "127.0.0.1"}


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_an_admin_adds_a_webhook_and_reads_its_deliveries(live, new_page, receiver, viewport):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "UTC"}).json["id"]
    page = new_page(viewport=viewport)
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill("admin@acme.test")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live.url}/admin/webhooks")
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    assert_accessible(page)

    page.get_by_label("Address").fill(receiver.url)
    page.get_by_label("Description").fill("Ticketing")
    page.get_by_role("checkbox", name=re.compile("incident.created")).check()
    page.get_by_role("button", name="Add the webhook").click()
    expect(page.get_by_text("Copy its signing secret now")).to_be_visible()
    assert page.locator("code").inner_text().startswith("whsec_")
    assert_accessible(page)

    admin.post_json("/api/incidents", report_body(site))
    receiver.wait(1)
    page.get_by_role("link", name=receiver.url).click()
    expect(page.get_by_role("cell", name="Delivered")).to_be_visible()
    assert_accessible(page)
