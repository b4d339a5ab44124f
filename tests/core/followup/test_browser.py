"""Follow-up without a name in Chromium (issue #39 item 3): a report filed
on a reporting link without a name shows its code once; a supervisor asks
a question on the incident page; the reporter, with nothing but the code,
opens /f/<code>, reads the question and answers; the supervisor sees the
answer. axe-core finds no serious or critical problem on any of these
screens, at phone size for the reporter."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from tests.core.ui.test_browser import add_user, sign_in

PHONE = (390, 844)


def test_an_anonymous_reporter_reads_and_answers_the_teams_question_by_code(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    link = admin.post_json("/api/kiosks", {"name": "Gate poster", "siteId": site}).json
    supervisor = add_user(admin, "supervisor", "Sue Supervisor")

    # The report, on the link, without a name: the code is shown once, with the reference.
    kiosk = new_page(viewport=PHONE)
    kiosk.goto(f"{live.url}/k/{link['token']}")
    kiosk.get_by_label("What happened? (short title)").fill("Forklift too fast in the yard")
    kiosk.locator("#occurredAt").fill("2024-05-01T08:15")
    kiosk.get_by_role("button", name="Send report").click()
    kiosk.locator("#reference").get_by_text("INC-0001").wait_for()
    code = kiosk.locator("#follow-up-code").inner_text()
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", code)
    expect(kiosk.locator("#follow-up-link")).to_have_attribute("href", f"{live.url}/f/{code}")
    qr = kiosk.locator("#follow-up-qr")
    expect(qr).to_have_js_property("complete", True)
    assert qr.evaluate("img => img.naturalWidth") > 100
    assert_accessible(kiosk)

    # The team asks, on the incident page (htmx, in place).
    team = new_page()
    sign_in(team, live, supervisor)
    team.goto(f"{live.url}/incidents/1")
    panel = team.locator("#panel-follow_up")
    expect(panel.get_by_role("heading", name="Follow-up with the reporter")).to_be_visible()
    assert_accessible(team)
    panel.get_by_label("Message to the reporter").fill("Which forklift was it? The blue one?")
    panel.get_by_role("button", name="Send to the reporter").click()
    expect(panel.get_by_text("Which forklift was it? The blue one?")).to_be_visible()
    expect(panel.get_by_label("Message to the reporter")).to_have_value("")

    # The reporter, with the code alone (a fresh browser, no cookies).
    reporter = new_page(viewport=PHONE)
    reporter.goto(f"{live.url}/f/{code}")
    expect(reporter.get_by_role("heading", name="Your report INC-0001")).to_be_visible()
    expect(reporter.get_by_text("Which forklift was it? The blue one?")).to_be_visible()
    assert_accessible(reporter)
    reporter.get_by_label("Write to the safety team").fill("Yes, the blue one, around 8 in the morning.")
    reporter.get_by_role("button", name="Send", exact=True).click()
    expect(reporter.get_by_text("Your message was sent to the safety team.")).to_be_visible()
    expect(reporter.get_by_text("Yes, the blue one, around 8 in the morning.")).to_be_visible()
    assert_accessible(reporter)

    # The team sees the answer.
    team.reload()
    expect(team.locator("#panel-follow_up").get_by_text("Yes, the blue one, around 8 in the morning.")) \
        .to_be_visible()
    assert_accessible(team)

    # A wrong code: a page in plain words, accessible too.
    reporter.goto(f"{live.url}/f/{'x' * 32}")
    expect(reporter.get_by_role("heading", name="No report has this code")).to_be_visible()
    assert_accessible(reporter)
