"""Title 8 CCR §342(a) against 29 CFR 1904.39, case by case: which report
each case owes and by when. The federal side is computed here from
1904.39's own rule table (a death within 8 hours, an in-patient
hospitalization of any length for other than observation, an amputation
or the loss of an eye within 24 hours), not through the OSHA plugin; the
California side is the plugin's answer through its API and the queue."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

import pytest

from ehs_core.testing import Client
from ehs_plugins.calosha.serious import Facts, reasons

HOUR = dt.timedelta(hours=1)


class Case(NamedTuple):
    name: str
    died: bool = False
    inpatient_hours: int | None = None
    observation_only: bool = False
    amputation: bool = False  # a finger, a limb: federal amputation, and California's loss of a member
    loss_of_eye: bool = False
    disfigurement: bool = False


def federal_hours(case: Case) -> int | None:
    """1904.39(a): 8 hours for a fatality; 24 for an in-patient
    hospitalization (any length; not observation only, 1904.39(b)(9)),
    an amputation or the loss of an eye; else no report."""
    if case.died:
        return 8
    if (case.inpatient_hours is not None and case.inpatient_hours > 0 and not case.observation_only) \
            or case.amputation or case.loss_of_eye:
        return 24
    return None


# Each case and the reports it owes, with the hours each allows from when
# the employer learned (1904.39(b)(7)-(8) and §342(a) both start the clock there).
CASES = [
    (Case("death", died=True), {"Cal/OSHA": 8, "OSHA": 8}),
    (Case("hospitalized 30 hours", inpatient_hours=30), {"Cal/OSHA": 8, "OSHA": 24}),
    (Case("hospitalized 12 hours", inpatient_hours=12), {"OSHA": 24}),
    (Case("hospitalized exactly 24 hours", inpatient_hours=24), {"OSHA": 24}),
    (Case("30 hours for observation only", inpatient_hours=30, observation_only=True), {}),
    (Case("fingertip amputated", amputation=True), {"Cal/OSHA": 8, "OSHA": 24}),
    (Case("eye lost", loss_of_eye=True), {"OSHA": 24}),
    (Case("serious permanent disfigurement", disfigurement=True), {"Cal/OSHA": 8}),
    (Case("a cut treated and sent home"), {}),
]
IDS = [case.name for case, _ in CASES]


def owed(case: Case) -> dict[str, int]:
    """What the two rule tables say: California's through the plugin's rule."""
    facts = Facts(died=case.died, inpatient_hours=case.inpatient_hours,
                  observation_only=case.observation_only, lost_member=case.amputation,
                  disfigurement=case.disfigurement)
    reports = {"Cal/OSHA": 8} if reasons(facts) else {}
    if federal_hours(case) is not None:
        reports["OSHA"] = federal_hours(case)
    return reports


def california_facts(case: Case) -> dict[str, Any]:
    return {"died": case.died, "inpatientHours": case.inpatient_hours,
            "observationOnly": case.observation_only, "lostMember": case.amputation,
            "disfigurement": case.disfigurement}


@pytest.mark.parametrize(("case", "expected"), CASES, ids=IDS)
def test_the_rule_tables_side_by_side(case: Case, expected: dict[str, int]) -> None:
    assert owed(case) == expected


def file_incident(browser: Client, site: int, occurred: dt.datetime) -> dict[str, Any]:
    return browser.post_json("/api/incidents", {
        "title": "Fall from a ladder", "type": "injury", "severity": "critical", "siteId": site,
        "occurredAt": occurred.isoformat(timespec="seconds")}, status=201).json


@pytest.mark.parametrize(("case", "expected"), CASES, ids=IDS)
def test_each_case_owes_cal_osha_8_hours_after_the_employer_learned(
        case: Case, expected: dict[str, int], as_user: Any, ca_site: int) -> None:
    manager = as_user("safety_manager")
    occurred = dt.datetime.now(dt.UTC).replace(microsecond=0) - 5 * HOUR
    learned = occurred + 2 * HOUR  # the employer heard two hours later
    incident = file_incident(manager, ca_site, occurred)
    body = dict(california_facts(case), learnedAt=learned.isoformat())
    answer = manager.put_json(f"/api/calosha/incidents/{incident['number']}/serious", body).json
    queue = {item["kind"]: item for item in manager.get("/api/obligations").json["items"]}
    if "Cal/OSHA" not in expected:
        assert answer["report"] is None
        assert "calosha.serious_report" not in queue
        return
    report = answer["report"]
    assert report["withinHours"] == 8
    assert dt.datetime.fromisoformat(report["dueBy"]) == learned + 8 * HOUR  # not from the event
    assert dt.datetime.fromisoformat(report["dueBy"]).utcoffset() in (-8 * HOUR, -7 * HOUR)
    assert "Nature of the injury" in report["tell"]
    item = queue["calosha.serious_report"]
    assert item["incidentNumber"] == incident["number"] and item["status"] == "open"
    assert dt.datetime.fromisoformat(item["dueAt"]) == learned + 8 * HOUR
    # Its own kind, not the federal report.
    assert item["title"] == "Cal/OSHA serious injury report (T8 CCR §342)"


def test_the_incident_shows_the_facts_and_the_report(as_user, ca_site):
    manager = as_user("safety_manager")
    incident = file_incident(manager, ca_site, dt.datetime.now(dt.UTC) - HOUR)
    manager.put_json(f"/api/calosha/incidents/{incident['number']}/serious", {"inpatientHours": 30})
    section = manager.get(f"/api/incidents/{incident['number']}").json["seriousInjury"]
    assert section["report"]["reasons"] == ["in-patient hospitalization over 24 hours"]
    # Learned when it was reported, unless said otherwise.
    assert dt.datetime.fromisoformat(section["report"]["dueBy"]) == \
        dt.datetime.fromisoformat(incident["createdAt"]) + 8 * HOUR


def test_a_site_outside_california_owes_no_cal_osha_report(as_user, tx_site):
    manager = as_user("safety_manager")
    incident = file_incident(manager, tx_site, dt.datetime.now(dt.UTC) - HOUR)
    answer = manager.put_json(f"/api/calosha/incidents/{incident['number']}/serious", {"died": True}).json
    assert answer["report"] is None
    assert manager.get("/api/obligations").json["items"] == []


def test_corrected_facts_withdraw_the_report_and_it_stays_on_record(as_user, ca_site):
    manager = as_user("safety_manager")
    number = file_incident(manager, ca_site, dt.datetime.now(dt.UTC) - HOUR)["number"]
    url = f"/api/calosha/incidents/{number}/serious"
    manager.put_json(url, {"lostMember": True})
    assert len(manager.get("/api/obligations").json["items"]) == 1
    assert manager.put_json(url, {"lostMember": False}).json["report"] is None
    assert manager.get("/api/obligations").json["items"] == []
    waived = manager.get("/api/obligations", {"status": "waived"}).json["items"]
    assert len(waived) == 1 and "no longer" in waived[0]["note"]


def test_the_facts_are_validated_and_a_reporter_may_not_set_them(as_user, ca_site):
    manager = as_user("safety_manager")
    reporter = as_user("reporter")
    number = file_incident(reporter, ca_site, dt.datetime.now(dt.UTC) - HOUR)["number"]
    url = f"/api/calosha/incidents/{number}/serious"
    bad = manager.put_json(url, {"inpatientHours": -3, "died": "yes"}, status=400).json
    assert {issue["path"] for issue in bad["issues"]} == {"inpatientHours", "died"}
    future = (dt.datetime.now(dt.UTC) + 3 * HOUR).isoformat()
    assert manager.put_json(url, {"learnedAt": future}, status=400).json["issues"][0]["path"] == "learnedAt"
    reporter.put_json(url, {"died": True}, status=403)
    assert "seriousInjury" not in reporter.get(f"/api/incidents/{number}").json
