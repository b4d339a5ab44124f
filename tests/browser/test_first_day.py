"""A safety team's first day (issue #36), played only through the pages in
Debian's Chromium: first-run setup and the checklist, two sites in US zones
west and east of the server's (the server runs in Chicago), people who
belong to sites, a reporting link, reports filed at "now" at each site
(one on a phone, one through the link), the list's filters, an injury
taken through every step to closed, the mail that follows, the actions
page's paging, history, evidence and the labels of the export. The admin
and the safety manager work at a desk (1280 wide), the reporter, the
supervisor and the reporting link on a phone (390 wide); axe-core checks
every screen (no serious or critical violation).

Each numbered item of the issue is named where the day checks it."""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD, mail_text
from tests.core.attachments import samples

DESK = (1280, 900)
PHONE = (390, 844)
WEST, EAST, SERVER = "America/Los_Angeles", "America/New_York", "America/Chicago"


@pytest.fixture
def live_settings(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The server's own zone is Chicago's, between the two sites' zones."""
    monkeypatch.setenv("TZ", SERVER)
    return {}


@dataclass
class Day:
    live: Any
    new_page: Any
    inbox: Any
    tmp: Path
    sites: dict[str, int] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)
    link_url: str = ""

    @property
    def url(self) -> str:
        return self.live.url


# --- helpers ---------------------------------------------------------------


def look(page: Any) -> None:
    """Every screen passes axe at the size it is seen at."""
    assert_accessible(page)


def sign_in(day: Day, email: str, viewport: tuple[int, int] = DESK, password: str = PASSWORD) -> Any:
    page = day.new_page(viewport=viewport)
    page.goto(f"{day.url}/sign-in")
    # Item 14: the sign-in page carries the organization's name.
    expect(page.get_by_role("heading", name="Sign in to Acme Works")).to_be_visible()
    look(page)
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/$"))
    return page


def go(page: Any, day: Day, path: str) -> None:
    page.goto(day.url + path)
    look(page)


def menu(page: Any, name: str) -> None:
    """Follows a main menu entry; on a phone the menu folds behind its
    button (item 14)."""
    button = page.get_by_role("button", name="Menu")
    if page.viewport_size["width"] < 600:
        expect(button).to_have_attribute("aria-expanded", "false")
        button.click()
    else:
        expect(button).to_be_hidden()
    page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile(f"^{name}")).click()
    look(page)


def mails_to(inbox: Any, address: str, count: int = 1, timeout: float = 10) -> list[str]:
    """The texts of the mail the real SMTP server received for `address`,
    once there are at least `count`."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        texts = [f"{m['Subject']}\n{mail_text(m)}" for m in inbox.messages if m["To"] == address]
        if len(texts) >= count or time.monotonic() > deadline:
            assert len(texts) >= count, f"{address} got {len(texts)} mail, not {count}: {texts}"
            return texts
        time.sleep(0.1)


def link_in(text: str) -> str:
    return re.search(r"(http://127\.0\.0\.1:\d+/\S+)", text)[1]


def steps_left(page: Any) -> list[str]:
    card = page.get_by_role("region", name="Getting started")
    return [t.strip() for t in card.locator("li:not(.done)").all_inner_texts()]


def occurred(page: Any) -> dt.datetime:
    """The instant the incident page says the incident occurred at."""
    moment = page.locator("#facts-title + dl time").first.get_attribute("datetime")
    return dt.datetime.fromisoformat(moment.replace("Z", "+00:00"))


def reference_on(page: Any) -> tuple[str, int]:
    heading = page.get_by_role("heading", name=re.compile(r"Thank you — your report is INC-\d{4}"))
    expect(heading).to_be_visible()
    reference = re.search(r"INC-\d{4}", heading.inner_text())[0]
    return reference, int(reference[4:])


# --- the day ---------------------------------------------------------------


def setup_and_sites(day: Day) -> Any:
    """Item 14: first-run setup, then the checklist of the first hour;
    each site's zone picked from the list of IANA zones; areas by path."""
    admin = day.new_page(viewport=DESK, timezone_id=EAST)
    admin.goto(day.url + "/")
    expect(admin.get_by_role("heading", name="Set up the service")).to_be_visible()
    look(admin)
    admin.get_by_label("Organization name").fill("Acme Works")
    admin.get_by_label("Your name").fill("Ada Admin")
    admin.get_by_label("Your email").fill("admin@acme.example")
    admin.get_by_label("Password").fill(PASSWORD)
    admin.get_by_role("button", name="Create the organization").click()
    expect(admin.get_by_role("heading", name="Hello, Ada Admin")).to_be_visible()
    look(admin)
    assert steps_left(admin) == ["Add your sites and their areas",
                                 "Invite the people who report and follow up",
                                 "Enter each site's establishment details for the injury records",
                                 "Make a reporting link and print its poster"]
    admin.get_by_role("link", name="Add your sites and their areas").click()
    look(admin)
    for name, zone in (("Plant West", WEST), ("Plant East", EAST)):
        picker = admin.get_by_label("Time zone")
        expect(picker).to_have_value(EAST)  # the browser's own zone, suggested
        picker.select_option(zone)
        admin.get_by_label("Name", exact=True).fill(name)
        admin.get_by_role("button", name="Add the site").click()
        expect(admin.get_by_role("heading", name=name)).to_be_visible()
        day.sites[name] = int(re.search(r"/admin/sites/(\d+)", admin.url)[1])
        look(admin)
        if name == "Plant West":
            admin.locator("#area-name").fill("Warehouse")
            admin.locator("#area-kind").select_option("building")
            admin.get_by_role("button", name="Add the area").click()
            admin.locator("#area-name").fill("Yard")
            admin.locator("#area-parentId").select_option(label="Warehouse")
            admin.get_by_role("button", name="Add the area").click()
            expect(admin.locator(".area-tree .area-tree .area-name")).to_have_text("Yard")
            look(admin)
        admin.goto(f"{day.url}/admin/sites")
    expect(admin.locator("table")).to_contain_text(WEST)
    expect(admin.locator("table")).to_contain_text(EAST)
    return admin


def invite_people(day: Day, admin: Any) -> None:
    """Item 6 (a superseded invitation says so when it opens) and item 9
    (people belong to sites)."""
    go(admin, day, "/admin/users")
    for name, email, role in (("Rita Reporter", "rita@acme.example", "Reporter"),
                              ("Sam Supervisor", "sam@acme.example", "Supervisor"),
                              ("Sue Safety", "sue@acme.example", "Safety manager")):
        admin.get_by_label("Name", exact=True).fill(name)
        admin.get_by_label("Email", exact=True).fill(email)
        admin.get_by_role("radio", name=re.compile(f"^{role}")).check()
        admin.get_by_role("button", name="Send the invitation", exact=True).click()
        expect(admin.get_by_role("cell", name=re.compile(name)).first).to_be_visible()
    look(admin)
    first_invitation = link_in(mails_to(day.inbox, "rita@acme.example")[-1])
    admin.get_by_role("button", name="Send the invitation again to Rita Reporter").click()
    second_invitation = link_in(mails_to(day.inbox, "rita@acme.example", 2)[-1])
    assert first_invitation != second_invitation
    # Sam works at Plant West only.
    admin.get_by_text("Sites of Sam Supervisor", exact=True).click()
    sam = admin.get_by_role("group", name=re.compile("Where Sam Supervisor works"))
    sam.get_by_label("Plant West").check()
    admin.get_by_role("button", name="Save sites of Sam Supervisor").click()
    admin.get_by_text("Sites of Sam Supervisor", exact=True).click()
    expect(admin.get_by_role("group", name=re.compile("Where Sam Supervisor works"))
           .get_by_label("Plant West")).to_be_checked()
    look(admin)

    rita = day.new_page(viewport=PHONE)
    rita.goto(first_invitation)
    expect(rita.get_by_role("heading", name="This link no longer works")).to_be_visible()  # item 6
    look(rita)
    for email, invitation, viewport in (("rita@acme.example", second_invitation, PHONE),
                                        ("sam@acme.example", None, PHONE),
                                        ("sue@acme.example", None, DESK)):
        invitation = invitation or link_in(mails_to(day.inbox, email)[-1])
        page = day.new_page(viewport=viewport)
        page.goto(invitation)
        expect(page.get_by_role("heading", name="Choose your password")).to_be_visible()
        look(page)
        page.get_by_label("New password", exact=True).fill(PASSWORD)
        page.get_by_label("Repeat the new password").fill(PASSWORD)
        page.get_by_role("button", name="Save password and sign in").click()
        expect(page.get_by_role("heading", name=re.compile("^Hello, "))).to_be_visible()
        page.context.close()


def reporting_link(day: Day, admin: Any) -> None:
    """Item 7 (the poster's words) and item 14 (the checklist's step)."""
    admin.goto(day.url + "/")
    admin.get_by_role("link", name="Make a reporting link and print its poster").click()
    look(admin)
    admin.get_by_label("Name", exact=True).fill("Gate tablet")
    admin.get_by_label("Site").select_option(label="Plant East")
    admin.get_by_role("button", name="Create the link").click()
    day.link_url = admin.get_by_role("link", name="Open the report page of Gate tablet").get_attribute("href")
    admin.get_by_role("link", name="Poster with QR code for Gate tablet").click()
    expect(admin.get_by_text("Print it at 100% scale")).to_be_visible()
    look(admin)
    admin.goto(day.url + "/")
    assert steps_left(admin) == ["Enter each site's establishment details for the injury records"]
    look(admin)


def report_at_each_site(day: Day, admin: Any) -> None:
    """Item 1: the report form's "now" is accepted at a site west and a
    site east of the server's zone; the area picker names areas by path
    (item 14); the reporting link's report carries its reporter's name."""
    photo = day.tmp / "yard.png"
    photo.write_bytes(samples.PNG)
    rita = sign_in(day, "rita@acme.example", PHONE)
    menu(rita, "Report")
    rita.get_by_label("Injury").check()
    rita.get_by_label("High").check()
    rita.get_by_label("Title").fill("Forklift struck a picker's foot")
    rita.get_by_label("Site").select_option(str(day.sites["Plant West"]))
    rita.get_by_label("Area").select_option(label="Warehouse / Yard")
    rita.get_by_label("What happened?").fill("The forklift reversed over the picker's left foot.")
    rita.get_by_label("Photos").set_input_files(str(photo))
    look(rita)
    before = dt.datetime.now(dt.UTC)
    rita.get_by_role("button", name="Send report").click()
    day.numbers["injury"] = reference_on(rita)[1]
    look(rita)

    admin.goto(day.url + "/incidents/new")
    look(admin)
    admin.get_by_label("Hazard").check()
    admin.get_by_label("Low").check()
    admin.get_by_label("Title").fill("Loose handrail on the east stairs")
    admin.get_by_label("Site").select_option(str(day.sites["Plant East"]))
    admin.get_by_role("button", name="Send report").click()
    day.numbers["hazard"] = reference_on(admin)[1]

    kiosk = day.new_page(viewport=PHONE)
    kiosk.goto(day.url + day.link_url)
    look(kiosk)
    kiosk.get_by_label("What happened? (short title)").fill("Pallet blocking the fire exit")
    kiosk.get_by_label("Type").select_option(label="Near miss")
    kiosk.get_by_label("Your name").fill("Kim Kiosk")
    kiosk.get_by_role("button", name="Send report").click()
    kiosk.locator("#reference").get_by_text(re.compile(r"INC-\d{4}")).wait_for()
    day.numbers["kiosk"] = int(kiosk.locator("#reference").inner_text()[4:])
    look(kiosk)

    # Each was dated "now", in each site's own zone.
    for key, zone in (("injury", WEST), ("hazard", EAST)):
        admin.goto(f"{day.url}/incidents/{day.numbers[key]}")
        moment = occurred(admin)
        assert before - dt.timedelta(minutes=2) <= moment <= dt.datetime.now(dt.UTC)
        shown = moment.astimezone(ZoneInfo(zone))
        tz = shown.tzname()
        expect(admin.locator("#facts-title + dl time").first).to_contain_text(f"{shown:%H:%M} {tz}")
        look(admin)
    rita.context.close()


def filters_and_sites(day: Day, admin: Any) -> None:
    """Item 2 (a ticked filter survives "Apply filters") and item 9 (the
    list opens on a person's own sites, one click from all)."""
    go(admin, day, "/incidents")
    admin.get_by_text("Type, severity, status and site").click()
    admin.get_by_label("Hazard").check()
    admin.wait_for_url(re.compile(r"type=hazard"))
    admin.get_by_role("button", name="Apply filters").click()
    admin.wait_for_load_state()
    expect(admin.locator("#results")).to_contain_text("1 incident")
    assert "type=hazard" in admin.url
    expect(admin.get_by_label("Hazard")).to_be_checked()
    expect(admin.locator("#results")).not_to_contain_text("Forklift")
    look(admin)

    sam = sign_in(day, "sam@acme.example", PHONE)
    menu(sam, "Incidents")
    results = sam.locator("#results")
    expect(results).to_contain_text("Forklift struck")
    expect(results).not_to_contain_text("Loose handrail")
    # The filters stand open: his site is ticked, one click from every site.
    expect(sam.get_by_label("Plant West")).to_be_visible()
    expect(sam.get_by_label("Plant West")).to_be_checked()
    sam.get_by_label("Plant West").uncheck()
    expect(results).to_contain_text("Loose handrail")
    look(sam)
    sam.context.close()


def investigate(day: Day) -> None:
    """Item 11 (queues put the most severe first; an injury with no case
    prompts), item 3 (Next step follows the workspace) and item 10 (the
    lead hears when named)."""
    sue = sign_in(day, "sue@acme.example", DESK)
    triage = sue.get_by_role("region", name=re.compile("Waiting for triage"))
    rows = triage.get_by_role("link").all_inner_texts()
    order = [next(i for i, text in enumerate(rows) if title in text)
             for title in ("Forklift struck", "Pallet blocking", "Loose handrail")]
    assert order == sorted(order), rows  # high, then medium, then low
    records = sue.get_by_role("region", name="Injury records")
    expect(records).to_contain_text("1 injury or illness has no injury case yet")
    records.get_by_role("link", name=f"INC-{day.numbers['injury']:04d}").click()
    expect(sue.get_by_text("No injury case yet.")).to_be_visible()
    look(sue)
    sue.get_by_role("button", name="Move to Triage").click()
    sue.get_by_role("button", name="Move to Investigation").click()
    sue.get_by_label("Lead").select_option(label="Sam Supervisor (Supervisor)")
    sue.get_by_role("button", name="Save investigation").click()
    expect(sue.locator("#announcer")).to_contain_text("The investigation was saved.")
    move_on = sue.locator("#next-step").get_by_role("button", name="Move to Actions")
    expect(move_on).to_have_attribute("aria-disabled", "true")
    sue.get_by_label("Category", exact=True).fill("People / PPE")
    sue.get_by_label("What is the cause?").fill("No safety shoes in the yard")
    sue.get_by_role("button", name="Add root cause").click()
    expect(sue.locator("#investigation")).to_contain_text("No safety shoes in the yard")
    expect(move_on).not_to_have_attribute("aria-disabled", "true")  # without a reload
    look(sue)
    named = mails_to(day.inbox, "sam@acme.example")
    assert any(f"INC-{day.numbers['injury']:04d}" in text for text in named)
    return sue


def act_and_close(day: Day, sue: Any) -> None:
    """Item 13 (the assignment mail says what, why and by when; the
    assignee attaches evidence on a phone; the verification list shows
    it), item 11 (closing an injury with no case warns and asks for a
    note, and is not refused), item 10 (the reporter hears it was closed)
    and item 12 (history old → new, oldest first)."""
    injury = day.numbers["injury"]
    due = dt.date.today() + dt.timedelta(days=7)
    sue.get_by_role("link", name="Add a corrective action for this cause").click()
    sue.get_by_label("What is to be done?").fill("Issue safety shoes at the yard gate")
    sue.get_by_label("Assignee").select_option(label="Rita Reporter (Reporter)")
    sue.get_by_label("Due by").fill(due.isoformat())
    sue.get_by_role("button", name="Add action").click()
    expect(sue.get_by_text("The corrective action was added.")).to_be_visible()
    sue.get_by_role("button", name="Move to Actions").click()
    expect(sue.get_by_text("Status: Actions")).to_be_visible()
    look(sue)
    assigned = next(t for t in mails_to(day.inbox, "rita@acme.example", 3)
                    if "Issue safety shoes at the yard gate" in t)
    assert "No safety shoes in the yard" in assigned  # why: its root cause
    assert f"{due.day} {due:%b %Y}" in assigned  # and by when

    rita = day.new_page(viewport=PHONE)
    rita.goto(link_in(assigned))
    rita.get_by_label("Email", exact=True).fill("rita@acme.example")
    rita.get_by_label("Password", exact=True).fill(PASSWORD)
    rita.get_by_role("button", name="Sign in").click()
    expect(rita.get_by_role("heading", name="Issue safety shoes at the yard gate")).to_be_visible()
    look(rita)
    shoes = day.tmp / "shoes.png"
    shoes.write_bytes(samples.PNG)
    rita.get_by_label("Evidence").set_input_files(str(shoes))
    rita.get_by_label("What was done").fill("Twenty pairs in the gate locker")
    rita.get_by_role("button", name="Mark as done").click()
    expect(rita.get_by_text("Status: Done")).to_be_visible()
    look(rita)
    rita.context.close()

    sue.reload()
    sue.get_by_role("button", name="Move to Verification").click()
    menu(sue, "Actions")
    sue.get_by_role("link", name="Everyone's").click()
    sue.get_by_role("link", name="Awaiting verification").click()
    row = sue.get_by_role("row", name=re.compile("Issue safety shoes"))
    expect(row).to_contain_text("shoes.png")  # the evidence, for whoever verifies
    look(sue)
    sue.get_by_label("Verify Issue safety shoes at the yard gate").check()
    sue.get_by_role("button", name="Verify the ticked actions").click()
    expect(sue.get_by_text("The actions were verified.")).to_be_visible()

    sue.goto(f"{day.url}/incidents/{injury}")
    next_step = sue.locator("#next-step")
    expect(next_step).to_contain_text("this injury has no injury case")
    expect(next_step).to_contain_text("say why in the note")
    look(sue)
    sue.get_by_label("Note").fill("First aid only: the doctor found a bruise, no case needed")
    sue.get_by_role("button", name="Move to Closed").click()
    expect(sue.get_by_text("Status: Closed")).to_be_visible()
    closed = [t for t in mails_to(day.inbox, "rita@acme.example", 4) if "closed" in t.lower()]
    assert closed and "First aid only" in closed[-1]
    history = [t.strip() for t in sue.locator("#timeline li").all_inner_texts()]
    assert "Reported" in history[0]
    moves = [n for n, text in enumerate(history) if "Moved on" in text]
    assert "reported → triage" in history[moves[0]] and "verification → closed" in history[moves[-1]]
    assert any("Corrective action changed “Issue safety shoes at the yard gate”" in text and "→" in text
               for text in history), history
    look(sue)


def link_report_and_export(day: Day, sue: Any) -> None:
    """Item 5 (the reporting link's reporter and the link on the page, in
    history and the export) and item 7 (the export in words, every time
    in the site's zone, named)."""
    sue.goto(f"{day.url}/incidents/{day.numbers['kiosk']}")
    facts = sue.locator("#facts-title + dl")
    expect(facts).to_contain_text("Kim Kiosk")
    expect(facts).to_contain_text("through the reporting link “Gate tablet”")
    through = "the reporting link “Gate tablet”"
    expect(sue.locator("#timeline li").first).to_contain_text(f"Kim Kiosk, through {through}")
    look(sue)
    menu(sue, "Incidents")
    with sue.expect_download() as download:
        sue.get_by_role("link", name="Export these as CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    rows = {row["Title"]: row for row in csv.DictReader(text.splitlines())}
    kiosk = rows["Pallet blocking the fire exit"]
    assert (kiosk["Type"], kiosk["Severity"], kiosk["Status"]) == ("Near miss", "Medium", "Reported")
    assert kiosk["Reporter"] == "Kim Kiosk" and kiosk["Reported through"] == through
    for title, zone in (("Forklift struck a picker's foot", WEST),
                        ("Loose handrail on the east stairs", EAST)):
        row = rows[title]
        assert row["Time zone"] == zone
        now = dt.datetime.now(ZoneInfo(zone))
        for column in ("Occurred (site time)", "Reported (site time)"):
            shown = dt.datetime.strptime(row[column], "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo(zone))
            assert abs(now - shown) < dt.timedelta(minutes=10), (title, column, row[column])
    assert rows["Forklift struck a picker's foot"]["Closed (site time)"]


def raise_and_tell(day: Day, sue: Any) -> None:
    """Item 10 (a report raised to high after filing sends the filing's
    notice; a site's supervisor got the high report at his site) and item
    12 (the history says old → new)."""
    hazard = day.numbers["hazard"]
    sue.goto(f"{day.url}/incidents/{hazard}/edit")
    look(sue)
    sue.get_by_label("High").check()
    sue.get_by_role("button", name="Save changes").click()
    expect(sue.locator("#timeline")).to_contain_text("Severity: Low → High")
    expect(sue.locator("#timeline li").last).to_contain_text("Sue Safety")  # and who
    look(sue)
    raised = [t for t in mails_to(day.inbox, "admin@acme.example") if "raised to high (filed as low)" in t]
    assert raised and f"INC-{hazard:04d}" in raised[-1]
    # Sam supervises Plant West: he was told of the high injury there, not of Plant East's hazard.
    told = mails_to(day.inbox, "sam@acme.example")
    assert any("Forklift struck" in t for t in told)
    assert not any("Loose handrail" in t for t in told)


def paging_and_analytics(day: Day, sue: Any) -> None:
    """Item 4 (the actions page pages) and item 7 (a root cause's category
    as typed on the dashboard)."""
    desk = day.live.client()
    desk.login("admin@acme.example")
    hazard = day.numbers["hazard"]
    for n in range(50):
        desk.post_json(f"/api/incidents/{hazard}/actions", {"title": f"Check rail bracket {n + 1}"})
    menu(sue, "Actions")
    sue.get_by_role("link", name="Everyone's").click()
    sue.get_by_role("link", name="All", exact=True).click()
    expect(sue.get_by_text("Page 1 of 2")).to_be_visible()
    assert sue.locator("table tbody tr").count() == 50
    sue.get_by_role("link", name="Next page").click()
    expect(sue.get_by_text("Page 2 of 2")).to_be_visible()
    look(sue)
    menu(sue, "Analytics")
    expect(sue.get_by_text("People / PPE").first).to_be_visible()


def test_a_safety_teams_first_day(live, new_page, smtp_server, tmp_path):
    smtp_server.inbox.clear()
    day = Day(live, new_page, smtp_server.inbox, tmp_path)
    admin = setup_and_sites(day)
    invite_people(day, admin)
    reporting_link(day, admin)
    report_at_each_site(day, admin)
    filters_and_sites(day, admin)
    sue = investigate(day)
    act_and_close(day, sue)
    link_report_and_export(day, sue)
    raise_and_tell(day, sue)
    paging_and_analytics(day, sue)
