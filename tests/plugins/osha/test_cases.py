"""Injury and illness cases through the API: numbering, validation (with the
180-day cap), recalculation, direct-report deadlines and their notice mail,
missing fields, Form 301, deletion, roles and injuredCount."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from ehs_core.testing import mail_html, mail_text
from tests.plugins.osha import (
    FORM_301,
    INCIDENTS,
    OSHA,
    WORK,
    add_case,
    assert_error,
    call,
    cases_of,
    endpoints,
    issue_paths,
    new_case,
    new_incident,
    new_site,
    patch_case,
)

REQUIRED_301 = {"jobTitle", "employeeAddress", "dateOfBirth", "dateOfHire", "sex", "timeStartedWork",
                "activityBefore", "whatHappened", "natureOfInjury", "bodyPart", "objectSubstance",
                "treatedInEmergencyRoom"}


@pytest.fixture
def incident(manager: Any, site: int) -> dict:
    return new_incident(manager, site)


def quiet(inbox: Any) -> None:
    """Let mail still on its way from earlier tests arrive, then forget it."""
    seen = -1
    while len(inbox.settle(0.3)) != seen:
        seen = len(inbox.messages)
    inbox.clear()


def body_of(message: Any) -> str:
    return mail_text(message)


# --- create, numbering ----------------------------------------------------


def test_create_stores_every_answer_and_form_301_field(manager: Any, incident: dict) -> None:
    answers = {**WORK, "employmentType": "temporary_worker", "died": False, "dateOfDeath": None,
               "daysAwayFromWork": True, "daysAway": 12, "restrictedOrTransfer": True, "daysRestricted": 8,
               "medicalTreatment": True, "lossOfConsciousness": True, "significantDiagnosis": True,
               "specialCase": "none", "caseType": "injury", "privacyCase": False,
               "inpatientHospitalization": False, "amputation": False, "lossOfEye": False,
               "reportedToOshaAt": None, **FORM_301}
    response = add_case(manager, incident["number"], "Jane Roe", **answers)
    assert response.status_int == 201
    case = response.json
    assert case["name"] == "Jane Roe"
    assert case["caseNumber"] == incident["reference"]
    assert isinstance(case["id"], int)
    for key, value in answers.items():
        assert case[key] == value, key
    assert case["recordable"] is True
    assert case["outcome"] == "days_away"
    assert case["severeReport"] is None
    assert case["missingFields"] == []
    assert cases_of(manager, incident["number"]) == [case]


def test_cases_are_numbered_by_incident_reference_with_suffixes(manager: Any, site: int,
                                                                 incident: dict) -> None:
    reference = incident["reference"]
    assert re.fullmatch(r"INC-\d{4,}", reference)
    numbers = [new_case(manager, incident["number"], f"Person {n}")["caseNumber"] for n in range(1, 4)]
    assert numbers == [reference, f"{reference}-2", f"{reference}-3"]
    other = new_incident(manager, site)
    assert new_case(manager, other["number"], "Other Person")["caseNumber"] == other["reference"]
    listed = cases_of(manager, incident["number"])
    assert [c["caseNumber"] for c in listed] == numbers
    assert [c["name"] for c in listed] == ["Person 1", "Person 2", "Person 3"]


def test_new_case_defaults(manager: Any, site: int, incident: dict) -> None:
    case = new_case(manager, incident["number"])
    assert case["employmentType"] == "employee"
    assert case["workRelated"] is None and case["newCase"] is None
    assert case["recordable"] is False and case["outcome"] is None
    assert case["daysAway"] == 0 and case["daysRestricted"] == 0
    assert case["specialCase"] == "none"
    assert case["caseType"] == "injury"  # from the incident's type
    illness = new_incident(manager, site, type="illness")
    assert new_case(manager, illness["number"])["caseType"] == "other_illness"


@pytest.mark.parametrize(("body", "path"), [
    ({}, "name"),
    ({"name": ""}, "name"),
    ({"name": "J", "employmentType": "intern"}, "employmentType"),
    ({"name": "J", "workRelated": "yes"}, "workRelated"),
    ({"name": "J", "daysAway": -1}, "daysAway"),
    ({"name": "J", "daysAway": 181}, "daysAway"),
    ({"name": "J", "daysAway": 2.5}, "daysAway"),
    ({"name": "J", "daysRestricted": 181}, "daysRestricted"),
    ({"name": "J", "specialCase": "msd"}, "specialCase"),
    ({"name": "J", "caseType": "musculoskeletal"}, "caseType"),
    ({"name": "J", "sex": "X"}, "sex"),
    ({"name": "J", "timeStartedWork": "25:00"}, "timeStartedWork"),
    ({"name": "J", "dateOfBirth": "1980-02-30"}, "dateOfBirth"),
    ({"name": "J", "dateOfHire": "01/02/2020"}, "dateOfHire"),
    ({"name": "J", "reportedToOshaAt": "2025-03-10T10:00:00"}, "reportedToOshaAt"),
    ({"name": "J", "treatedInEmergencyRoom": "no"}, "treatedInEmergencyRoom"),
    ({"name": "J", "dateOfDeath": "2025-03-10"}, "dateOfDeath"),  # only for a death
])
def test_create_validation(manager: Any, incident: dict, body: dict, path: str) -> None:
    response = manager.post_json(f"{OSHA}/incidents/{incident['number']}/cases", body, status=400)
    assert path in issue_paths(response)
    assert cases_of(manager, incident["number"]) == []


@pytest.mark.parametrize(("away", "restricted", "status"), [
    (180, 0, 201), (0, 180, 201), (100, 80, 201), (100, 81, 400), (90, 91, 400), (180, 1, 400),
])
def test_create_caps_days_away_plus_restricted_at_180(manager: Any, incident: dict, away: int,
                                                      restricted: int, status: int) -> None:
    response = add_case(manager, incident["number"], status=status, **WORK, daysAway=away,
                        daysRestricted=restricted)
    if status == 400:
        issue_paths(response)
        assert cases_of(manager, incident["number"]) == []
    else:
        assert (response.json["daysAway"], response.json["daysRestricted"]) == (away, restricted)


def test_patch_caps_stored_plus_new_days_at_180(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, daysAway=100)
    issue_paths(patch_case(manager, case["id"], status=400, daysRestricted=81))
    stored = cases_of(manager, incident["number"])[0]
    assert (stored["daysAway"], stored["daysRestricted"]) == (100, 0)  # the refused PATCH changed nothing
    assert patch_case(manager, case["id"], daysRestricted=80).json["daysRestricted"] == 80
    issue_paths(patch_case(manager, case["id"], status=400, daysAway=101))
    issue_paths(patch_case(manager, case["id"], status=400, daysAway=101, jobTitle="Welder"))
    stored = cases_of(manager, incident["number"])[0]
    assert (stored["daysAway"], stored["daysRestricted"], stored["jobTitle"]) == (100, 80, None)
    # Both changed in one PATCH: judged on the new pair, not the stored one.
    changed = patch_case(manager, case["id"], daysAway=50, daysRestricted=130).json
    assert (changed["daysAway"], changed["daysRestricted"]) == (50, 130)
    issue_paths(patch_case(manager, case["id"], status=400, daysAway=181, daysRestricted=0))


def test_patch_validation(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"])
    assert "name" in issue_paths(patch_case(manager, case["id"], status=400, name=""))
    assert "sex" in issue_paths(patch_case(manager, case["id"], status=400, sex="unknown"))
    assert "caseType" in issue_paths(patch_case(manager, case["id"], status=400, caseType="msd"))
    assert cases_of(manager, incident["number"]) == [case]


# --- recalculation -------------------------------------------------------


def test_recordable_and_outcome_are_recalculated_on_every_patch(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK)
    assert (case["recordable"], case["outcome"]) == (False, None)

    def patch(**fields: Any) -> tuple[bool, str | None]:
        body = patch_case(manager, case["id"], **fields).json
        return body["recordable"], body["outcome"]

    assert patch(medicalTreatment=True) == (True, "other_recordable")
    assert patch(restrictedOrTransfer=True, daysRestricted=3) == (True, "restricted")
    assert patch(daysAwayFromWork=True, daysAway=2) == (True, "days_away")
    assert patch(died=True, dateOfDeath="2025-03-11") == (True, "death")
    assert patch(died=False, dateOfDeath=None) == (True, "days_away")
    assert patch(daysAwayFromWork=False, daysAway=0) == (True, "restricted")
    assert patch(employmentType="contractor") == (False, None)
    assert patch(employmentType="temporary_worker") == (True, "restricted")
    assert patch(workRelated=False) == (False, None)
    assert patch(workRelated=True, newCase=None) == (False, None)
    assert patch(newCase=True, restrictedOrTransfer=False, daysRestricted=0) == (True, "other_recordable")
    assert patch(medicalTreatment=False) == (False, None)
    # What is stored matches what the PATCH answered.
    stored = cases_of(manager, incident["number"])[0]
    assert (stored["recordable"], stored["outcome"]) == (False, None)


def test_computed_fields_cannot_be_written(manager: Any, incident: dict) -> None:
    response = manager.post_json(f"/api/osha/incidents/{incident['number']}/cases",
                                 {"name": "Pat", "recordable": True, **WORK}, status=400)
    [issue] = response.json["issues"]
    assert issue["path"] == "recordable"
    assert "worked out from the answers" in issue["message"]
    case = new_case(manager, incident["number"], **WORK)
    response = patch_case(manager, case["id"], outcome="death", status=400)
    assert [issue["path"] for issue in response.json["issues"]] == ["outcome"]
    assert manager.get(f"/api/osha/incidents/{incident['number']}/cases").json == [case]


@pytest.mark.parametrize(("answers", "case_type", "privacy"), [
    ({"specialCase": "hearing_loss", "caseType": "injury"}, "hearing_loss", False),
    ({"specialCase": "tuberculosis"}, "respiratory_condition", True),
    ({"specialCase": "needlestick"}, "injury", True),
    ({"caseType": "skin_disorder", "medicalTreatment": True}, "skin_disorder", False),
    ({"caseType": "poisoning", "specialCase": "medical_removal"}, "poisoning", False),
    ({"caseType": "other_illness", "privacyCase": True, "medicalTreatment": True}, "other_illness", True),
])
def test_case_type_column_m_and_privacy(manager: Any, incident: dict, answers: dict, case_type: str,
                                        privacy: bool) -> None:
    case = new_case(manager, incident["number"], **WORK, **answers)
    assert case["recordable"] is True
    assert case["caseType"] == case_type
    assert case["privacyCase"] is privacy


def test_medical_removal_is_never_other_recordable(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, specialCase="medical_removal", medicalTreatment=True)
    assert case["outcome"] == "restricted"


# --- direct report to OSHA (1904.39) ---------------------------------------


def due(case: dict) -> dt.datetime:
    moment = dt.datetime.fromisoformat(case["severeReport"]["dueBy"])
    assert moment.tzinfo is not None
    return moment


def test_fatality_must_be_reported_within_8_hours(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, died=True, dateOfDeath="2025-03-10")
    report = case["severeReport"]
    assert report["withinHours"] == 8
    assert report["reasons"] == ["fatality"]
    assert due(case) == dt.datetime.fromisoformat("2025-03-10T17:00:00-05:00")


def test_later_death_counts_from_the_day_of_death(manager: Any, site: int, incident: dict) -> None:
    # The day of death starts at midnight on the establishment's clock (CDT, -05:00, in March).
    manager.patch_json(f"/api/sites/{site}", {"timezone": "America/Chicago"}, status=200)
    case = new_case(manager, incident["number"], **WORK, died=True, dateOfDeath="2025-03-20")
    assert case["severeReport"]["withinHours"] == 8
    assert due(case) == dt.datetime.fromisoformat("2025-03-20T08:00:00-05:00")


def test_death_more_than_30_days_later_needs_no_direct_report(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, died=True, dateOfDeath="2025-04-15")
    assert case["recordable"] is True and case["outcome"] == "death"
    assert case["severeReport"] is None


@pytest.mark.parametrize(("flag", "reason"), [
    ("inpatientHospitalization", "in-patient hospitalization"),
    ("amputation", "amputation"),
    ("lossOfEye", "loss of an eye"),
])
def test_severe_injuries_must_be_reported_within_24_hours(manager: Any, incident: dict, flag: str,
                                                          reason: str) -> None:
    case = new_case(manager, incident["number"], **WORK, **{flag: True})
    report = case["severeReport"]
    assert report["withinHours"] == 24
    assert report["reasons"] == [reason]
    assert due(case) == dt.datetime.fromisoformat("2025-03-11T09:00:00-05:00")


def test_several_reasons_take_the_shortest_deadline(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, died=True, dateOfDeath="2025-03-10",
                    amputation=True, inpatientHospitalization=True)
    report = case["severeReport"]
    assert report["withinHours"] == 8
    assert set(report["reasons"]) == {"fatality", "amputation", "in-patient hospitalization"}
    assert due(case) == dt.datetime.fromisoformat("2025-03-10T17:00:00-05:00")


def test_no_direct_report_for_ordinary_or_unrelated_cases(manager: Any, incident: dict) -> None:
    plain = new_case(manager, incident["number"], **WORK, daysAway=30, medicalTreatment=True)
    assert plain["severeReport"] is None
    unrelated = new_case(manager, incident["number"], workRelated=False, newCase=True, amputation=True)
    assert unrelated["severeReport"] is None


@pytest.mark.parametrize("employment", ["contractor", "visitor"])
def test_no_direct_report_for_people_who_are_not_our_employees(manager: Any, incident: dict, inbox: Any,
                                                                employment: str) -> None:
    """1904.39(a) asks for reports of an *employee's* death, hospitalization, amputation or
    loss of an eye; like recordability (1904.31) it concerns covered employees only."""
    quiet(inbox)
    case = new_case(manager, incident["number"], **WORK, employmentType=employment, died=True,
                    dateOfDeath="2025-03-10", amputation=True)
    assert case["recordable"] is False
    assert case["severeReport"] is None
    assert inbox.settle() == []


def test_recording_the_report_clears_severe_report(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, lossOfEye=True)
    assert case["severeReport"] is not None
    body = patch_case(manager, case["id"], reportedToOshaAt="2025-03-10T15:30:00-05:00").json
    assert body["severeReport"] is None
    assert dt.datetime.fromisoformat(body["reportedToOshaAt"]) == \
        dt.datetime.fromisoformat("2025-03-10T20:30:00+00:00")
    assert cases_of(manager, incident["number"])[0]["severeReport"] is None
    # Reported at creation: never owed.
    reported = new_case(manager, incident["number"], **WORK, amputation=True,
                        reportedToOshaAt="2025-03-10T11:00:00-05:00")
    assert reported["severeReport"] is None


def test_notice_mail_goes_to_safety_managers_and_admins_once(manager: Any, make_user: Any, incident: dict,
                                                             inbox: Any) -> None:
    make_user("supervisor")
    make_user("reporter")
    quiet(inbox)
    case = new_case(manager, incident["number"], **WORK, medicalTreatment=True)
    assert inbox.settle() == []  # not (yet) a severe case
    case = patch_case(manager, case["id"], inpatientHospitalization=True).json
    assert case["severeReport"]["withinHours"] == 24
    messages = inbox.wait(2)
    assert sorted(m["To"] for m in messages) == sorted(["admin@acme.test", manager.user["email"]])
    for message in messages:
        assert case["caseNumber"] in message["Subject"]
        assert "24" in message["Subject"] + body_of(message)
        assert "Jane Roe" not in message["Subject"] + body_of(message)
    # Later updates, even ones adding reasons, do not send it again.
    patch_case(manager, case["id"], jobTitle="Welder")
    patch_case(manager, case["id"], amputation=True)
    patch_case(manager, case["id"], died=True, dateOfDeath="2025-03-10")
    assert len(inbox.settle()) == 2


def test_notice_mail_when_a_case_is_created_severe(manager: Any, incident: dict, inbox: Any) -> None:
    quiet(inbox)
    case = new_case(manager, incident["number"], **WORK, died=True, dateOfDeath="2025-03-10")
    messages = inbox.wait(2)
    assert {m["To"] for m in messages} == {"admin@acme.test", manager.user["email"]}
    assert all(case["caseNumber"] in m["Subject"] for m in messages)
    patch_case(manager, case["id"], jobTitle="Welder")
    assert len(inbox.settle()) == 2
    # A case that never required a report sends nothing.
    new_case(manager, incident["number"], "Second Person", **WORK, daysAway=3)
    assert len(inbox.settle()) == 2


def test_a_deadline_already_past_when_the_case_is_entered_is_said_so(manager: Any, incident: dict,
                                                                      inbox: Any) -> None:
    """The incident of 10 March 2025 is entered long after its 24 hours: the answer
    and the notice mail say the report is already overdue (1904.39(a)(2))."""
    quiet(inbox)
    case = new_case(manager, incident["number"], **WORK, amputation=True)
    report = case["severeReport"]
    assert report["pastDueWhenEntered"] is True
    assert dt.datetime.fromisoformat(report["enteredAt"]) > due(case)
    messages = inbox.wait(2)
    for message in messages:
        assert "overdue" in message["Subject"]
        text = body_of(message)
        assert "already passed" in text
        # The deadline in the establishment's words: its clock and zone (the site is in Chicago).
        assert "Report by: 11 Mar 2025, 09:00 CDT (America/Chicago)" in text
        html = mail_html(message)
        assert "The deadline has already passed." in html
        assert "11 Mar 2025, 09:00 CDT" in html and f"/incidents/{incident['number']}" in html


def test_a_deadline_still_ahead_is_not_called_past(manager: Any, site: int, inbox: Any) -> None:
    quiet(inbox)
    occurred = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)).replace(microsecond=0)
    number = new_incident(manager, site, occurred.isoformat())["number"]
    case = new_case(manager, number, **WORK, inpatientHospitalization=True)
    report = case["severeReport"]
    assert report["pastDueWhenEntered"] is False
    assert due(case) == occurred + dt.timedelta(hours=24)
    assert dt.datetime.fromisoformat(report["enteredAt"]) < due(case)
    # The answer keeps the moment the case was entered, not the time of each read.
    assert cases_of(manager, number)[0]["severeReport"] == report
    for message in inbox.wait(2):
        assert "due within 24 hours" in message["Subject"] and "overdue" not in message["Subject"]
        assert "already passed" not in body_of(message)


# --- missing fields ------------------------------------------------------


def test_missing_fields_shrink_as_fields_are_filled(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK)
    assert case["missingFields"] == []  # not recordable: nothing to file
    case = patch_case(manager, case["id"], medicalTreatment=True).json
    assert set(case["missingFields"]) == REQUIRED_301
    remaining = set(REQUIRED_301)
    for name, value in FORM_301.items():
        if name not in REQUIRED_301:
            continue
        case = patch_case(manager, case["id"], **{name: value}).json
        remaining.discard(name)
        assert set(case["missingFields"]) == remaining, name
    assert case["missingFields"] == []


def test_missing_fields_by_outcome(manager: Any, site: int) -> None:
    number = new_incident(manager, site, type="property_damage")["number"]
    away = new_case(manager, number, **WORK, **FORM_301, daysAwayFromWork=True)
    assert set(away["missingFields"]) == {"daysAway", "caseType"}
    assert patch_case(manager, away["id"], daysAway=4, caseType="injury").json["missingFields"] == []
    restricted = new_case(manager, number, **WORK, **FORM_301, restrictedOrTransfer=True, caseType="injury")
    assert restricted["missingFields"] == ["daysRestricted"]
    death = new_case(manager, number, **WORK, **FORM_301, died=True, caseType="injury")
    assert death["missingFields"] == ["dateOfDeath"]
    assert patch_case(manager, death["id"], dateOfDeath="2025-03-12").json["missingFields"] == []


def sql_agrees_with_missing_fields(dbsession: Any) -> None:
    """The home card's count in SQL (the stored `incomplete`, and the
    migration's fill of it, osha_0012's BACKFILL) names exactly the cases
    `missing_fields` finds something missing in (issue #42 item 2: a speed
    change gives the plain code's answer)."""
    import importlib.util
    from pathlib import Path

    from sqlalchemy import select, text

    import ehs_plugins.osha
    from ehs_plugins.osha.cases import missing_fields
    from ehs_plugins.osha.models import InjuryCase
    path = Path(ehs_plugins.osha.__file__).parent / "migrations" / "versions" / "osha_0012_perfdata_home.py"
    spec = importlib.util.spec_from_file_location("osha_0012_perfdata_home", path)
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    incomplete = select(InjuryCase.id).where(InjuryCase.incomplete.is_(True))
    dbsession.expire_all()
    plain = {case.id for case in dbsession.execute(select(InjuryCase)).scalars() if missing_fields(case)}
    assert set(dbsession.execute(incomplete).scalars()) == plain
    with dbsession.begin_nested() as nested:
        dbsession.execute(text("UPDATE osha_cases SET incomplete = NOT incomplete"))
        dbsession.execute(text(migration.BACKFILL))
        assert set(dbsession.execute(incomplete).scalars()) == plain
        nested.rollback()


def test_the_missing_fields_counted_in_sql_are_those_of_each_case(manager: Any, site: int,
                                                                  dbsession: Any) -> None:
    number = new_incident(manager, site, type="property_damage")["number"]
    case = new_case(manager, number, **WORK)
    sql_agrees_with_missing_fields(dbsession)  # not recordable: nothing missing
    case = patch_case(manager, case["id"], medicalTreatment=True).json
    sql_agrees_with_missing_fields(dbsession)
    for name, value in FORM_301.items():
        if name in REQUIRED_301:
            patch_case(manager, case["id"], **{name: value})
            sql_agrees_with_missing_fields(dbsession)
    patch_case(manager, case["id"], jobTitle="")  # an emptied text is missing, as a null one
    sql_agrees_with_missing_fields(dbsession)
    away = new_case(manager, number, **WORK, **FORM_301, daysAwayFromWork=True)
    sql_agrees_with_missing_fields(dbsession)
    patch_case(manager, away["id"], daysAway=4, caseType="injury")
    new_case(manager, number, **WORK, **FORM_301, restrictedOrTransfer=True, caseType="injury")
    death = new_case(manager, number, **WORK, **FORM_301, died=True, caseType="injury")
    sql_agrees_with_missing_fields(dbsession)
    patch_case(manager, death["id"], dateOfDeath="2025-03-12")
    sql_agrees_with_missing_fields(dbsession)


# --- Form 301 ------------------------------------------------------------


def test_form_301_contents(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], "Jane Roe", **WORK, **FORM_301, died=True,
                    dateOfDeath="2025-03-12", inpatientHospitalization=True, daysAway=2)
    form = manager.get(f"{OSHA}/cases/{case['id']}/301", status=200).json
    assert form["caseNumber"] == incident["reference"]
    assert form["employee"] == {"name": "Jane Roe", "address": FORM_301["employeeAddress"],
                                "dateOfBirth": "1980-04-02", "dateOfHire": "2015-06-01", "sex": "F",
                                "jobTitle": "Press operator"}
    assert form["physician"] == {"name": "Dr. Ruth Hale", "facility": "Mercy Hospital",
                                 "treatedInEmergencyRoom": True, "hospitalizedOvernight": True}
    assert form["case"] == {
        "dateOfInjury": "2025-03-10", "timeEmployeeBeganWork": "07:30", "timeOfEvent": "09:00",
        "activityBefore": FORM_301["activityBefore"], "whatHappened": FORM_301["whatHappened"],
        "injuryOrIllness": "Laceration", "bodyPart": "Left index finger", "bodyPartCode": None,
        "objectOrSubstance": "Press ram", "dateOfDeath": "2025-03-12", "timeUnknown": False,
    }
    assert form["recordable"] is True
    assert form["outcome"] == "death"
    assert form["caseType"] == "injury"
    assert form["privacyCase"] is False


# --- delete, 404s ----------------------------------------------------------


def test_delete(manager: Any, incident: dict) -> None:
    first = new_case(manager, incident["number"], "First Person")
    second = new_case(manager, incident["number"], "Second Person")
    response = manager.delete(f"{OSHA}/cases/{first['id']}", status=204)
    assert response.body == b""
    assert cases_of(manager, incident["number"]) == [second]
    assert_error(manager.delete(f"{OSHA}/cases/{first['id']}", status=404), 404)
    assert_error(patch_case(manager, first["id"], status=404, jobTitle="Welder"), 404)
    assert_error(manager.get(f"{OSHA}/cases/{first['id']}/301", status=404), 404)
    assert manager.get(f"{INCIDENTS}/{incident['number']}").json["injuredCount"] == 1


def test_a_deleted_case_is_kept_whole_off_the_log_for_the_retention_period(manager: Any, incident: dict,
                                                                           dbsession: Any) -> None:
    """29 CFR 1904.33: the records are kept five years. A removed case is
    off the log and the forms, but every answer is kept, with who removed it
    and when, and its trail stays (issue 35: a case could be hard-deleted)."""
    import json

    from ehs_plugins.osha.models import RemovedCase

    case = new_case(manager, incident["number"], "Pat Doe", jobTitle="Welder")
    trail_before = manager.get(f"{INCIDENTS}/{incident['number']}/timeline").json
    manager.delete(f"{OSHA}/cases/{case['id']}", status=204)
    assert cases_of(manager, incident["number"]) == []
    [kept] = dbsession.query(RemovedCase).filter(RemovedCase.case_id == case["id"]).all()
    data = json.loads(kept.data)
    assert (data["name"], data["job_title"], data["id"]) == ("Pat Doe", "Welder", case["id"])
    assert kept.removed_by_id == manager.get("/api/auth/me").json["user"]["id"] and kept.removed_at
    trail_after = manager.get(f"{INCIDENTS}/{incident['number']}/timeline").json
    assert all(entry in trail_after for entry in trail_before)


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/incidents/99999/cases", None),
    ("POST", "/incidents/99999/cases", {"name": "Jane Roe"}),
    ("PATCH", "/cases/99999", {"jobTitle": "Welder"}),
    ("DELETE", "/cases/99999", None),
    ("GET", "/cases/99999/301", None),
    ("GET", "/cases/abc/301", None),
    ("GET", "/incidents/INC-0001/cases", None),
    ("GET", "/sites/99999/hours?year=2025", None),
    ("PUT", "/sites/99999/hours?year=2025", []),
    ("GET", "/log?siteId=99999&year=2025", None),
])
def test_unknown_things_answer_404(manager: Any, method: str, path: str, body: Any) -> None:
    assert_error(call(manager, method, OSHA + path, body, status=404), 404)


# --- roles ---------------------------------------------------------------


@pytest.fixture
def existing(manager: Any, site: int, incident: dict) -> tuple[int, int, int]:
    case = new_case(manager, incident["number"], **WORK, medicalTreatment=True)
    return incident["number"], case["id"], site


@pytest.mark.parametrize("role", ["reporter", "supervisor"])
def test_roles_below_safety_manager_get_403_everywhere(make_user: Any, manager: Any, role: str,
                                                       existing: tuple[int, int, int]) -> None:
    browser = make_user(role)
    for method, url, body in endpoints(*existing):
        assert_error(call(browser, method, url, body, status=403), 403)
    number, case_id, _ = existing
    assert [c["id"] for c in cases_of(manager, number)] == [case_id]  # nothing happened


def test_signed_out_gets_401_everywhere(new_client: Any, manager: Any,
                                        existing: tuple[int, int, int]) -> None:
    browser = new_client()
    for method, url, body in endpoints(*existing):
        assert_error(call(browser, method, url, body, status=401), 401)
    number, case_id, _ = existing
    assert [c["id"] for c in cases_of(manager, number)] == [case_id]


@pytest.mark.parametrize("who", ["manager", "admin"])
def test_safety_managers_and_admins_may_use_every_endpoint(request: Any, who: str,
                                                           existing: tuple[int, int, int]) -> None:
    browser = request.getfixturevalue(who)
    for method, url, body in endpoints(*existing):
        response = call(browser, method, url, body)
        assert response.status_int < 300, (method, url, response.status, response.body[:300])


# --- injuredCount ----------------------------------------------------------


def test_injured_count_is_shown_to_everyone_who_may_see_the_incident(make_user: Any, manager: Any,
                                                                     site: int) -> None:
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    own = new_incident(reporter, site)
    untouched = new_incident(reporter, site, title="Near miss")
    # Read once before: the list keeps each item's text while what it is made of is the same.
    assert {i["number"]: i["injuredCount"] for i in manager.get(INCIDENTS).json["items"]}[own["number"]] == 0
    new_case(manager, own["number"], "First Person", **WORK, daysAway=3)
    new_case(manager, own["number"], "Second Person")  # counted whether recordable or not
    for browser in (reporter, supervisor, manager):
        assert browser.get(f"{INCIDENTS}/{own['number']}").json["injuredCount"] == 2
        assert browser.get(f"{INCIDENTS}/{untouched['number']}").json["injuredCount"] == 0
        items = {i["number"]: i for i in browser.get(INCIDENTS).json["items"]}
        assert items[own["number"]]["injuredCount"] == 2
        assert items[untouched["number"]]["injuredCount"] == 0
    # The count is all a reporter learns: no names, and no case endpoints.
    detail = reporter.get(f"{INCIDENTS}/{own['number']}").text
    assert "First Person" not in detail and "Second Person" not in detail
    assert_error(reporter.get(f"{OSHA}/incidents/{own['number']}/cases", status=403), 403)


def test_cases_of_another_sites_incident_do_not_mix(manager: Any, site: int) -> None:
    other_site = new_site(manager, "Plant South")
    a = new_incident(manager, site)
    b = new_incident(manager, other_site)
    new_case(manager, a["number"], "Alice Able")
    new_case(manager, b["number"], "Bob Baker")
    assert [c["name"] for c in cases_of(manager, a["number"])] == ["Alice Able"]
    assert [c["name"] for c in cases_of(manager, b["number"])] == ["Bob Baker"]


def test_a_date_of_birth_in_the_future_is_refused(manager: Any, incident: dict) -> None:
    born = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    response = add_case(manager, incident["number"], dateOfBirth=born, status=400)
    assert response.json["issues"] == [{"path": "dateOfBirth", "message": "Must not lie in the future"}]
    assert cases_of(manager, incident["number"]) == []


@pytest.mark.parametrize("moment", ["2026-01-05T08:00:00+23:59", "0001-01-01T00:00:00Z",
                                    "9999-12-31T23:59:59-23:59"])
def test_reported_to_osha_at_with_an_extreme_year_or_offset_is_a_400(manager: Any, incident: dict,
                                                                    moment: str) -> None:
    case = new_case(manager, incident["number"], **WORK)
    response = patch_case(manager, case["id"], reportedToOshaAt=moment, status=400)
    assert issue_paths(response) == {"reportedToOshaAt"}
    assert cases_of(manager, incident["number"]) == [case]


@pytest.mark.parametrize("kind", ["near_miss", "hazard"])
def test_no_injury_case_on_an_incident_that_hurt_no_one(manager: Any, site: int, kind: str) -> None:
    near_miss = new_incident(manager, site, type=kind)
    response = add_case(manager, near_miss["number"], status=409, **WORK)
    assert "hurt no one" in response.json["error"]
    assert cases_of(manager, near_miss["number"]) == []
