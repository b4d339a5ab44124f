"""The direct report owed to OSHA (1904.39) in the queue of what is owed to
regulators: opened by the case's answers, closed by the report's time on
the case or by marking it done in the queue (which enters that time), and
withdrawn when the answers no longer owe it. The case keeps `severeReport`."""

from __future__ import annotations

import datetime as dt

import pytest

from ehs_plugins.osha.obligations import keep_ita_filings
from tests.plugins.osha import OCCURRED, WORK, full_year, new_case, new_incident, patch_case, put_hours

API = "/api/obligations"
KIND = "osha.severe_report"


def owed(browser, status="open"):
    return [item for item in browser.get(API, {"status": status}).json["items"] if item["kind"] == KIND]


def test_a_hospitalization_opens_the_24_hour_report_in_the_queue(manager, site):
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, inpatientHospitalization=True)
    items = owed(manager)
    assert len(items) == 1
    item = items[0]
    assert item["incidentNumber"] == number and item["status"] == "overdue"  # 2025: long past
    assert item["title"] == "OSHA report within 24 hours (1904.39): in-patient hospitalization"
    assert dt.datetime.fromisoformat(item["dueAt"]) == \
        dt.datetime.fromisoformat(OCCURRED) + dt.timedelta(hours=24)
    assert item["dueAt"] == case["severeReport"]["dueBy"]  # the same clock as the case's answer
    assert "1-800-321-6742" in item["fulfilledBy"]
    new_case(manager, number, name="John Roe", **WORK, amputation=True)
    assert len(owed(manager)) == 2  # one per case


def test_the_reports_time_on_the_case_closes_it(manager, site):
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, died=True)
    reported = "2025-03-10T12:00:00-05:00"
    answer = patch_case(manager, case["id"], reportedToOshaAt=reported).json
    assert answer["severeReport"] is None
    assert owed(manager) == []
    done = owed(manager, "done")
    assert len(done) == 1
    assert dt.datetime.fromisoformat(done[0]["doneAt"]) == dt.datetime.fromisoformat(reported)


def test_marked_done_in_the_queue_the_case_says_it_was_reported(manager, site):
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, lossOfEye=True)
    assert case["severeReport"]["withinHours"] == 24
    obligation = owed(manager)[0]
    called = "2025-03-10T15:30:00-05:00"
    manager.post_json(f"{API}/{obligation['id']}/done", {"note": "Area office, ref 88", "doneAt": called})
    after = manager.get(f"/api/osha/incidents/{number}/cases").json[0]
    assert after["severeReport"] is None
    assert dt.datetime.fromisoformat(after["reportedToOshaAt"]) == dt.datetime.fromisoformat(called)


def test_answers_that_no_longer_owe_it_withdraw_it(manager, site):
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, inpatientHospitalization=True)
    patch_case(manager, case["id"], workRelated=False)
    assert owed(manager) == []
    assert len(owed(manager, "waived")) == 1
    other = new_case(manager, number, name="John Roe", **WORK, amputation=True)
    manager.delete(f"/api/osha/cases/{other['id']}", status=204)
    assert owed(manager) == [] and len(owed(manager, "waived")) == 2


def test_supervisors_do_not_see_the_federal_report(manager, site, make_user):
    number = new_incident(manager, site)["number"]
    new_case(manager, number, **WORK, inpatientHospitalization=True)
    assert owed(make_user("supervisor"), "all") == []


def test_without_the_osha_plugin_its_reports_leave_the_queue(manager, site, app_settings, registry,
                                                              dbsession):
    from ehs_core.config import configure
    from ehs_core.testing import Client

    number = new_incident(manager, site)["number"]
    new_case(manager, number, **WORK, inpatientHospitalization=True)
    config = configure(dict(app_settings, **{"ehs.plugins": "kiosk analytics"}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    try:
        browser = Client(config.make_wsgi_app())
        browser.login("admin@acme.test")
        assert browser.get(API, {"status": "all"}).json["items"] == []
        assert "osha.severe_report" not in config.registry.get("obligation_kinds", {})
    finally:
        config.registry["db.engine"].dispose()
    assert len(owed(manager)) == 1


# 1904.35(b)(2): a request for a copy of the records, taken at the access desk.
ACCESS = "osha.access_request"
DESK = "/api/osha/access-requests"


def access_owed(browser, status="open"):
    return [item for item in browser.get(API, {"status": status}).json["items"] if item["kind"] == ACCESS]


def test_a_request_at_the_access_desk_is_owed_by_its_due_time_until_the_copy_is_given(manager, site):
    taken = manager.post_json(DESK, {"kind": "log_copy", "requesterName": "Rita Moreno", "siteId": site,
                                     "year": 2025}, status=201).json
    items = access_owed(manager)
    assert len(items) == 1
    assert items[0]["status"] == "open" and items[0]["incidentNumber"] is None
    assert dt.datetime.fromisoformat(items[0]["dueAt"]) == dt.datetime.fromisoformat(taken["dueBy"])
    assert "Rita Moreno" in items[0]["title"] and "1904.35(b)(2)" in items[0]["title"]
    given = manager.post_json(f"{DESK}/{taken['id']}/fulfil", {"givenTo": "Rita Moreno, by hand"},
                              status=200).json
    assert set(given) == set(taken)  # the desk's answer keeps its fields
    assert access_owed(manager) == []
    done = access_owed(manager, "done")
    assert len(done) == 1 and done[0]["note"] == "Copy given to Rita Moreno, by hand"
    assert dt.datetime.fromisoformat(done[0]["doneAt"]) == dt.datetime.fromisoformat(given["fulfilledAt"])


def test_a_representatives_request_is_owed_in_seven_days_and_done_in_the_queue_closes_it_at_the_desk(
        manager, site):
    taken = manager.post_json(DESK, {"kind": "representative_301", "requesterName": "Local 12 steward",
                                     "siteId": site, "year": 2025}, status=201).json
    item = access_owed(manager)[0]
    assert dt.datetime.fromisoformat(item["dueAt"]) - dt.datetime.fromisoformat(taken["receivedAt"]) \
        >= dt.timedelta(days=7)
    manager.post_json(f"{API}/{item['id']}/done", {"note": "Steward, by e-mail"})
    assert manager.get(DESK, status=200).json == []  # no longer open at the desk
    manager.post_json(f"{DESK}/{taken['id']}/fulfil", {"givenTo": "again"}, status=409)


def test_supervisors_do_not_see_access_requests_in_the_queue(manager, site, make_user):
    manager.post_json(DESK, {"kind": "log_copy", "requesterName": "Rita Moreno", "siteId": site,
                             "year": 2025}, status=201)
    assert access_owed(make_user("supervisor"), "all") == []


# 1904.41(c): the electronic submission of a year's records, due March 2 of the next year.
ITA = "osha.ita_filing"
UTC = dt.UTC


def ita_owed(browser, status="open"):
    return [item for item in browser.get(API, {"status": status}).json["items"] if item["kind"] == ITA]


# (the job's moment in UTC, the year whose filing it owes for a Chicago site, its due time there)
ITA_DATES = [
    (dt.datetime(2026, 1, 1, 6, 0, tzinfo=UTC), 2025, "2026-03-02T23:59:59-06:00"),  # New Year's Day there
    (dt.datetime(2026, 1, 1, 3, 0, tzinfo=UTC), 2024, "2025-03-02T23:59:59-06:00"),  # still Dec 31 there
    (dt.datetime(2026, 3, 3, 12, 0, tzinfo=UTC), 2025, "2026-03-02T23:59:59-06:00"),  # overdue
    (dt.datetime(2026, 12, 31, 12, 0, tzinfo=UTC), 2025, "2026-03-02T23:59:59-06:00"),
    (dt.datetime(2025, 2, 1, 12, 0, tzinfo=UTC), 2024, "2025-03-02T23:59:59-06:00"),
]


@pytest.mark.parametrize(("now", "year", "due"), ITA_DATES)
def test_the_daily_job_opens_last_years_filing_of_a_covered_site(manager, site, registry, now, year, due):
    """300 people at the busiest time: the 300A is due in any industry (1904.41(a)(1)(ii))."""
    put_hours(manager, site, full_year(40_000, 300), year=year)
    assert keep_ita_filings(registry, now) == 1
    assert keep_ita_filings(registry, now) == 1  # idempotent per site and year
    [item] = ita_owed(manager)
    assert dt.datetime.fromisoformat(item["dueAt"]) == dt.datetime.fromisoformat(due)
    assert str(year) in item["title"] and "300A" in item["title"] and item["incidentNumber"] is None
    assert "March 2" in item["fulfilledBy"]


def test_no_filing_is_owed_for_a_small_site_or_a_year_without_counts(manager, site, registry):
    put_hours(manager, site, full_year(2_000, 12), year=2025)  # 12 people: 1904.41(a)(3)
    assert keep_ita_filings(registry, dt.datetime(2026, 1, 5, tzinfo=UTC)) == 0
    assert keep_ita_filings(registry, dt.datetime(2027, 1, 5, tzinfo=UTC)) == 0  # 2026: no counts
    assert ita_owed(manager, "all") == []


def test_a_site_no_longer_covered_has_its_filing_withdrawn(manager, site, registry):
    now = dt.datetime(2026, 1, 5, tzinfo=UTC)
    put_hours(manager, site, full_year(40_000, 300), year=2025)
    keep_ita_filings(registry, now)
    put_hours(manager, site, full_year(2_000, 12), year=2025)  # the counts were wrong
    assert keep_ita_filings(registry, now) == 0
    assert ita_owed(manager) == []
    [waived] = ita_owed(manager, "waived")
    assert "fewer than 20" in waived["note"]


def test_the_filing_job_runs_daily(registry):
    schedule = registry["periodic"]["osha.ita_filing_obligations"]
    assert schedule(dt.datetime(2026, 1, 1, 6, 7)) and not schedule(dt.datetime(2026, 1, 1, 6, 8))


def test_the_home_queue_shows_the_access_request_and_the_ita_filing(manager, site, registry):
    from zoneinfo import ZoneInfo

    now = dt.datetime.now(dt.UTC)
    last_year = now.astimezone(ZoneInfo("America/Chicago")).year - 1
    put_hours(manager, site, full_year(40_000, 300), year=last_year)
    keep_ita_filings(registry, now)
    manager.post_json(DESK, {"kind": "log_copy", "requesterName": "Rita Moreno", "siteId": site,
                             "year": last_year}, status=201)
    card = manager.get("/").html.find(id="card-obligations").parent
    lines = [li.get_text(" ", strip=True) for li in card.select("li")]
    assert any("Rita Moreno" in line for line in lines)
    assert any(f"Electronic submission of {last_year}" in line for line in lines)
