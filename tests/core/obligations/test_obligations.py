"""What is owed to regulators: obligations opened by a plugin's kind on an
incident, closed done or waived, seen by the roles that handle them, and
reminded of and alerted about once each."""

from __future__ import annotations

import datetime as dt
from importlib.metadata import EntryPoint
from typing import Any

import pytest
from pyramid.exceptions import ConfigurationError

import ehs_core.plugins
from ehs_core.config import configure
from ehs_core.obligations.notices import send_notices
from ehs_core.plugins import GROUP
from ehs_core.testing import Client, form_with, new_site, report_body
from tests.core.obligations import kinds
from tests.core.obligations.conftest import NAME, with_kinds

API = "/api/obligations"


def iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def file_incident(browser: Client, site: int, hours_ago: float = 1, **fields: Any) -> dict[str, Any]:
    occurred = now() - dt.timedelta(hours=hours_ago)
    return browser.post_json("/api/incidents", report_body(site, occurredAt=iso(occurred), **fields),
                             status=201).json


def open_one(browser: Client, number: int, kind: str = kinds.FEDERAL, hours: int = 8, **kw: Any) -> int:
    body = {"kind": kind, "hours": hours}
    return browser.post_json(f"/api/test-obligations/{number}", body, **kw).json["id"]


@pytest.fixture
def manager(as_user: Any) -> Client:
    return as_user("safety_manager")


@pytest.fixture
def la_site(admin: Client) -> int:
    return new_site(admin, "Plant West", timezone="America/Los_Angeles")["id"]


def test_an_opened_obligation_is_listed_with_its_due_time_on_the_sites_clock(manager, la_site):
    incident = file_incident(manager, la_site, hours_ago=1)
    first = open_one(manager, incident["number"])
    assert open_one(manager, incident["number"]) == first  # once per kind and incident
    items = manager.get(API).json["items"]
    assert [item["id"] for item in items] == [first]
    item = items[0]
    assert item["kind"] == kinds.FEDERAL and item["title"] == "Report to the authority"
    assert item["incidentNumber"] == incident["number"] and item["status"] == "open"
    assert item["doneAt"] is None and item["doneBy"] is None and item["note"] is None
    due = dt.datetime.fromisoformat(item["dueAt"])
    occurred = dt.datetime.fromisoformat(incident["occurredAt"])
    assert due - occurred == dt.timedelta(hours=8)
    assert due.utcoffset() in (dt.timedelta(hours=-8), dt.timedelta(hours=-7))  # Los Angeles
    assert item["fulfilledBy"] == "By phone to the area office"


def test_the_queue_is_soonest_due_first(manager, site):
    later = open_one(manager, file_incident(manager, site)["number"], hours=24)
    sooner = open_one(manager, file_incident(manager, site)["number"], hours=8)
    assert [item["id"] for item in manager.get(API).json["items"]] == [sooner, later]


def test_marked_done_it_says_when_by_whom_and_how_and_leaves_the_open_queue(manager, site):
    number = file_incident(manager, site)["number"]
    obligation = open_one(manager, number)
    done = manager.post_json(f"{API}/{obligation}/done", {"note": "Called the area office, ref 4411"}).json
    assert done["status"] == "done" and done["note"] == "Called the area office, ref 4411"
    assert done["doneBy"] == {"id": manager.user["id"], "name": manager.user["name"]}
    assert abs(dt.datetime.fromisoformat(done["doneAt"]) - now()) < dt.timedelta(minutes=1)
    assert manager.get(API).json["items"] == []
    assert [item["id"] for item in manager.get(API, {"status": "done"}).json["items"]] == [obligation]
    again = manager.post_json(f"{API}/{obligation}/done", {"note": "twice"}, status=409).json
    assert "already done" in again["error"]
    # Opening it again (the facts saved again) keeps it done.
    assert open_one(manager, number) == obligation
    assert manager.get(API, {"status": "done"}).json["items"][0]["note"] == "Called the area office, ref 4411"


def test_done_at_a_given_time_but_not_in_the_future(manager, site):
    obligation = open_one(manager, file_incident(manager, site, hours_ago=3)["number"])
    future = manager.post_json(f"{API}/{obligation}/done", {"doneAt": iso(now() + dt.timedelta(hours=2))},
                               status=400).json
    assert future["issues"][0]["path"] == "doneAt"
    called = now() - dt.timedelta(hours=2)
    done = manager.post_json(f"{API}/{obligation}/done", {"doneAt": iso(called)}).json
    assert dt.datetime.fromisoformat(done["doneAt"]) == called


def test_waived_with_a_reason_by_a_safety_manager(manager, as_user, site):
    number = file_incident(manager, site)["number"]
    notice = open_one(manager, number, kinds.NOTICE)
    supervisor = as_user("supervisor")
    refused = supervisor.post_json(f"{API}/{notice}/waive", {"reason": "not needed"}, status=403).json
    assert "safety manager" in refused["error"]
    empty = manager.post_json(f"{API}/{notice}/waive", {"reason": "  "}, status=400).json
    assert empty["issues"][0]["path"] == "reason"
    assert manager.get(API).json["items"][0]["status"] == "open"  # nothing half-written
    waived = manager.post_json(f"{API}/{notice}/waive", {"reason": "Not work-related after all"}).json
    assert waived["status"] == "waived" and waived["note"] == "Not work-related after all"
    assert [i["id"] for i in manager.get(API, {"status": "waived"}).json["items"]] == [notice]
    assert manager.get(API, {"status": "done"}).json["items"] == []


def test_past_its_due_time_it_is_overdue(manager, site):
    late = open_one(manager, file_incident(manager, site, hours_ago=10)["number"], hours=8)
    on_time = open_one(manager, file_incident(manager, site, hours_ago=1)["number"], hours=8)
    statuses = {item["id"]: item["status"] for item in manager.get(API).json["items"]}
    assert statuses == {late: "overdue", on_time: "open"}
    assert [item["id"] for item in manager.get(API, {"status": "overdue"}).json["items"]] == [late]
    bad = manager.get(API, {"status": "late"}, status=400).json
    assert bad["issues"][0]["path"] == "status"


def test_each_role_sees_what_it_handles_on_incidents_it_may_see(app, admin, as_user, site):
    reporter = as_user("reporter")
    supervisor = as_user("supervisor")
    manager = as_user("safety_manager")
    own = file_incident(reporter, site)["number"]
    other = file_incident(manager, site)["number"]
    own_notice = open_one(manager, own, kinds.NOTICE)
    other_notice = open_one(manager, other, kinds.NOTICE)
    federal = open_one(manager, own, kinds.FEDERAL)

    def seen(browser: Client) -> set[int]:
        return {item["id"] for item in browser.get(API, {"status": "all"}).json["items"]}

    assert seen(reporter) == {own_notice}  # the incidents' own rule, and only the kinds it handles
    assert seen(supervisor) == {own_notice, other_notice}
    assert seen(manager) == {own_notice, other_notice, federal}
    # What the caller cannot see answers 404, as a number that does not exist.
    for obligation in (other_notice, federal, 999999):
        reporter.post_json(f"{API}/{obligation}/done", {"note": "x"}, status=404)
    supervisor.post_json(f"{API}/{federal}/done", {"note": "x"}, status=404)
    reporter.post_json(f"{API}/{own_notice}/waive", {"reason": "x"}, status=403)
    assert reporter.post_json(f"{API}/{own_notice}/done", {"note": "Posted"}).json["status"] == "done"
    Client(app["wsgi_app"]).get(API, status=401)


def test_another_organizations_obligations_are_not_seen(app, manager, site, dbsession):
    from ehs_core.obligations.models import Obligation
    from ehs_core.users.models import Organization

    obligation = open_one(manager, file_incident(manager, site)["number"])
    other = Organization(name="Other Co")
    dbsession.add(other)
    dbsession.flush()
    dbsession.get(Obligation, obligation).organization_id = other.id
    dbsession.flush()
    assert manager.get(API, {"status": "all"}).json["items"] == []
    manager.post_json(f"{API}/{obligation}/done", {}, status=404)


def test_a_reminder_before_the_due_time_and_an_alert_once_overdue_each_sent_once(
        app, manager, as_user, admin, site, inbox):
    supervisor = as_user("supervisor")
    reporter = as_user("reporter")
    number = file_incident(manager, site, hours_ago=0)["number"]
    open_one(manager, number, kinds.FEDERAL, hours=8)
    start = now()
    assert send_notices(app, now=start) == 0
    # Three quarters of the time given: the reminder, to safety managers and admins.
    sent = send_notices(app, now=start + dt.timedelta(hours=6, minutes=5))
    assert sent == 2
    reminders = inbox.wait(2)
    assert {m["To"] for m in reminders} == {"admin@acme.test", manager.user["email"]}
    subject = reminders[0]["Subject"]
    assert subject.startswith("Due soon: Report to the authority for INC-")
    assert send_notices(app, now=start + dt.timedelta(hours=7)) == 0
    assert inbox.settle() == reminders
    # Past the due time: the alert, once.
    assert send_notices(app, now=start + dt.timedelta(hours=8, minutes=1)) == 2
    mails = inbox.wait(4)
    alerts = [m for m in mails if m["Subject"].startswith("OVERDUE")]
    assert len(alerts) == 2
    assert send_notices(app, now=start + dt.timedelta(hours=9)) == 0
    assert len(inbox.settle()) == 4
    assert supervisor.user["email"] not in {m["To"] for m in mails}
    assert reporter.user["email"] not in {m["To"] for m in mails}


def test_a_due_time_moved_later_is_reminded_of_again_once(app, manager, site, inbox):
    number = file_incident(manager, site, hours_ago=0)["number"]
    open_one(manager, number, kinds.FEDERAL, hours=8)
    start = now()
    assert send_notices(app, now=start + dt.timedelta(hours=6, minutes=5)) == 2
    inbox.wait(2)
    open_one(manager, number, kinds.FEDERAL, hours=24)  # the facts changed: a later clock
    assert send_notices(app, now=start + dt.timedelta(hours=6, minutes=10)) == 0
    assert send_notices(app, now=start + dt.timedelta(hours=18, minutes=5)) == 2
    assert len(inbox.wait(4)) == 4
    assert send_notices(app, now=start + dt.timedelta(hours=18, minutes=10)) == 0
    assert len(inbox.settle()) == 4


def test_a_done_obligation_is_neither_reminded_nor_alerted(app, manager, site, inbox):
    number = file_incident(manager, site, hours_ago=0)["number"]
    obligation = open_one(manager, number, kinds.NOTICE, hours=8)
    manager.post_json(f"{API}/{obligation}/done", {"note": "Posted"})
    assert send_notices(app, now=now() + dt.timedelta(hours=9)) == 0
    assert inbox.settle() == []


def test_a_notice_kind_reminds_its_own_lead_before_and_supervisors_hear_of_it(
        app, manager, as_user, site, inbox):
    supervisor = as_user("supervisor")
    number = file_incident(manager, site, hours_ago=0)["number"]
    open_one(manager, number, kinds.NOTICE, hours=8)
    start = now()
    assert send_notices(app, now=start + dt.timedelta(hours=6)) == 0  # one hour before, not earlier
    assert send_notices(app, now=start + dt.timedelta(hours=7, minutes=1)) == 3
    assert supervisor.user["email"] in {m["To"] for m in inbox.wait(3)}


def test_an_obligation_whose_kind_is_not_enabled_is_not_shown(app, registry, manager, admin, site):
    open_one(manager, file_incident(manager, site)["number"])
    assert len(manager.get(API).json["items"]) == 1
    # The session's application has no plugin declaring the kind.
    assert admin.get(API, {"status": "all"}).json["items"] == []
    assert send_notices(registry, now=now() + dt.timedelta(days=2)) == 0


def test_two_plugins_claiming_one_kind_stop_start_up(app_settings, monkeypatch):
    with_kinds(monkeypatch)
    real = ehs_core.plugins.discover
    twin = EntryPoint(name="twin", value=f"{kinds.__name__}:twin_includeme", group=GROUP)
    monkeypatch.setattr(ehs_core.plugins, "discover", lambda: {**real(), "twin": twin})
    with pytest.raises(ConfigurationError) as raised:
        configure(dict(app_settings, **{"ehs.plugins": f"{NAME} twin"}))
    assert "test.federal" in str(raised.value)


# --- pages ------------------------------------------------------------------


def test_the_home_queue_shows_what_is_owed_soonest_first_with_the_time_left(manager, site):
    later = file_incident(manager, site, hours_ago=1)["number"]
    sooner = file_incident(manager, site, hours_ago=1)["number"]
    open_one(manager, later, kinds.FEDERAL, hours=24)
    open_one(manager, sooner, kinds.NOTICE, hours=3)
    home = manager.get("/")
    card = home.html.find(id="card-obligations").parent
    assert card.h2.get_text(strip=True) == "Owed to regulators"
    lines = [li.get_text(" ", strip=True) for li in card.select("li")]
    assert lines[0].startswith("Notice to the crew") and f"INC-{sooner:04d}" in lines[0]
    assert "1 hour 59 minutes left" in lines[0] or "2 hours 0 minutes left" in lines[0]
    assert lines[1].startswith("Report to the authority") and "22 hours" in lines[1]


def test_the_home_queue_says_when_nothing_is_owed_and_is_not_shown_to_who_handles_nothing(
        as_user, make_user):
    card = as_user("reporter").get("/").html.find(id="card-obligations").parent
    assert "Nothing is owed to a regulator now." in card.get_text()
    assert card.find("a", string="What was done")["href"] == "/obligations?status=done"
    # The session's application: a reporter handles no kind there (OSHA's is a safety manager's).
    assert make_user("reporter").get("/").html.find(id="card-obligations") is None


def test_marked_done_and_waived_on_the_page(manager, site):
    federal = open_one(manager, file_incident(manager, site)["number"], kinds.FEDERAL)
    notice = open_one(manager, file_incident(manager, site)["number"], kinds.NOTICE)
    page = manager.get("/obligations")
    form = form_with(page, f"/obligations/{federal}/done")
    form[f"note-{federal}"] = "Phoned, ref 7"
    assert form.submit(status=302).follow().html.find("div", class_="notice").get_text(strip=True) == "Saved."
    page = manager.get("/obligations")
    refused = form_with(page, f"/obligations/{notice}/waive").submit(status=400)
    summary = refused.html.find(id="error-summary")
    assert summary.a["href"] == f"#reason-{notice}" and "Must not be empty" in summary.get_text()
    assert refused.html.find(id=f"reason-{notice}-error") is not None
    form = form_with(refused, f"/obligations/{notice}/waive")
    form[f"reason-{notice}"] = "Crew already told"
    form.submit(status=302)
    done = manager.get("/obligations?status=done").html.get_text(" ", strip=True)
    assert "Phoned, ref 7" in done
    assert "Crew already told" in manager.get("/obligations?status=waived").html.get_text(" ", strip=True)
