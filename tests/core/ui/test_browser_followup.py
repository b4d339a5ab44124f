"""The work between "reported" and "closed" in Debian's Chromium (Web app
II): the supervisor investigates with two causes and a why chain in the
workspace and adds actions from a cause; the reporter, assigned one, opens
it from the mail on a phone and marks it done; the safety manager verifies
in bulk and closes. axe-core checks each new screen."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD
from tests.core.ui.test_browser import PHONE, add_user, link_in, sign_in


def test_investigate_act_verify_and_close(live, new_page, smtp_server):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "America/Chicago"}).json["id"]
    add_user(admin, "reporter", "Rita Reporter")
    add_user(admin, "supervisor", "Sam Supervisor")
    add_user(admin, "safety_manager", "Sue Safety")
    rita = live.client()
    rita.login("reporter@acme.test")
    number = rita.post_json("/api/incidents", {
        "title": "Oil on the floor by press 3", "type": "hazard", "severity": "medium", "siteId": site,
        "occurredAt": (dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)).isoformat()}).json["number"]

    supervisor = new_page()
    sign_in(supervisor, live, "supervisor@acme.test")
    supervisor.goto(f"{live.url}/incidents/{number}")
    supervisor.get_by_role("button", name="Move to Triage").click()
    supervisor.get_by_role("button", name="Move to Investigation").click()

    # The workspace: lead and method, saved in place.
    supervisor.get_by_label("Lead").select_option(label="Sam Supervisor (Supervisor)")
    supervisor.get_by_label("Method").fill("5 whys")
    supervisor.get_by_role("button", name="Save investigation").click()
    expect_text(supervisor.locator("#announcer"), "The investigation was saved.")
    # Held back until there is a root cause ...
    move_on = supervisor.locator("#next-step").get_by_role("button", name="Move to Actions")
    expect(move_on).to_have_attribute("aria-disabled", "true")
    # Two causes; the first one's why chain grown one answer at a time.
    for category, description in (("equipment", "The hydraulic hose burst"),
                                  ("training", "Nobody knew the inspection routine")):
        supervisor.get_by_label("Category", exact=True).fill(category)
        supervisor.get_by_label("What is the cause?").fill(description)
        supervisor.get_by_role("button", name="Add root cause").click()
        expect_text(supervisor.locator("#investigation"), description)
        # ... and the next step follows the change without a reload (issue #36 item 3).
        expect(move_on).not_to_have_attribute("aria-disabled", "true")
    first = supervisor.locator(".cause").first
    for n, answer in enumerate(("It was worn through", "It was never inspected"), start=1):
        label = "Why did this happen?" if n == 1 else f"Why? (answer {n})"
        field = first.get_by_label(label)
        field.fill(answer)
        field.press("Enter")
        expect_text(first, answer)
        # Focus moves to the same cause's next answer (once htmx has swapped
        # the workspace in: waited for, as a person's next keystroke would be).
        supervisor.wait_for_function("id => document.activeElement && document.activeElement.id === id",
                                     arg=first.locator("input[name=answer]").get_attribute("id"),
                                     timeout=5000)
    bones = supervisor.locator(".fishbone .bone h4").all_inner_texts()
    assert [b.split(" (")[0].lower() for b in bones] == ["equipment", "training"]
    assert_accessible(supervisor)

    # An action for the first cause, assigned to the reporter.
    first.get_by_role("link", name="Add a corrective action for this cause").click()
    assert supervisor.get_by_label("For the cause").input_value() != ""
    supervisor.get_by_label("What is to be done?").fill("Replace the hose")
    supervisor.get_by_label("Assignee").select_option(label="Rita Reporter (Reporter)")
    supervisor.get_by_role("button", name="Add action").click()
    expect(supervisor.get_by_text("The corrective action was added.")).to_be_visible()
    supervisor.get_by_role("button", name="Move to Actions").click()
    expect(supervisor.get_by_text("Status: Actions")).to_be_visible()
    # The reporter opens the action from the mail, on a phone, and marks it done.
    smtp_server.inbox.wait(1)
    link = link_in(smtp_server.inbox, "reporter@acme.test")
    assert re.search(r"/actions/\d+$", link)
    reporter = new_page(viewport=PHONE)
    reporter.goto(link)  # through sign-in, back to the action
    reporter.get_by_label("Email", exact=True).fill("reporter@acme.test")
    reporter.get_by_label("Password", exact=True).fill(PASSWORD)
    reporter.get_by_role("button", name="Sign in").click()
    expect(reporter.get_by_role("heading", name="Replace the hose")).to_be_visible()
    assert_accessible(reporter)
    reporter.get_by_label("Add a note").fill("New hose fitted")
    reporter.get_by_role("button", name="Add note").click()
    reporter.get_by_role("button", name="Mark as done").click()
    expect(reporter.get_by_text("Status: Done")).to_be_visible()
    reporter.get_by_role("button", name="Menu").click()  # folded on a phone
    reporter.get_by_role("link", name=re.compile("^Actions")).click()
    reporter.get_by_role("link", name="Done", exact=True).click()
    expect(reporter.get_by_role("link", name="Replace the hose")).to_be_visible()
    assert_accessible(reporter)

    supervisor.reload()
    supervisor.get_by_role("button", name="Move to Verification").click()

    # The safety manager verifies in bulk from the list and closes.
    manager = new_page()
    sign_in(manager, live, "safety_manager@acme.test")
    manager.get_by_role("link", name=re.compile("^Actions")).click()
    manager.get_by_role("link", name="Everyone's").click()
    manager.get_by_role("link", name="Awaiting verification").click()
    assert_accessible(manager)
    manager.get_by_label("Verify Replace the hose").check()
    manager.get_by_role("button", name="Verify the ticked actions").click()
    expect(manager.get_by_text("The actions were verified.")).to_be_visible()
    manager.goto(f"{live.url}/incidents/{number}")
    manager.get_by_role("button", name="Move to Closed").click()
    expect(manager.get_by_text("Status: Closed")).to_be_visible()
    assert_accessible(manager)


def expect_text(locator, text: str) -> None:

    expect(locator).to_contain_text(text)


@pytest.mark.parametrize("viewport", [(1280, 900), PHONE], ids=["desktop", "phone"])
def test_the_new_screens_pass_axe(live, new_page, viewport):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    number = admin.post_json("/api/incidents", {
        "title": "Broken step", "type": "near_miss", "severity": "medium", "siteId": site,
        "occurredAt": (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()}).json["number"]
    me = admin.get("/api/auth/me").json["user"]["id"]
    cause = admin.post_json(f"/api/incidents/{number}/root-causes",
                            {"category": "design", "description": "Step too narrow", "whys": ["Old stairs"]})
    action = admin.post_json(f"/api/incidents/{number}/actions", {
        "title": "Widen the step", "assigneeId": me, "rootCauseId": cause.json["id"],
        "dueDate": (dt.date.today() - dt.timedelta(days=2)).isoformat()}).json
    page = new_page(viewport=viewport)
    sign_in(page, live, "admin@acme.test")
    for path in (f"/incidents/{number}", "/actions", "/actions?scope=all&filter=overdue",
                 f"/actions/{action['id']}"):
        page.goto(live.url + path)
        assert_accessible(page)


def test_the_people_page_passes_axe(live, new_page):
    admin = live.admin()
    admin.post_json("/api/users", {"name": "Ivy Invitee", "email": "ivy@acme.test", "role": "reporter"})
    page = new_page()
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/admin/users")
    assert_accessible(page)
    # Sent empty: the errors stand next to their fields.
    page.get_by_role("button", name="Send the invitation", exact=True).click()
    expect(page.locator("#name-error")).to_be_visible()
    assert_accessible(page)
