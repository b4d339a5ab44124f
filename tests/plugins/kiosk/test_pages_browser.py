"""The reporting links' screens in Chromium: axe-core finds no serious or
critical problem on the list (with an error shown), the poster, the report
page a link opens and the page of a revoked link."""

from __future__ import annotations

from playwright.sync_api import expect

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
    expect(page.locator("#name-error")).to_be_visible()
    assert_accessible(page)
    page.get_by_label("Name", exact=True).fill("Canteen poster")
    page.get_by_label("Site").select_option(label="Plant North")
    page.get_by_role("button", name="Create the link").click()
    page.get_by_role("link", name="Poster with QR code for Canteen poster").click()
    page.get_by_label("Preselect an area").select_option(label="Loading dock")
    page.get_by_role("button", name="Update the poster").click()
    assert "area=" in page.url
    # The QR code is an image the browser loads after the page: wait for it
    # (a property read by Playwright's own script; the page's CSP forbids a
    # string evaluated in the page, which wait_for_function would be).
    qr = page.locator("img.poster-qr")
    expect(qr).to_have_js_property("complete", True)
    assert qr.evaluate("img => img.naturalWidth") > 200
    assert_accessible(page)


PHONE = (390, 844)


def test_the_report_page_on_a_phone_errors_by_their_fields_and_a_kept_draft(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    admin.post_json(f"/api/sites/{site}/areas", {"name": "Loading dock"})
    link = admin.post_json("/api/kiosks", {"name": "Gate poster", "siteId": site}).json
    page = new_page(viewport=PHONE)
    page.goto(f"{live.url}/k/{link['token']}")
    assert_accessible(page)
    # Sent empty: the error stands by its field, in plain words, and the summary links to it.
    page.get_by_role("button", name="Send report").click()
    assert page.locator("#title-error").inner_text() == "Please fill this in."
    assert page.locator("#title").get_attribute("aria-invalid") == "true"
    expect(page.locator("#error-summary a[href='#title']")).to_be_visible()
    assert_accessible(page)
    # Refused by the server (a time in the future): beside "When?", not "occurredAt: …".
    page.get_by_label("What happened? (short title)").fill("Pallet blocking the exit")
    page.locator("#occurredAt").fill("2099-01-01T10:00")
    page.get_by_role("button", name="Send report").click()
    error = page.locator("#occurredAt-error")
    error.wait_for(state="visible")
    assert "occurredAt" not in error.inner_text() and "occurredAt" not in page.locator("#status").inner_text()
    assert page.locator("#title-error").is_hidden()
    page.locator("#occurredAt").fill("2024-05-01T08:15")
    # The draft is kept in this window, restored after a reload only when
    # asked for (a report sent without a network: test_offline_browser).
    page.reload()
    assert page.get_by_label("What happened? (short title)").input_value() == ""
    assert_accessible(page)
    page.get_by_role("button", name="Continue that report").click()
    page.get_by_text("Your unsent report was restored.").wait_for()
    assert page.get_by_label("What happened? (short title)").input_value() == "Pallet blocking the exit"
    page.get_by_role("button", name="Send report").click()
    page.locator("#reference").get_by_text("INC-0001").wait_for()
    assert_accessible(page)
    assert admin.get("/api/incidents/1").json["title"] == "Pallet blocking the exit"
    # Sent: nothing of it is kept.
    page.reload()
    assert page.locator("#draft-offer").is_hidden()
    assert page.get_by_label("What happened? (short title)").input_value() == ""


def test_a_revoked_link_says_what_to_do(live, new_page):
    admin = live.admin()
    link = admin.post_json("/api/kiosks", {"name": "Old poster"}).json
    admin.patch_json(f"/api/kiosks/{link['id']}", {"revoked": True})
    page = new_page(viewport=PHONE)
    response = page.goto(f"{live.url}/k/{link['token']}")
    assert response.status == 404
    expect(page.get_by_role("heading", name="This reporting link does not work")).to_be_visible()
    expect(page.get_by_text("ask your supervisor or safety team for the new link")).to_be_visible()
    assert_accessible(page)


def type_a_report(page) -> None:
    page.get_by_label("What happened? (short title)").fill("Deep cut on the press")
    page.get_by_label("What happened? (details)").fill("Went to the ER, I am diabetic")
    page.get_by_label("Your name").fill("Kim Lee")


def form_is_empty(page) -> bool:
    return all(page.locator(f"#{name}").input_value() == ""
               for name in ("title", "description", "reporterName"))


def test_an_abandoned_report_is_not_shown_to_the_next_person(live, new_page):
    """kiosk.js kept every keystroke in localStorage until sent, and the
    next person on a shared tablet read "Deep cut, went to the ER, I am
    diabetic — Your unsent report was restored". A draft now lives in the
    window only, is cleared after 10 minutes without typing and by "Start
    over", and is restored only when asked for."""
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    link = admin.post_json("/api/kiosks", {"name": "Canteen tablet", "siteId": site}).json
    address = f"{live.url}/k/{link['token']}"
    page = new_page(viewport=PHONE)
    page.clock.install()
    page.goto(address)
    # Typed and left: after the idle time the form is empty, and so is the page opened again.
    type_a_report(page)
    page.clock.fast_forward("09:00")
    assert page.get_by_label("What happened? (details)").input_value() == "Went to the ER, I am diabetic"
    page.clock.fast_forward("01:01")
    page.get_by_text("The unsent report was cleared: nobody typed for 10 minutes.").wait_for()
    assert form_is_empty(page)
    page.reload()
    assert form_is_empty(page) and page.locator("#draft-offer").is_hidden()
    # Typed and "Start over": nothing is left either.
    type_a_report(page)
    page.get_by_role("button", name="Start over").click()
    assert form_is_empty(page)
    page.get_by_text("The report was cleared.").wait_for()
    page.reload()
    assert form_is_empty(page) and page.locator("#draft-offer").is_hidden()
    # Typed and the page opened again in the same window: nothing is shown
    # until asked for; the next person starts a new report and the old one is gone.
    type_a_report(page)
    page.reload()
    assert form_is_empty(page)
    expect(page.get_by_text("A report was started on this device")).to_be_visible()
    assert "diabetic" not in page.content()
    page.get_by_role("button", name="Start a new report").click()
    assert form_is_empty(page) and page.locator("#draft-offer").is_hidden()
    page.reload()
    assert page.locator("#draft-offer").is_hidden()
    # A draft found after the idle time is not offered at all.
    type_a_report(page)
    page.clock.pause_at(page.evaluate("() => Date.now()") + 11 * 60 * 1000)
    page.reload()
    assert form_is_empty(page) and page.locator("#draft-offer").is_hidden()
    # Another window (another visitor's page) never sees a draft.
    other = new_page(viewport=PHONE)
    other.goto(address)
    assert form_is_empty(other) and other.locator("#draft-offer").is_hidden()
    assert other.evaluate("() => localStorage.length") == 0
