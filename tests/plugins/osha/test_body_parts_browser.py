"""The body picker in Debian's Chromium (issue #39 item 5): clicking a
region of the front or back picture chooses that OIICS code in the form's
select and writes its title as the words on the forms (until they are typed
over); the keyboard's way is the select itself. axe-core finds no serious or
critical violation at phone and desktop sizes, and the phone needs no
sideways scrolling; the analytics page's count by body part passes axe too."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD

HAND = "Hand(s), except finger(s)"


def sign_in(page, live, email: str) -> None:
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))


@pytest.fixture
def case_page(live):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    admin.post_json("/api/users", {"name": "Sue Safety", "email": "sue@acme.test", "role": "safety_manager",
                                   "password": PASSWORD})
    number = admin.post_json("/api/incidents", {
        "title": "Hand caught in press", "type": "injury", "severity": "medium", "siteId": site,
        "occurredAt": "2025-03-10T09:00:00-05:00"}).json["number"]
    case = admin.post_json(f"/api/osha/incidents/{number}/cases", {"name": "Jane Roe"}).json
    return admin, number, f"{live.url}/osha/cases/{case['id']}"


def region(page, code: str, side: int = 0):
    """A region of the picture: side 0 the front figure, 1 the back."""
    return page.locator("[data-body-picker] svg > g").nth(side).locator(f'.region[data-code="{code}"]').first


def test_clicking_the_picture_chooses_the_code_on_a_desktop(live, new_page, case_page):
    admin, number, url = case_page
    page = new_page()
    sign_in(page, live, "sue@acme.test")
    page.goto(url)
    select = page.get_by_label("Part of the body (OIICS code)")
    words = page.get_by_label("Words written on the forms for the part of the body")
    expect(page.locator("[data-body-picker]")).to_be_visible()  # the script shows the picture
    region(page, "44").click()
    expect(select).to_have_value("44")
    expect(words).to_have_value(HAND)
    expect(region(page, "44")).to_have_class(re.compile(r"\bchosen\b"))
    assert_accessible(page)
    # Another region: the prefilled words follow; typed words would stay.
    region(page, "45").click()
    expect(select).to_have_value("45")
    expect(words).to_have_value("Finger(s), fingernail(s)")
    words.fill("Left index finger")
    region(page, "43", side=1).click()
    expect(select).to_have_value("43")
    expect(words).to_have_value("Left index finger")
    page.get_by_role("button", name="Save the case").click()
    page.get_by_text("Saved.").wait_for()
    stored = admin.get(f"/api/osha/incidents/{number}/cases").json[0]
    assert (stored["bodyPartCode"], stored["bodyPart"]) == ("43", "Left index finger")
    assert_accessible(page)
    # The analytics page counts the case by its part of the body.
    page.goto(f"{live.url}/analytics?from=2025-03-01&to=2025-03-31")
    section = page.get_by_role("region", name="Injuries and illnesses by part of the body")
    expect(section.get_by_role("row", name="Wrist(s) 1")).to_be_visible()
    assert_accessible(page)


def test_the_picker_on_a_phone_and_with_the_keyboard(live, new_page, case_page):
    admin, number, url = case_page
    page = new_page(viewport=(390, 844))
    sign_in(page, live, "sue@acme.test")
    page.goto(url)
    region(page, "32", side=1).scroll_into_view_if_needed()
    region(page, "32", side=1).click()  # the back: only on the back figure
    select = page.get_by_label("Part of the body (OIICS code)")
    words = page.get_by_label("Words written on the forms for the part of the body")
    expect(select).to_have_value("32")
    expect(words).to_have_value("Back, including spine, spinal cord")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    box = page.locator("[data-body-picker] svg").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert_accessible(page)
    # The keyboard's way: the select itself, which the picture follows.
    select.focus()
    page.keyboard.press("ArrowDown")  # the next code after 32
    expect(select).to_have_value("33")
    expect(words).to_have_value("Abdomen")
    expect(region(page, "33")).to_have_class(re.compile(r"\bchosen\b"))
    select.select_option("12")
    expect(words).to_have_value("Eye(s)")
    page.get_by_role("button", name="Save the case").click()
    page.get_by_text("Saved.").wait_for()
    stored = admin.get(f"/api/osha/incidents/{number}/cases").json[0]
    assert (stored["bodyPartCode"], stored["bodyPart"]) == ("12", "Eye(s)")
