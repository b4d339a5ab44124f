"""The safety team's screens in Debian's Chromium, as people use them: an
invitation ends on the home page; a report with a photo goes from the
report form through every workflow step to closed, each step by the role
the workflow needs; the list filters and exports; a mail's link opens its
incident. axe-core checks every screen on the way (no serious or critical
violation), on a desktop and on a phone-sized window."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD, mail_text
from tests.core.attachments import samples

PHONE = (390, 844)


def sign_in(page, live, email: str, password: str = PASSWORD) -> None:
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))


def add_user(admin, role: str, name: str) -> str:
    email = f"{role}@acme.test"
    admin.post_json("/api/users", {"name": name, "email": email, "role": role, "password": PASSWORD})
    return email


def link_in(inbox, address: str) -> str:
    for message in reversed(inbox.messages):
        if message["To"] == address:
            body = mail_text(message)
            return re.search(r"(http://127\.0\.0\.1:\d+/\S+)", body)[1]
    raise AssertionError(f"no mail to {address}")


def test_first_run_setup_then_invitation_to_home(live, new_page, smtp_server):
    page = new_page()
    page.goto(live.url + "/")
    expect(page.get_by_role("heading", name="Set up the service")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("Organization name").fill("Acme Works")
    page.get_by_label("Your name").fill("Ada Admin")
    page.get_by_label("Your email").fill("admin@acme.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create the organization").click()
    expect(page.get_by_role("heading", name="Hello, Ada Admin")).to_be_visible()
    assert_accessible(page)

    smtp_server.inbox.clear()
    live.admin().post_json("/api/users", {"name": "Ivy Invitee", "email": "ivy@acme.test",
                                          "role": "reporter"})
    smtp_server.inbox.wait(1)
    invitee = new_page(viewport=PHONE)
    invitee.goto(link_in(smtp_server.inbox, "ivy@acme.test"))
    expect(invitee.get_by_role("heading", name="Choose your password")).to_be_visible()
    assert "token" not in invitee.url  # forgotten from the address bar
    assert_accessible(invitee)
    invitee.get_by_label("New password", exact=True).fill("ivy's long passphrase")
    invitee.get_by_label("Repeat the new password").fill("ivy's long passphrase")
    invitee.get_by_role("button", name="Save password and sign in").click()
    expect(invitee.get_by_role("heading", name="Hello, Ivy Invitee")).to_be_visible()
    assert_accessible(invitee)


def test_a_report_goes_from_the_form_to_closed(live, new_page, tmp_path: Path, smtp_server):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "America/New_York"}).json["id"]
    admin.post_json(f"/api/sites/{site}/areas", {"name": "Loading dock"})
    add_user(admin, "reporter", "Rita Reporter")
    add_user(admin, "supervisor", "Sam Supervisor")
    add_user(admin, "safety_manager", "Sue Safety")
    photo = tmp_path / "spill.png"
    photo.write_bytes(samples.PNG)

    # The reporter files from a phone.
    reporter = new_page(viewport=PHONE)
    sign_in(reporter, live, "reporter@acme.test")
    assert_accessible(reporter)
    reporter.get_by_role("button", name="Menu").click()  # folded on a phone
    reporter.get_by_role("link", name="Report", exact=True).click()
    assert_accessible(reporter)
    reporter.get_by_label("Hazard").check()
    reporter.get_by_label("High").check()
    reporter.get_by_label("Title").fill("Oil on the floor by press 3")
    reporter.get_by_label("Area").select_option(label="Loading dock")
    reporter.get_by_label("What happened?").fill("A puddle of hydraulic oil, about a metre wide.")
    reporter.get_by_label("Photos").set_input_files(str(photo))
    reporter.get_by_role("button", name="Send report").click()
    heading = reporter.get_by_role("heading", name=re.compile(r"Thank you — your report is INC-\d{4}"))
    expect(heading).to_be_visible()
    reference = re.search(r"INC-\d{4}", heading.inner_text())[0]
    number = int(reference[4:])
    assert_accessible(reporter)
    reporter.get_by_role("button", name="Menu").click()
    reporter.get_by_role("link", name="Incidents", exact=True).click()
    expect(reporter.get_by_role("link", name=reference)).to_be_visible()
    # The notice mailed to safety managers links to the page, through sign-in.
    smtp_server.inbox.wait(1)
    mail_link = link_in(smtp_server.inbox, "safety_manager@acme.test")
    assert mail_link.endswith(f"/incidents/{number}")
    manager = new_page()
    manager.goto(mail_link)
    manager.get_by_label("Email", exact=True).fill("safety_manager@acme.test")
    manager.get_by_label("Password", exact=True).fill(PASSWORD)
    manager.get_by_role("button", name="Sign in").click()
    expect(manager.get_by_role("heading", name="Oil on the floor by press 3")).to_be_visible()
    expect(manager.get_by_role("img", name=re.compile("Photo"))).to_be_visible()
    assert_accessible(manager)

    # A supervisor finds it waiting for triage on the home page.
    supervisor = new_page()
    sign_in(supervisor, live, "supervisor@acme.test")
    waiting = supervisor.get_by_role("region", name="Waiting for triage")
    waiting.get_by_role("link", name=re.compile(reference)).click()
    supervisor.get_by_role("button", name="Move to Triage").click()
    expect(supervisor.get_by_text("The incident moved on.")).to_be_visible()
    supervisor.get_by_role("button", name="Move to Investigation").click()
    blocked = supervisor.get_by_role("button", name="Move to Actions")
    assert blocked.get_attribute("aria-disabled") == "true"
    expect(supervisor.get_by_text("Record at least one root cause first")).to_be_visible()
    # The investigation's own screens come with "Web app II"; its data through the API.
    boss = live.client()
    boss.login("supervisor@acme.test")
    boss.post_json(f"/api/incidents/{number}/root-causes",
                   {"category": "equipment", "description": "Leaking hose", "whys": ["Worn out"]})
    supervisor.reload()
    supervisor.get_by_label("Note").fill("Hose to be replaced")
    supervisor.get_by_role("button", name="Move to Actions").click()
    me = boss.get("/api/auth/me").json["user"]["id"]
    action = boss.post_json(f"/api/incidents/{number}/actions",
                            {"title": "Replace the hose", "assigneeId": me})
    boss.patch_json(f"/api/actions/{action.json['id']}", {"status": "done"})
    supervisor.reload()
    supervisor.get_by_role("button", name="Move to Verification").click()
    assert supervisor.get_by_text("Hose to be replaced").is_visible()  # the note, kept as a comment

    # Only a safety manager verifies and closes.
    assert supervisor.get_by_role("button", name="Move to Closed").count() == 0
    manager.reload()
    closing = manager.get_by_role("button", name="Move to Closed")
    assert closing.get_attribute("aria-disabled") == "true"
    officer = live.client()
    officer.login("safety_manager@acme.test")
    officer.patch_json(f"/api/actions/{action.json['id']}", {"status": "verified"})
    manager.reload()
    manager.get_by_role("button", name="Move to Closed").click()
    expect(manager.get_by_text("Status: Closed")).to_be_visible()
    assert_accessible(manager)
    history = manager.locator("#timeline")
    assert "triage → investigation" in history.inner_text()


def test_filter_the_list_and_export_it(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    occurred = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=3)).isoformat()
    for title, kind in (("Oil spill", "environmental"), ("Cut finger", "injury"), ("Loose rail", "hazard")):
        admin.post_json("/api/incidents", {"title": title, "type": kind, "severity": "low",
                                           "occurredAt": occurred, "siteId": site})
    page = new_page()
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/incidents")
    assert_accessible(page)
    page.get_by_text("Type, severity, status and site").click()
    page.get_by_label("Injury").check()
    page.get_by_label("Hazard").check()
    page.wait_for_url(re.compile(r"type=injury.*type=hazard|type=hazard.*type=injury"))
    results = page.locator("#results")
    assert "2 incidents" in results.inner_text()
    assert "Oil spill" not in results.inner_text()
    expect(page.locator("#results tbody tr").first).to_contain_text("Loose rail")  # the newest first
    page.get_by_label("Sort by").select_option(label="Oldest first")
    page.wait_for_url(re.compile(r"sort=oldest"))
    expect(page.locator("#results tbody tr").first).to_contain_text("Cut finger")
    page.get_by_label("Name for these filters").fill("Hurt or could hurt")
    page.get_by_role("button", name="Save view").click()
    expect(page.get_by_text("Saved.")).to_be_visible()
    page.goto(f"{live.url}/incidents")
    page.get_by_role("link", name="Hurt or could hurt").click()
    assert "2 incidents" in page.locator("#results").inner_text()
    with page.expect_download() as download:
        page.get_by_role("link", name="Export these as CSV").click()
    csv_text = Path(download.value.path()).read_text(encoding="utf-8")
    assert "Cut finger" in csv_text and "Loose rail" in csv_text and "Oil spill" not in csv_text
    assert csv_text.index("Cut finger") < csv_text.index("Loose rail")  # the saved view's order
    page.get_by_label("Incident number").fill("INC-0001")
    page.get_by_role("button", name="Go").click()
    expect(page.get_by_role("heading", name="Oil spill")).to_be_visible()
@pytest.mark.parametrize("viewport", [(1280, 900), PHONE], ids=["desktop", "phone"])
def test_every_screen_passes_axe(live, new_page, viewport):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    number = admin.post_json("/api/incidents", {
        "title": "Broken step", "type": "near_miss", "severity": "medium",
        "occurredAt": (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat(),
        "siteId": site}).json["number"]
    page = new_page(viewport=viewport)
    page.goto(f"{live.url}/sign-in")
    assert_accessible(page)
    sign_in(page, live, "admin@acme.test")
    for path in ("/", "/incidents", "/incidents/new", f"/incidents/{number}", f"/incidents/{number}/edit",
                 "/account", "/no/such/page"):
        page.goto(live.url + path)
        assert_accessible(page)
        # Nothing but a data table scrolls sideways (WCAG 2.2, 1.4.10 Reflow): the
        # menu's entries wrap onto more lines on a phone, every one of them in view.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert page.evaluate("[...document.querySelectorAll('.mainnav a')].every(a => "
                             "a.getBoundingClientRect().right <= window.innerWidth)")


def test_on_a_phone_the_menu_folds_behind_a_menu_button(live, new_page):
    """Issue #36 item 14: on a phone the menu's entries no longer fill the
    screen above every page; the Menu button opens and closes them."""
    live.admin()
    page = new_page(viewport=PHONE)
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/incidents")
    menu = page.get_by_role("button", name="Menu")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Actions")).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    entry = page.get_by_role("navigation", name="Main").get_by_role("link", name="Actions")
    expect(entry).to_be_visible()
    assert page.evaluate("[...document.querySelectorAll('.mainnav a')].every(a => "
                         "a.getBoundingClientRect().right <= window.innerWidth)")
    assert_accessible(page)
    page.keyboard.press("Escape")
    expect(menu).to_be_focused()
    expect(entry).to_be_hidden()
    desktop = new_page()
    sign_in(desktop, live, "admin@acme.test")
    expect(desktop.get_by_role("button", name="Menu")).to_be_hidden()
    expect(desktop.get_by_role("navigation", name="Main").get_by_role("link", name="Actions")).to_be_visible()


def photo(red: int, green: int, blue: int) -> bytes:
    import io

    from PIL import Image
    target = io.BytesIO()
    Image.new("RGB", (1200, 800), (red, green, blue)).save(target, format="JPEG")
    return target.getvalue()


@pytest.mark.parametrize("viewport", [(1280, 900), PHONE], ids=["desktop", "phone"])
def test_photos_open_in_a_viewer_on_the_page(live, new_page, viewport):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    occurred = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=3)).isoformat()
    number = admin.post_json("/api/incidents", {"title": "Oil spill", "type": "hazard", "severity": "low",
                                                "occurredAt": occurred, "siteId": site}).json["number"]
    ids = [admin.post(f"/api/incidents/{number}/attachments",
                      upload_files=[("file", name, photo(*rgb), "image/jpeg")]).json["id"]
           for name, rgb in (("left.jpg", (200, 30, 30)), ("right.jpg", (30, 30, 200)))]
    page = new_page(viewport=viewport)
    sign_in(page, live, "admin@acme.test")
    page.goto(f"{live.url}/incidents/{number}")
    first = page.get_by_role("link", name="Photo left.jpg")
    expect(first.locator("img")).to_have_attribute("src", f"/api/attachments/{ids[0]}/preview")
    first.click()
    viewer = page.get_by_role("dialog")
    expect(viewer).to_be_visible()
    expect(viewer.locator("img")).to_have_attribute("src", f"/api/attachments/{ids[0]}")
    expect(viewer).to_contain_text("Photo left.jpg (1 / 2)")
    assert page.url.endswith(f"/incidents/{number}")  # no new tab, no navigation
    assert_accessible(page)
    page.keyboard.press("ArrowRight")
    expect(viewer).to_contain_text("Photo right.jpg (2 / 2)")
    expect(viewer.locator("img")).to_have_attribute("src", f"/api/attachments/{ids[1]}")
    viewer.get_by_role("button", name="Next photo").click()
    expect(viewer).to_contain_text("Photo left.jpg (1 / 2)")
    viewer.get_by_role("button", name="Previous photo").click()
    page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    expect(page.get_by_role("link", name="Photo right.jpg")).to_be_focused()  # where the viewer left off
