"""Tests of the `osha` plugin: injury and illness cases, recordability,
the 300 Log / 300A, hours, rates, the ITA checks and CSV files, and the
service with the plugin disabled.

The helpers below are shared by the modules of this package.
"""

from __future__ import annotations

from typing import Any

from ehs_core import testing

OSHA = "/api/osha"
INCIDENTS = "/api/incidents"
# An incident in 2025 written with a non-UTC offset (local date 2025-03-10, 09:00).
OCCURRED = "2025-03-10T09:00:00-05:00"
YEAR = 2025

# Every establishment field the ITA summary needs; leading zeros in ein and zip.
ESTABLISHMENT: dict[str, Any] = {
    "streetAddress": "1 Foundry Road", "city": "Springfield", "state": "MA", "zip": "01101",
    "naicsCode": "336390", "industryDescription": "Motor vehicle parts", "ein": "012345678",
    "establishmentType": 1,
}

# A work-related new case: recordable once any criterion is added.
WORK = {"workRelated": True, "newCase": True}

# Every Form 301 field that `missingFields` asks for, filled in.
FORM_301: dict[str, Any] = {
    "jobTitle": "Press operator", "employeeAddress": "12 Elm Street, Springfield MA 01101",
    "dateOfBirth": "1980-04-02", "dateOfHire": "2015-06-01", "sex": "F", "timeStartedWork": "07:30",
    "activityBefore": "Loading blanks into the press",
    "whatHappened": "The guard was open and the ram came down",
    "natureOfInjury": "Laceration", "bodyPart": "Left index finger", "objectSubstance": "Press ram",
    "treatedInEmergencyRoom": True, "physicianName": "Dr. Ruth Hale", "treatmentFacility": "Mercy Hospital",
}


def issue_paths(response: Any) -> set[str]:
    """The `path`s of a 400's issues (checking the error shape on the way)."""
    assert response.status_int == 400, response.body[:300]
    assert isinstance(response.json["error"], str) and response.json["error"]
    assert response.json["issues"]
    for issue in response.json["issues"]:
        assert isinstance(issue["message"], str) and issue["message"]
    return {issue["path"] for issue in response.json["issues"]}


def assert_error(response: Any, status: int) -> None:
    assert response.status_int == status, response.body[:300]
    assert response.content_type == "application/json"
    assert isinstance(response.json["error"], str) and response.json["error"]


def new_site(browser: Any, name: str = "Plant North", establishment: bool = True, **fields: Any) -> int:
    """Create a site (with every establishment field unless told otherwise)."""
    site_id = testing.new_site(browser, name)["id"]
    body = {**(ESTABLISHMENT if establishment else {}), **fields}
    if body:
        browser.patch_json(f"/api/sites/{site_id}", body, status=200)
    return site_id


def new_incident(browser: Any, site_id: int, occurred_at: str = OCCURRED, type: str = "injury",
                 **fields: Any) -> dict:
    """File a low-severity incident (no notice mail) and return its JSON."""
    fields = {"title": "Hand caught in press", "type": type, "occurredAt": occurred_at, **fields}
    return testing.file_report(browser, site_id, **fields).json


def add_case(browser: Any, number: int, name: str = "Jane Roe", status: int | str = 201,
             **answers: Any) -> Any:
    body = {"name": name, **answers} if name is not None else answers
    return browser.post_json(f"{OSHA}/incidents/{number}/cases", body, status=status)


def new_case(browser: Any, number: int, name: str = "Jane Roe", **answers: Any) -> dict:
    return add_case(browser, number, name, **answers).json


def patch_case(browser: Any, case_id: int, status: int | str = 200, **fields: Any) -> Any:
    return browser.patch_json(f"{OSHA}/cases/{case_id}", fields, status=status)


def cases_of(browser: Any, number: int) -> list[dict]:
    return browser.get(f"{OSHA}/incidents/{number}/cases", status=200).json


def full_year(hours: float, employees: float) -> list[dict[str, Any]]:
    return [{"month": m, "hours": hours, "averageEmployees": employees} for m in range(1, 13)]


def put_hours(browser: Any, site_id: int, entries: list[dict[str, Any]], year: int | str = YEAR,
              status: int | str = 200) -> Any:
    return browser.put_json(f"{OSHA}/sites/{site_id}/hours?year={year}", entries, status=status)


def get_log(browser: Any, site_id: int, year: int | str = YEAR, status: int | str = 200) -> Any:
    return browser.get(f"{OSHA}/log", {"siteId": site_id, "year": year}, status=status)


def recorded(browser: Any, site_id: int, name: str = "Jane Roe", occurred_at: str = OCCURRED,
             incident_type: str = "injury", **answers: Any) -> dict:
    """A new incident with one work-related new case; returns the case."""
    number = new_incident(browser, site_id, occurred_at, incident_type)["number"]
    return new_case(browser, number, name, **{**WORK, **answers})


def endpoints(number: int, case_id: int, site_id: int) -> list[tuple[str, str, Any]]:
    """Every /api/osha route as (method, url, JSON body or None), with valid bodies."""
    hours = [{"month": 1, "hours": 9, "averageEmployees": 1}]
    return [
        ("GET", f"{OSHA}/incidents/{number}/cases", None),
        ("POST", f"{OSHA}/incidents/{number}/cases", {"name": "Someone Else"}),
        ("PATCH", f"{OSHA}/cases/{case_id}", {"jobTitle": "Welder"}),
        ("GET", f"{OSHA}/cases/{case_id}/301", None),
        ("GET", f"{OSHA}/log?siteId={site_id}&year={YEAR}", None),
        ("GET", f"{OSHA}/sites/{site_id}/hours?year={YEAR}", None),
        ("GET", f"{OSHA}/sites/{site_id}/certification?year={YEAR}", None),
        ("PUT", f"{OSHA}/sites/{site_id}/certification?year={YEAR}", {"executiveName": "Pat Boss"}),
        ("PUT", f"{OSHA}/sites/{site_id}/hours?year={YEAR}", hours),
        ("GET", f"{OSHA}/ita/summary.csv?year={YEAR}", None),
        ("GET", f"{OSHA}/ita/cases.csv?year={YEAR}", None),
        ("GET", f"{OSHA}/ita/coverage?year={YEAR}", None),
        ("DELETE", f"{OSHA}/cases/{case_id}", None),  # last: the others still find the case
    ]


def call(browser: Any, method: str, url: str, body: Any, status: int | str = "*") -> Any:
    if body is not None:
        return getattr(browser, f"{method.lower()}_json")(url, body, status=status)
    return getattr(browser, method.lower())(url, status=status)
