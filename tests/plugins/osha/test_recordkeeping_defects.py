"""What a recordkeeper catches (issue "Recordkeeping II", defects 1-8): a
privacy case identified on the 300 Log, report times outside the event and
now, a needlestick filed as an illness, impossible and unusual dates, months
without an employee count, the establishment's address and codes, Form 301's
preparer and an unknown time of event. Each test cites its paragraph."""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader

from tests.plugins.osha import (
    FORM_301,
    OCCURRED,
    OSHA,
    WORK,
    YEAR,
    full_year,
    get_log,
    issue_paths,
    new_case,
    new_incident,
    new_site,
    patch_case,
    put_hours,
    recorded,
)

# A privacy case whose texts name the person (1904.29(b)(6)-(9)).
NAMED = {"natureOfInjury": "Zed Quill's mental health crisis", "bodyPart": "Head",
         "objectSubstance": "Argument with Quill's supervisor"}


def privacy_year(manager: Any, site: int) -> dict:
    number = new_incident(manager, site, locationDetail="Quill's workstation, bay 4")["number"]
    put_hours(manager, site, full_year(10_000, 50))
    return new_case(manager, number, "Zed Quill", **WORK, **NAMED, medicalTreatment=True, privacyCase=True,
                    caseType="other_illness", jobTitle="Assistant to Zed Quill")


# --- 1. privacy cases on the 300 Log: 1904.29(b)(6)-(9), 1904.35 ---------------


def test_privacy_case_json_log_names_no_one(manager: Any, site: int) -> None:
    """1904.29(b)(6)-(9): nothing in columns B-F of a privacy case identifies the person."""
    privacy_year(manager, site)
    row = get_log(manager, site).json["rows"][0]
    assert row["employeeName"] == "Privacy case"
    for column in ("jobTitle", "whereOccurred", "description"):
        assert "Zed" not in row[column] and "Quill" not in row[column], column
    assert "the employee" in row["description"] and "workstation" in row["whereOccurred"]


def test_a_case_that_is_not_private_keeps_its_texts(manager: Any, site: int) -> None:
    """1904.35(b)(2)(iv): the log is given with names, but for privacy cases."""
    number = new_incident(manager, site)["number"]
    new_case(manager, number, "Zed Quill", **WORK, **NAMED, medicalTreatment=True, caseType="injury")
    assert "Zed Quill" in get_log(manager, site).json["rows"][0]["description"]


def test_privacy_case_log_page_names_no_one(manager: Any, site: int) -> None:
    privacy_year(manager, site)
    page = manager.get("/osha/log", {"siteId": site, "year": YEAR}, status=200).text
    assert "Quill" not in page and "Zed" not in page


def test_printed_log_of_a_privacy_case_names_no_one(manager: Any, site: int) -> None:
    """1904.29(b)(6)-(9), read back from the printed PDF: no part of the name."""
    case = privacy_year(manager, site)
    response = manager.get("/osha/log.pdf", {"siteId": site, "year": YEAR}, status=200)
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(response.body)).pages)
    assert case["caseNumber"] in text and "Privacy case" in text
    assert "Zed" not in text and "Quill" not in text
    printed = manager.get("/osha/log/print", {"siteId": site, "year": YEAR}, status=200).text
    assert "Zed" not in printed and "Quill" not in printed


# --- 2. reportedToOshaAt between the event and now: 1904.39(a) ----------------


@pytest.mark.parametrize("reported", [
    "2025-03-10T08:59:00-05:00",  # a minute before the event
    (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat(),  # tomorrow
])
def test_report_time_outside_event_and_now_is_refused(manager: Any, site: int, reported: str) -> None:
    """A report to OSHA (1904.39(a)) follows the event and has happened: a
    mistyped time must not clear the pending report."""
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, inpatientHospitalization=True)
    assert case["severeReport"] is not None
    response = patch_case(manager, case["id"], status=400, reportedToOshaAt=reported)
    assert issue_paths(response) == {"reportedToOshaAt"}
    again = manager.get(f"{OSHA}/incidents/{number}/cases", status=200).json[0]
    assert again["reportedToOshaAt"] is None and again["severeReport"] is not None


def test_a_report_time_after_the_event_clears_the_report(manager: Any, site: int) -> None:
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, inpatientHospitalization=True)
    done = patch_case(manager, case["id"], reportedToOshaAt="2025-03-10T15:00:00-05:00").json
    assert done["severeReport"] is None


# --- 3. needlestick on an illness incident: 1904.8(a) ---------------------------


def test_needlestick_on_an_illness_incident_is_an_injury(manager: Any, site: int) -> None:
    """1904.8(a): a needlestick is entered as an injury (M1), whatever the incident's type."""
    number = new_incident(manager, site, type="illness")["number"]
    case = new_case(manager, number, **WORK, specialCase="needlestick")
    assert case["caseType"] == "injury"
    put_hours(manager, site, full_year(10_000, 50))
    assert get_log(manager, site).json["rows"][0]["typeColumn"] == "M1"
    # Once the employee develops an illness from it, the entry changes (and stays private).
    ill = patch_case(manager, case["id"], caseType="other_illness").json
    assert ill["caseType"] == "other_illness" and ill["privacyCase"] is True


def test_other_cases_on_an_illness_incident_default_to_an_illness(manager: Any, site: int) -> None:
    number = new_incident(manager, site, type="illness")["number"]
    assert new_case(manager, number, **WORK, medicalTreatment=True)["caseType"] == "other_illness"


# --- 4. impossible dates refused, unusual ones flagged ---------------------------

# The event: 2025-03-10 09:00 at the site (OCCURRED).
IMPOSSIBLE = [
    ({"died": True, "dateOfDeath": "2025-03-09"}, "dateOfDeath"),
    ({"dateOfHire": "2025-03-11"}, "dateOfHire"),
    ({"dateOfBirth": "2025-03-11"}, "dateOfBirth"),
    ({"dateOfBirth": "2010-01-01", "dateOfHire": "2009-12-31"}, "dateOfHire"),
    ({"preparedAt": "2025-03-09"}, "preparedAt"),
    ({"learnedAt": "2025-03-10T08:00:00-05:00"}, "learnedAt"),
    ({"reportedToOshaAt": "2025-03-09T23:00:00-05:00"}, "reportedToOshaAt"),
]


@pytest.mark.parametrize(("answers", "path"), IMPOSSIBLE)
def test_impossible_dates_are_refused(manager: Any, site: int, answers: dict, path: str) -> None:
    """Form 301 items 3, 4 and 18 against the event (item 11): what cannot be is refused, nothing saved."""
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK)
    assert path in issue_paths(patch_case(manager, case["id"], status=400, **answers))
    assert path in issue_paths(new_case_response(manager, number, answers))
    assert len(manager.get(f"{OSHA}/incidents/{number}/cases", status=200).json) == 1


def new_case_response(manager: Any, number: int, answers: dict) -> Any:
    return manager.post_json(f"{OSHA}/incidents/{number}/cases", {"name": "Ann Other", **WORK, **answers},
                             status=400)


POSSIBLE = [
    {"died": True, "dateOfDeath": "2025-03-10"},  # the same day
    {"dateOfHire": "2025-03-10"},  # hired that morning
    {"dateOfBirth": "1990-01-01", "dateOfHire": "2008-01-01"},
]


@pytest.mark.parametrize("answers", POSSIBLE)
def test_possible_dates_pass(manager: Any, site: int, answers: dict) -> None:
    number = new_incident(manager, site)["number"]
    assert new_case(manager, number, **WORK, **answers)["dateWarnings"] == []


UNUSUAL = [
    ({"dateOfBirth": "2012-01-01"}, "dateOfBirth"),  # 13 at the event
    ({"dateOfBirth": "1930-01-01"}, "dateOfBirth"),  # 95
    ({"dateOfBirth": "1990-01-01", "dateOfHire": "2002-06-01"}, "dateOfHire"),  # hired at 12
    ({"dateOfHire": "1960-01-01"}, "dateOfHire"),  # 65 years before
]


@pytest.mark.parametrize(("answers", "path"), UNUSUAL)
def test_unusual_dates_are_kept_and_flagged(manager: Any, site: int, answers: dict, path: str) -> None:
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, **answers)
    assert [warning["field"] for warning in case["dateWarnings"]] == [path]
    assert case["dateWarnings"][0]["message"]


def test_an_old_date_is_not_refused_for_a_change_elsewhere(manager: Any, site: int) -> None:
    """Only the dates being set are judged: the incident's date moving does not
    lock the case against other changes."""
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, dateOfHire="2025-03-01")
    manager.patch_json(f"/api/incidents/{number}", {"occurredAt": "2025-02-01T09:00:00-05:00"}, status=200)
    assert patch_case(manager, case["id"], jobTitle="Welder").json["jobTitle"] == "Welder"
    assert "dateOfHire" in issue_paths(patch_case(manager, case["id"], status=400, dateOfHire="2025-03-02"))


# --- 5. months with hours but no employee count: the 300A worksheet -------------


def test_months_with_hours_but_no_count_are_flagged(manager: Any, site: int) -> None:
    """300A worksheet: the average counts every pay period, those with no employees too."""
    months = [{"month": m, "hours": 3_500, "averageEmployees": 20 if m <= 6 else None} for m in range(1, 13)]
    put_hours(manager, site, months)
    log = get_log(manager, site).json
    found = [c for c in log["checks"] if c["field"] == "annual_average_employees" and c["caseId"] is None]
    assert len(found) == 1 and found[0]["level"] == "warning"
    message = found[0]["message"]
    assert "7, 8, 9, 10, 11, 12" in message and "divided by" in message and "0" in message
    assert log["annualAverageEmployees"] == 20


def test_a_month_with_neither_hours_nor_count_is_not_this_warning(manager: Any, site: int) -> None:
    put_hours(manager, site, [{"month": m, "hours": 3_500, "averageEmployees": 20} for m in range(1, 7)])
    log = get_log(manager, site).json
    assert not [c for c in log["checks"] if "no employee count" in c["message"]]


# --- 6. the establishment: ITA data dictionary ----------------------------------

ESTABLISHMENT_CHECKS = [
    ({"state": "ZZ"}, "state", "error"),
    ({"state": "pr"}, None, None),  # Puerto Rico, a territory
    ({"streetAddress": "PO Box 114"}, "streetAddress", "error"),
    ({"streetAddress": "P.O. Box 9, Springfield"}, "streetAddress", "error"),
    ({"streetAddress": "Post Office Box 12"}, "streetAddress", "error"),
    ({"streetAddress": "12 Boxwood Lane"}, None, None),
    ({"streetAddress": "1 Foundry Road " + "Building " * 12}, "streetAddress", "warning"),
    ({"naicsCode": "999999"}, "naicsCode", "warning"),
    ({"naicsCode": "622110"}, None, None),  # hospitals, in both tables
    ({"naicsCode": "452210"}, None, None),  # 2017 only (department stores)
    ({"naicsCode": "455110"}, None, None),  # 2022 only (department stores)
    ({"naicsCode": "454111"}, "naicsCode", "warning"),  # 2012 only: ITA takes it, worth a look
]


@pytest.mark.parametrize(("fields", "field", "level"), ESTABLISHMENT_CHECKS)
def test_establishment_checks(manager: Any, fields: dict, field: str | None, level: str | None) -> None:
    site = new_site(manager, "Plant East", **fields)
    put_hours(manager, site, full_year(10_000, 50))
    found = {(c["field"], c["level"]) for c in get_log(manager, site).json["checks"] if c["caseId"] is None}
    if field is None:
        assert found == set()
    else:
        assert (field, level) in found


def test_narratives_over_255_characters_are_flagged(manager: Any, site: int) -> None:
    """ITA's case file takes 255 characters of a narrative; longer text is cut, now with notice."""
    put_hours(manager, site, full_year(10_000, 50))
    case = recorded(manager, site, daysAway=3, caseType="injury", **{**FORM_301, "whatHappened": "x " * 200})
    found = {(c["caseId"], c["field"], c["level"]) for c in get_log(manager, site).json["checks"]}
    assert (case["id"], "nar_what_happened", "warning") in found


# --- 7. Form 301's preparer -------------------------------------------------------


def test_form_301_says_who_completed_it(manager: Any, site: int) -> None:
    """Form 301 "Completed by / Title / Phone / Date": the signed-in person by default, editable."""
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, medicalTreatment=True, caseType="injury")
    assert case["preparerName"] == "Sam Safety"
    today = dt.datetime.now(dt.UTC).astimezone(ZoneInfo("America/Chicago")).date().isoformat()
    assert case["preparedAt"] == today
    changed = patch_case(manager, case["id"], preparerName="Pat Nurse", preparerTitle="Occupational nurse",
                         preparerPhone="+1 617 555 0100", preparedAt="2025-03-11").json
    assert (changed["preparerName"], changed["preparerTitle"], changed["preparerPhone"],
            changed["preparedAt"]) == ("Pat Nurse", "Occupational nurse", "+1 617 555 0100", "2025-03-11")
    form = manager.get(f"{OSHA}/cases/{case['id']}/301", status=200).json
    assert form["preparer"] == {"name": "Pat Nurse", "title": "Occupational nurse",
                                "phone": "+1 617 555 0100", "date": "2025-03-11"}
    response = manager.get(f"/osha/cases/{case['id']}/301.pdf", status=200)
    text = " ".join(PdfReader(io.BytesIO(response.body)).pages[0].extract_text().split())
    assert "Pat Nurse" in text and "Occupational nurse" in text and "2025-03-11" in text
    refused = patch_case(manager, case["id"], status=400, preparerPhone="call me")
    assert issue_paths(refused) == {"preparerPhone"}


# --- 8. time of event unknown: Form 301 item 13 -----------------------------------


def test_time_unknown(manager: Any, site: int) -> None:
    """Form 301 item 13 "check if time cannot be determined"; ITA time_unknown 1, time_of_incident blank."""
    number = new_incident(manager, site, occurred_at=OCCURRED, type="illness")["number"]
    case = new_case(manager, number, **WORK, **FORM_301, medicalTreatment=True, timeUnknown=True)
    assert case["timeUnknown"] is True
    form = manager.get(f"{OSHA}/cases/{case['id']}/301", status=200).json
    assert form["case"]["timeUnknown"] is True and form["case"]["timeOfEvent"] is None
    rows = list(csv.DictReader(io.StringIO(manager.get(f"{OSHA}/ita/cases.csv", {"year": YEAR}).text)))
    assert (rows[0]["time_unknown"], rows[0]["time_of_incident"]) == ("1", "")
    patch_case(manager, case["id"], timeUnknown=False)
    rows = list(csv.DictReader(io.StringIO(manager.get(f"{OSHA}/ita/cases.csv", {"year": YEAR}).text)))
    assert (rows[0]["time_unknown"], rows[0]["time_of_incident"]) == ("0", "09:00")
