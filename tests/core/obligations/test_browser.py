"""The queue of what is owed to regulators in Debian's Chromium: a safety
manager finds it on the home page, soonest due first with the time left on
the site's clock, opens the list, marks one done without JavaScript's help
and waives another; axe-core finds no serious or critical violation, on a
desktop and on a phone."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD
from tests.core.obligations import kinds
from tests.core.obligations.conftest import NAME, with_kinds


@pytest.fixture
def kinds_enabled(monkeypatch):
    """The live application also enables the test plugin's kinds."""
    with_kinds(monkeypatch)
    monkeypatch.setenv("EHS_TEST_PLUGINS", f"osha {NAME}")


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_queue_on_the_home_page_and_closing_from_the_list(kinds_enabled, live, new_page, viewport):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant West", "timezone": "America/Los_Angeles"}).json["id"]
    admin.post_json("/api/users", {"name": "Sam Safety", "email": "sam@acme.test", "role": "safety_manager",
                                   "password": PASSWORD})
    when = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat(timespec="seconds")
    numbers = [admin.post_json("/api/incidents", {"title": title, "type": "injury", "severity": "high",
                                                  "siteId": site, "occurredAt": when}).json["number"]
               for title in ("Fall from ladder", "Crushed hand")]
    admin.post_json(f"/api/test-obligations/{numbers[0]}", {"kind": kinds.FEDERAL, "hours": 24})
    admin.post_json(f"/api/test-obligations/{numbers[1]}", {"kind": kinds.NOTICE, "hours": 8})

    page = new_page(viewport=viewport)
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill("sam@acme.test")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))
    queue = page.get_by_role("region", name="Owed to regulators")
    expect(queue).to_be_visible()
    items = queue.get_by_role("listitem")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("Notice to the crew")
    expect(items.nth(0)).to_contain_text(re.compile(r"(6 hours 59|7 hours 0) minutes left"))
    expect(items.nth(0)).to_contain_text(re.compile(r"P[DS]T"))  # the site's clock
    expect(items.nth(1)).to_contain_text("Report to the authority")
    assert_accessible(page)

    queue.get_by_role("link", name="Mark one done or waive it").click()
    expect(page.get_by_role("heading", name="Owed to regulators", level=1)).to_be_visible()
    assert_accessible(page)
    report = page.get_by_role("listitem").filter(has_text="Report to the authority")
    report.get_by_text("Mark done").first.click()
    report.get_by_label("How it was done").fill("Phoned the area office, ref 4411")
    report.get_by_role("button", name="Mark done").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    notice = page.get_by_role("listitem").filter(has_text="Notice to the crew")
    notice.get_by_text("Waive").first.click()
    notice.get_by_role("button", name="Waive").click()  # no reason: the browser asks for one
    expect(page.get_by_role("listitem").filter(has_text="Report to the authority")).to_have_count(0)
    notice.get_by_label("Why it is not owed").fill("Crew was told at the briefing")
    notice.get_by_role("button", name="Waive").click()
    expect(page.get_by_text("Nothing here.")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Done").click()
    expect(page.get_by_text("Phoned the area office, ref 4411")).to_be_visible()
    assert_accessible(page)
    page.goto(f"{live.url}/")
    expect(page.get_by_role("region", name="Owed to regulators")).to_contain_text(
        "Nothing is owed to a regulator now.")
    assert_accessible(page)
