"""The right of access to the records, 29 CFR 1904.35(b)(2): the request desk
(POST/GET /api/osha/access-requests, fulfil), the clocks (next business day's
end; 7 calendar days for a representative), and the copies, read back from
their PDFs: exactly what the rule allows."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader

from ehs_plugins.osha.deadlines import next_business_day_end, seven_days_end
from tests.plugins.osha import FORM_301, OSHA, YEAR, issue_paths, new_site, recorded

DESK = f"{OSHA}/access-requests"
CHICAGO = ZoneInfo("America/Chicago")


def at(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=CHICAGO)


# (received, due) on the establishment's clock: 1904.35(b)(2)(iv), (v)(A).
NEXT_BUSINESS_DAY = [
    (at(2026, 3, 2, 9, 0), at(2026, 3, 3, 23, 59, 59)),  # Monday -> Tuesday
    (at(2026, 3, 5, 16, 0), at(2026, 3, 6, 23, 59, 59)),  # Thursday -> Friday
    (at(2026, 3, 6, 10, 0), at(2026, 3, 9, 23, 59, 59)),  # Friday -> Monday
    (at(2026, 3, 7, 10, 0), at(2026, 3, 9, 23, 59, 59)),  # Saturday -> Monday
    (at(2026, 3, 8, 23, 30), at(2026, 3, 9, 23, 59, 59)),  # Sunday night -> Monday
    (at(2026, 3, 2, 23, 30).astimezone(dt.UTC), at(2026, 3, 3, 23, 59, 59)),  # given in UTC (Tuesday there)
]


@pytest.mark.parametrize(("received", "due"), NEXT_BUSINESS_DAY)
def test_next_business_day(received: dt.datetime, due: dt.datetime) -> None:
    assert next_business_day_end(received, CHICAGO) == due


@pytest.mark.parametrize(("received", "due"), [
    (at(2026, 3, 2, 9, 0), at(2026, 3, 9, 23, 59, 59)),  # 1904.35(b)(2)(v)(B): 7 calendar days
    (at(2026, 3, 6, 10, 0), at(2026, 3, 13, 23, 59, 59)),  # weekends count
])
def test_seven_calendar_days(received: dt.datetime, due: dt.datetime) -> None:
    assert seven_days_end(received, CHICAGO) == due


@pytest.fixture
def year_of_cases(manager: Any, site: int) -> dict[str, Any]:
    """A site-year with an ordinary case and a privacy case whose texts name the person."""
    plain = recorded(manager, site, "Rita Moreno", daysAway=3, caseType="injury",
                     **{**FORM_301, "whatHappened": "Rita Moreno slipped on oil by press 4"})
    private = recorded(manager, site, "Zed Quill", medicalTreatment=True, privacyCase=True,
                       caseType="other_illness", natureOfInjury="Zed Quill's anxiety", bodyPart="Head",
                       objectSubstance="Stress")
    return {"site": site, "plain": plain, "private": private}


def pdf_text(manager: Any, url: str) -> str:
    response = manager.get(url, status=200)
    assert response.content_type == "application/pdf"
    pages = PdfReader(io.BytesIO(response.body)).pages
    return " ".join(" ".join(page.extract_text() for page in pages).split())


def ask(manager: Any, status: int | str = 201, **body: Any) -> Any:
    return manager.post_json(DESK, body, status=status)


def test_a_log_copy_is_due_the_next_business_day_and_keeps_names_but_privacy_cases(
        manager: Any, year_of_cases: dict) -> None:
    """1904.35(b)(2)(iv): the 300 Log, names left in except privacy cases (1904.29(b)(6)-(9))."""
    site = year_of_cases["site"]
    request = ask(manager, kind="log_copy", requesterName="Rita Moreno", siteId=site, year=YEAR).json
    received = dt.datetime.fromisoformat(request["receivedAt"])
    assert dt.datetime.fromisoformat(request["dueBy"]) == next_business_day_end(received, CHICAGO)
    assert request["overdue"] is False and request["secondsLeft"] > 0 and request["fulfilledAt"] is None
    text = pdf_text(manager, request["pdfUrl"])
    assert "Rita Moreno" in text and "Privacy case" in text
    assert "Zed" not in text and "Quill" not in text
    printed = manager.get(request["copyUrl"], status=200).text
    assert "Rita Moreno" in printed and "Quill" not in printed


def test_an_own_301_is_the_whole_form(manager: Any, year_of_cases: dict) -> None:
    """1904.35(b)(2)(v)(A): the employee's own Form 301, whole, by the next business day."""
    site, case = year_of_cases["site"], year_of_cases["plain"]
    request = ask(manager, kind="own_301", requesterName="Rita Moreno", siteId=site, year=YEAR,
                  caseId=case["id"]).json
    text = pdf_text(manager, request["pdfUrl"])
    assert "Rita Moreno" in text and "12 Elm Street" in text and "Dr. Ruth Hale" in text
    assert case["caseNumber"] in text


def test_a_representative_gets_only_the_case_part_within_seven_days(manager: Any,
                                                                     year_of_cases: dict) -> None:
    """1904.35(b)(2)(v)(B): an authorized employee representative gets the 301s'
    "about the case" part only (items 10-18), within 7 calendar days."""
    site = year_of_cases["site"]
    request = ask(manager, kind="representative_301", requesterName="Local 12 steward", siteId=site,
                  year=YEAR).json
    received = dt.datetime.fromisoformat(request["receivedAt"])
    assert dt.datetime.fromisoformat(request["dueBy"]) == seven_days_end(received, CHICAGO)
    text = pdf_text(manager, request["pdfUrl"])
    assert year_of_cases["plain"]["caseNumber"] in text and year_of_cases["private"]["caseNumber"] in text
    assert "slipped on oil by press 4" in text  # item 15, about the case
    for private in ("Rita", "Moreno", "Zed", "Quill", "12 Elm Street", "1980", "Dr. Ruth Hale",
                    "Mercy Hospital", "Information about the employee", "Sam Safety", "Completed by"):
        assert private not in text, private


def test_open_requests_are_listed_with_their_clocks_until_fulfilled(manager: Any,
                                                                     year_of_cases: dict) -> None:
    site = year_of_cases["site"]
    first = ask(manager, kind="representative_301", requesterName="Steward", siteId=site, year=YEAR).json
    second = ask(manager, kind="log_copy", requesterName="Former employee", siteId=site, year=YEAR).json
    listed = manager.get(DESK, status=200).json
    assert [r["id"] for r in listed] == [second["id"], first["id"]]  # the soonest due first
    given = manager.post_json(f"{DESK}/{second['id']}/fulfil", {"givenTo": "Former employee, by hand"},
                              status=200).json
    assert given["givenTo"] == "Former employee, by hand" and given["fulfilledAt"] is not None
    assert given["secondsLeft"] is None and given["overdue"] is False
    assert [r["id"] for r in manager.get(DESK, status=200).json] == [first["id"]]
    manager.post_json(f"{DESK}/{second['id']}/fulfil", {"givenTo": "again"}, status=409)


@pytest.mark.parametrize(("body", "path"), [
    ({"kind": "everything", "requesterName": "A", "year": YEAR}, "kind"),
    ({"kind": "log_copy", "requesterName": "", "year": YEAR}, "requesterName"),
    ({"kind": "own_301", "requesterName": "A", "year": YEAR}, "caseId"),
    ({"kind": "log_copy", "requesterName": "A", "year": YEAR, "caseId": 1}, "caseId"),
    ({"kind": "own_301", "requesterName": "A", "year": YEAR, "caseId": 999999}, "caseId"),
    ({"kind": "log_copy", "requesterName": "A", "year": 12}, "year"),
])
def test_requests_are_checked(manager: Any, site: int, body: dict, path: str) -> None:
    assert path in issue_paths(manager.post_json(DESK, {"siteId": site, **body}, status=400))


def test_a_case_that_is_not_recordable_has_no_301_to_copy(manager: Any, site: int) -> None:
    case = recorded(manager, site, "Fay Firstaid")  # work-related and new, but first aid only
    body = {"kind": "own_301", "requesterName": "Fay Firstaid", "siteId": site, "year": YEAR,
            "caseId": case["id"]}
    assert issue_paths(manager.post_json(DESK, body, status=400)) == {"caseId"}


def test_a_case_of_another_site_is_refused(manager: Any, year_of_cases: dict) -> None:
    other = new_site(manager, "Plant South")
    body = {"kind": "own_301", "requesterName": "A", "siteId": other, "year": YEAR,
            "caseId": year_of_cases["plain"]["id"]}
    response = manager.post_json(DESK, body, status=400)
    assert issue_paths(response) == {"caseId"}


def test_the_desk_is_for_safety_managers(make_user: Any, site: int) -> None:
    supervisor = make_user("supervisor")
    supervisor.get(DESK, status=403)
    supervisor.post_json(DESK, {"kind": "log_copy", "requesterName": "A", "siteId": site, "year": YEAR},
                         status=403)


def test_the_desk_page_and_home_show_what_is_due(manager: Any, year_of_cases: dict) -> None:
    site = year_of_cases["site"]
    form = {"kind": "log_copy", "requesterName": "Pat Former", "siteId": str(site), "year": str(YEAR)}
    response = manager.post("/osha/access-requests", form, status=302)
    page = manager.get(response.location, status=200).text
    assert "Pat Former" in page and "Due by" in page
    home = manager.get("/", status=200).text
    assert "copy of the records is asked for" in home and "Pat Former" in home
    request_id = manager.get(DESK, status=200).json[0]["id"]
    manager.post(f"/osha/access-requests/{request_id}/given", {"givenTo": "Pat Former"}, status=302)
    assert manager.get(DESK, status=200).json == []
    assert "copy of the records is asked for" not in manager.get("/", status=200).text
