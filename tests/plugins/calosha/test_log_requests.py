"""An employee asks for the violent incident log: an obligation due in 15
calendar days (Labor Code §6401.9(f)(3)) in the safety managers' queue."""

from __future__ import annotations

import datetime as dt

from ehs_core.obligations.notices import send_notices
from ehs_core.testing import form_with


def test_an_employees_request_is_owed_within_15_calendar_days(app, as_user, ca_site, inbox):
    employee = as_user("reporter", name="Rosa Employee")
    manager = as_user("safety_manager")
    answer = employee.post_json("/api/calosha/log-requests", {"siteId": ca_site}, status=201).json
    requested = dt.datetime.fromisoformat(answer["requestedAt"])
    assert dt.datetime.fromisoformat(answer["dueBy"]) - requested == dt.timedelta(days=15)
    assert answer["requester"] == "Rosa Employee"
    assert employee.get("/api/obligations").json["items"] == []  # the employee does not handle it
    owed = manager.get("/api/obligations").json["items"]
    assert [item["title"] for item in owed] == ["Copy of the violent incident log for Rosa Employee"]
    assert owed[0]["kind"] == "calosha.log_copy" and owed[0]["incidentNumber"] is None
    # Three days before: the reminder; then it is given, and marked done.
    assert send_notices(app, now=requested + dt.timedelta(days=12, minutes=1)) >= 1
    assert any("Due soon: Copy of the violent incident log" in m["Subject"] for m in inbox.wait(1))
    done = manager.post_json(f"/api/obligations/{owed[0]['id']}/done", {"note": "Printed copy handed over"})
    assert done.json["status"] == "done"


def test_a_supervisor_records_a_request_made_on_paper(as_user):
    supervisor = as_user("supervisor")
    asked = (dt.datetime.now(dt.UTC) - dt.timedelta(days=16)).replace(microsecond=0)
    answer = supervisor.post_json("/api/calosha/log-requests", {
        "requester": "Former employee J. Doe", "requestedAt": asked.isoformat()}, status=201).json
    assert dt.datetime.fromisoformat(answer["dueBy"]) == asked + dt.timedelta(days=15)
    bad = supervisor.post_json("/api/calosha/log-requests", {"siteId": 999999}, status=400).json
    assert bad["issues"][0]["path"] == "siteId"


def test_the_home_card_asks_for_a_copy(app, as_user, ca_site):
    employee = as_user("reporter")
    manager = as_user("safety_manager")
    home = employee.get("/")
    card = home.html.find(id="card-calosha_ask").parent
    assert "Ask for a copy of the log" in card.get_text()
    form_with(home, "/calosha/log-requests").submit(status=302)
    assert len(manager.get("/api/obligations").json["items"]) == 1


def test_no_card_without_a_california_site(as_user, tx_site):
    assert as_user("reporter").get("/").html.find(id="card-calosha_ask") is None
