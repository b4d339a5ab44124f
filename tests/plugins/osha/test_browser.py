"""The OSHA screens in Debian's Chromium: a safety manager enters a case
from an injury incident, watches it become recordable with its reason,
fills in the hours, downloads the 300A PDF and the ITA files. axe-core
checks every screen on the way (no serious or critical violation)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import expect
from pypdf import PdfReader

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD
from tests.plugins.osha import ESTABLISHMENT


def sign_in(page, live, email: str) -> None:
    page.goto(f"{live.url}/sign-in")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))


def test_a_safety_manager_keeps_the_records(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "America/Chicago"}).json["id"]
    admin.patch_json(f"/api/sites/{site}", ESTABLISHMENT)
    admin.post_json("/api/users", {"name": "Sue Safety", "email": "sue@acme.test", "role": "safety_manager",
                                   "password": PASSWORD})
    number = admin.post_json("/api/incidents", {
        "title": "Hand caught in press", "type": "injury", "severity": "medium", "siteId": site,
        "occurredAt": "2025-03-10T09:00:00-05:00"}).json["number"]

    page = new_page()
    sign_in(page, live, "sue@acme.test")
    assert page.get_by_role("heading", name="Injury records").is_visible()  # the home card
    assert_accessible(page)
    page.goto(f"{live.url}/incidents/{number}")
    panel = page.get_by_role("region", name="Injured or ill people")
    panel.get_by_label("Name of the injured or ill person").fill("Jane Roe")
    panel.get_by_role("button", name="Add a case").click()
    expect(page.get_by_role("heading", name=re.compile(r"Case INC-\d+"))).to_be_visible()
    decision = page.get_by_role("region", name=re.compile("Decision"))
    expect(decision.get_by_text("Not recordable", exact=True)).to_be_visible()
    assert_accessible(page)

    # The decision follows the answers (htmx), before anything is saved.
    page.get_by_role("group", name=re.compile("Work-related")).get_by_label("Yes").check()
    page.get_by_role("group", name=re.compile("New case")).get_by_label("Yes").check()
    page.get_by_label("Medical treatment beyond first aid").check()
    decision = page.get_by_role("region", name=re.compile("Decision"))
    decision.get_by_text("Recordable", exact=True).wait_for()
    reason = "Recordable: medical treatment beyond first aid — 1904.7(b)(5)"
    expect(decision.get_by_text(reason)).to_be_visible()
    expect(decision.get_by_text("(not saved yet)")).to_be_visible()
    assert page.get_by_label("Medical treatment beyond first aid").is_checked()  # the form stays as typed
    page.get_by_label("Injury or kind of illness").select_option("injury")
    page.get_by_role("button", name="Save the case").click()
    page.get_by_text("Saved.").wait_for()
    saved = page.get_by_role("region", name="Decision")
    expect(saved.get_by_text("Other recordable case (column J)")).to_be_visible()
    # A missing field is a link to it.
    saved.get_by_role("link", name="Job title").click()
    assert page.evaluate("document.activeElement.id") == "jobTitle" or page.url.endswith("#jobTitle")

    # The hours grid, saved as cells change.
    page.goto(f"{live.url}/osha/hours?year=2025")
    assert_accessible(page)
    for month in ("January", "February", "March"):
        page.get_by_label(f"Hours worked, Plant North, {month}").fill("1600")
        page.get_by_label(f"Average employees, Plant North, {month}").fill("10")
    page.get_by_label("Hours worked, Plant North, April").focus()  # leaving the cell saves it
    page.get_by_role("region", name="Totals for 2025").get_by_text("4,800").wait_for()
    assert admin.get(f"/api/osha/sites/{site}/hours?year=2025").json[2]["hours"] == 1600

    # The 300 Log and the 300A with its certification, then the PDF.
    page.goto(f"{live.url}/osha/log?siteId={site}&year=2025")
    expect(page.get_by_role("cell", name="Jane Roe")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="300A summary").first.click()
    page.get_by_label("Company executive's name").fill("Pat Boss")
    page.get_by_label(re.compile(r"^Title")).fill("Plant director")
    page.get_by_label("Phone").fill("+1 413 555 0100")
    page.get_by_label("Date certified").fill("2026-01-20")
    page.get_by_role("button", name="Save the certification").click()
    page.get_by_text("Saved.").wait_for()
    assert_accessible(page)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the 300A (PDF)").click()
    reader = PdfReader(download.value.path())
    assert len(reader.pages) == 1 and "Pat Boss" in reader.pages[0].extract_text()

    # The electronic submission: checks, then both files.
    page.goto(f"{live.url}/osha/submission?year=2025")
    expect(page.get_by_role("heading", name="Electronic submission for 2025")).to_be_visible()
    assert_accessible(page)
    with page.expect_download() as summary_file:
        page.get_by_role("link", name="Download the 300A summary file (CSV)").click()
    assert "Plant North" in Path(summary_file.value.path()).read_text(encoding="utf-8")
    with page.expect_download() as cases_file:
        page.get_by_role("link", name="Download the case data file (CSV)").click()
    cases_csv = Path(cases_file.value.path()).read_text(encoding="utf-8")
    assert "INC-" in cases_csv and "Jane Roe" not in cases_csv

    # The print-ready forms are screens too.
    for url in (f"/osha/log/print?siteId={site}&year=2025", f"/osha/summary/print?siteId={site}&year=2025"):
        page.goto(live.url + url)
        assert_accessible(page)


def test_a_long_log_pdf_is_made_in_the_background_with_its_progress(live, new_page, monkeypatch):
    from ehs_plugins.osha.pages import printing

    monkeypatch.setattr(printing, "IN_REQUEST_SHEETS", {"log300": 0, "forms301": 0})  # every log is long
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "America/Chicago"}).json["id"]
    admin.post_json("/api/users", {"name": "Sue Safety", "email": "sue@acme.test", "role": "safety_manager",
                                   "password": PASSWORD})
    page = new_page()
    sign_in(page, live, "sue@acme.test")
    page.goto(f"{live.url}/osha/log?siteId={site}&year=2025")
    page.get_by_role("link", name="Download the 300 Log (PDF)").click()
    expect(page.get_by_role("heading", name="Make the PDF")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("button", name="Make the PDF").click()
    expect(page.get_by_role("heading", name="Your PDF")).to_be_visible()
    # htmx asks for the progress until the file is ready; no reload by hand.
    link = page.get_by_role("link", name=re.compile(r"^Download osha-300-log-"))
    expect(link).to_be_visible(timeout=30_000)
    assert_accessible(page)
    with page.expect_download() as download:
        link.click()
    reader = PdfReader(download.value.path())
    assert len(reader.pages) == 1 and "Page 1 of 1" in reader.pages[0].extract_text()


def test_the_request_desk_for_copies_of_the_records(live, new_page):
    """1904.35(b)(2): a request taken on the desk, its clock on the home page,
    its copy printed, then recorded as given; axe on each screen."""
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North", "timezone": "America/Chicago"}).json["id"]
    admin.patch_json(f"/api/sites/{site}", ESTABLISHMENT)
    admin.post_json("/api/users", {"name": "Sue Safety", "email": "sue@acme.test", "role": "safety_manager",
                                   "password": PASSWORD})
    page = new_page()
    sign_in(page, live, "sue@acme.test")
    page.goto(f"{live.url}/osha/access-requests")
    assert_accessible(page)
    page.get_by_label("What is asked for").select_option("log_copy")
    page.get_by_label("Who asks").fill("Pat Former")
    page.get_by_label("Site").select_option(str(site))
    page.get_by_label("Year of the records").fill("2025")
    page.get_by_role("button", name="Take the request").click()
    page.get_by_text("Saved.").wait_for()
    expect(page.get_by_text(re.compile("Pat Former"))).to_be_visible()
    assert_accessible(page)
    page.goto(f"{live.url}/")
    expect(page.get_by_text(re.compile("copy of the records is asked for"))).to_be_visible()
    page.goto(f"{live.url}/osha/access-requests")
    page.get_by_role("link", name="The copy to print").click()
    expect(page.get_by_role("heading", name="Log of Work-Related Injuries and Illnesses")).to_be_visible()
    assert_accessible(page)
    page.goto(f"{live.url}/osha/access-requests")
    page.get_by_label("Given to").fill("Pat Former, by hand")
    page.get_by_role("button", name="Record the copy as given now").click()
    page.get_by_text("No request is waiting.").wait_for()
    assert_accessible(page)
