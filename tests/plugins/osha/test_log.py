"""The 300 Log and 300A of one site and year (GET /api/osha/log), the rates,
the ITA edit checks, and the monthly hours (GET/PUT /api/osha/sites/:id/hours).

The totals and rates are checked against a hand-counted fixture (`ledger`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.plugins.osha import (
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

# One 2025 incident at the site, with these people (answers beyond WORK).
# Hand count: G=1; H=2; I=2; J=4 (9 recordable cases)
#             K = 10 + 5 = 15; L = 3 + 7 + 4 = 14
#             M1 = Gail, Hank, Nina = 3; M2 = Hilda = 1; M3 = Ivan, Tom = 2; M4 = Iris = 1;
#             M5 = Jack = 1; M6 = Jill = 1
COUNTED: dict[str, dict[str, Any]] = {
    "Gail Grave": {"died": True, "dateOfDeath": "2025-03-10"},  # G, M1
    "Hank Away": {"daysAwayFromWork": True, "daysAway": 10},  # H, K 10, M1
    "Hilda Skin": {"daysAway": 5, "daysRestricted": 3, "caseType": "skin_disorder"},  # H, K 5, L 3, M2
    "Ivan Lung": {"restrictedOrTransfer": True, "daysRestricted": 7,
                  "caseType": "respiratory_condition"},  # I, L 7, M3
    "Iris Lead": {"specialCase": "medical_removal", "daysRestricted": 4,
                  "caseType": "poisoning"},  # I, L 4, M4
    "Jack Ears": {"specialCase": "hearing_loss"},  # J, M5
    "Jill Faint": {"lossOfConsciousness": True, "caseType": "other_illness"},  # J, M6
    "Tom Cough": {"specialCase": "tuberculosis"},  # J, M3, privacy case
    "Nina Sharp": {"specialCase": "needlestick"},  # J, M1, privacy case
}
# On the same incident, not recordable: never on the log.
NOT_RECORDABLE: dict[str, dict[str, Any]] = {
    "Fay Firstaid": {},
    "Carl Contract": {"employmentType": "contractor", "daysAway": 20},
    "Vera Visitor": {"employmentType": "visitor", "medicalTreatment": True},
    "Ned Notwork": {"workRelated": False, "died": True},
    "Olive Oldcase": {"newCase": False, "daysRestricted": 9},
}
EXPECTED_TOTALS = {"G": 1, "H": 2, "I": 2, "J": 4, "K": 15, "L": 14,
                   "M1": 3, "M2": 1, "M3": 2, "M4": 1, "M5": 1, "M6": 1}
HOURS = 120_000  # 12 months of 10,000 hours, 50 employees each
RATES = {"trir": 9 * 200_000 / HOURS, "dart": 4 * 200_000 / HOURS, "ltir": 2 * 200_000 / HOURS}


@pytest.fixture
def ledger(manager: Any, site: int) -> dict[str, Any]:
    """The hand-counted site and year, plus recordable cases elsewhere that must not count."""
    put_hours(manager, site, full_year(10_000, 50))
    number = new_incident(manager, site, locationDetail="Press line 3")["number"]
    ids = {}
    for name, answers in {**COUNTED, **NOT_RECORDABLE}.items():
        ids[name] = new_case(manager, number, name, **{**WORK, **answers})["id"]
    # Recordable, but another year or another site.
    ids["Olga Lastyear"] = recorded(manager, site, "Olga Lastyear", "2024-06-01T10:00:00-05:00",
                                    daysAway=50)["id"]
    ids["Nora Nextyear"] = recorded(manager, site, "Nora Nextyear", "2026-01-15T10:00:00-05:00",
                                    died=True, dateOfDeath="2026-01-15")["id"]
    south = new_site(manager, "Plant South")
    put_hours(manager, south, full_year(1_000, 5))
    ids["Sam South"] = recorded(manager, south, "Sam South", daysAway=30, daysRestricted=30)["id"]
    return {"site": site, "ids": ids, "log": get_log(manager, site).json}


# --- 300A totals and rates ----------------------------------------------------


@pytest.mark.parametrize("column", list(EXPECTED_TOTALS))
def test_300a_total(ledger: dict[str, Any], column: str) -> None:
    assert ledger["log"]["totals"][column] == EXPECTED_TOTALS[column]


def test_totals_have_exactly_the_300a_columns(ledger: dict[str, Any]) -> None:
    assert ledger["log"]["totals"] == EXPECTED_TOTALS


@pytest.mark.parametrize("rate", ["trir", "dart", "ltir"])
def test_rate(ledger: dict[str, Any], rate: str) -> None:
    # TRIR 15.00 = 9 x 200,000 / 120,000; DART 6.67 = (2 + 2) x ...; LTIR 3.33 = 2 x ... (H only)
    assert ledger["log"]["rates"][rate] == pytest.approx(RATES[rate], abs=0.005)


def test_hours_and_employees_of_the_ledger(ledger: dict[str, Any]) -> None:
    log = ledger["log"]
    assert log["site"] == {"id": ledger["site"], "name": "Plant North"}
    assert log["year"] == YEAR
    assert log["totalHoursWorked"] == HOURS
    assert log["annualAverageEmployees"] == 50
    assert log["hours"] == full_year(10_000, 50)
    assert log["checks"] == []  # a consistent, complete year
    assert log["missingEstablishmentFields"] == []


def test_rows_are_the_recordable_cases_of_the_site_and_year_only(ledger: dict[str, Any]) -> None:
    rows = ledger["log"]["rows"]
    assert sorted(row["caseId"] for row in rows) == sorted(ledger["ids"][name] for name in COUNTED)
    text = json.dumps(ledger["log"])
    for name in [*NOT_RECORDABLE, "Olga Lastyear", "Nora Nextyear", "Sam South"]:
        assert name not in text


def test_row_columns(ledger: dict[str, Any]) -> None:
    rows = {row["caseId"]: row for row in ledger["log"]["rows"]}
    columns = {name: (rows[ledger["ids"][name]]["outcomeColumn"], rows[ledger["ids"][name]]["typeColumn"],
                      rows[ledger["ids"][name]]["daysAway"], rows[ledger["ids"][name]]["daysRestricted"])
               for name in COUNTED}
    assert columns == {
        "Gail Grave": ("G", "M1", 0, 0), "Hank Away": ("H", "M1", 10, 0), "Hilda Skin": ("H", "M2", 5, 3),
        "Ivan Lung": ("I", "M3", 0, 7), "Iris Lead": ("I", "M4", 0, 4), "Jack Ears": ("J", "M5", 0, 0),
        "Jill Faint": ("J", "M6", 0, 0), "Tom Cough": ("J", "M3", 0, 0), "Nina Sharp": ("J", "M1", 0, 0),
    }
    hank = rows[ledger["ids"]["Hank Away"]]
    assert hank["employeeName"] == "Hank Away"
    assert hank["caseNumber"].startswith("INC-")
    assert hank["dateOfInjury"] == "2025-03-10"
    assert hank["whereOccurred"] == "Press line 3"


def test_privacy_cases_are_shown_as_privacy_case(ledger: dict[str, Any]) -> None:
    rows = {row["caseId"]: row for row in ledger["log"]["rows"]}
    for name in ("Tom Cough", "Nina Sharp"):
        assert rows[ledger["ids"][name]]["employeeName"] == "Privacy case"
        assert name not in json.dumps(ledger["log"])


def test_requested_privacy_case_is_masked(manager: Any, site: int) -> None:
    case = recorded(manager, site, "Pia Private", medicalTreatment=True, caseType="other_illness",
                    privacyCase=True, jobTitle="Nurse")
    log = get_log(manager, site).json
    assert [row["employeeName"] for row in log["rows"]] == ["Privacy case"]
    assert "Pia Private" not in json.dumps(log)
    # Back to an ordinary case: named again.
    patch_case(manager, case["id"], privacyCase=False)
    assert [row["employeeName"] for row in get_log(manager, site).json["rows"]] == ["Pia Private"]


def test_case_leaves_the_log_when_no_longer_recordable(manager: Any, site: int) -> None:
    case = recorded(manager, site, daysAway=4)
    assert get_log(manager, site).json["totals"]["H"] == 1
    patch_case(manager, case["id"], workRelated=False)
    log = get_log(manager, site).json
    assert log["rows"] == []
    assert set(log["totals"].values()) == {0}


def test_deleted_case_leaves_the_log(manager: Any, site: int) -> None:
    case = recorded(manager, site, daysAway=4)
    manager.delete(f"{OSHA}/cases/{case['id']}", status=204)
    assert get_log(manager, site).json["rows"] == []


# --- hours, average employees, rates without hours -----------------------------


def test_annual_average_employees_is_the_rounded_up_mean_of_monthly_averages(manager: Any, site: int) -> None:
    entries = full_year(1_000, 50)
    entries[11]["averageEmployees"] = 51  # mean 50.08
    put_hours(manager, site, entries)
    log = get_log(manager, site).json
    assert log["annualAverageEmployees"] == 51
    assert log["peakEmployees"] == 51
    put_hours(manager, site, full_year(1_000, 10.2))
    assert get_log(manager, site).json["annualAverageEmployees"] == 11


def test_rates_are_null_without_hours(manager: Any, site: int) -> None:
    recorded(manager, site, daysAway=3)
    log = get_log(manager, site).json
    assert log["rates"] == {"trir": None, "dart": None, "ltir": None}
    put_hours(manager, site, full_year(0, 5))
    log = get_log(manager, site).json
    assert log["totalHoursWorked"] == 0
    assert log["rates"] == {"trir": None, "dart": None, "ltir": None}


def test_rates_with_fractional_hours(manager: Any, site: int) -> None:
    recorded(manager, site, daysAway=3)
    recorded(manager, site, "John Doe", restrictedOrTransfer=True, daysRestricted=2)
    recorded(manager, site, "Max Mustermann", medicalTreatment=True)
    put_hours(manager, site, full_year(3_333.25, 20))  # 39,999 hours
    log = get_log(manager, site).json
    assert log["totalHoursWorked"] == 39_999
    assert log["rates"]["trir"] == pytest.approx(3 * 200_000 / 39_999, abs=0.005)
    assert log["rates"]["dart"] == pytest.approx(2 * 200_000 / 39_999, abs=0.005)
    assert log["rates"]["ltir"] == pytest.approx(1 * 200_000 / 39_999, abs=0.005)


def hours_of(manager: Any, site_id: int, year: int | str = YEAR, status: int = 200) -> Any:
    return manager.get(f"{OSHA}/sites/{site_id}/hours", {"year": year}, status=status)


def test_hours_put_and_get(manager: Any, site: int) -> None:
    empty = [{"month": m, "hours": None, "averageEmployees": None} for m in range(1, 13)]
    assert hours_of(manager, site).json == empty
    entries = full_year(10_000, 50)
    entries[5] = {"month": 6, "hours": 9_876.5, "averageEmployees": 48.5}
    assert put_hours(manager, site, entries).json == entries
    assert hours_of(manager, site).json == entries
    assert get_log(manager, site).json["hours"] == entries
    # Another year is separate.
    assert hours_of(manager, site, 2024).json == empty
    # Only the months sent change.
    put_hours(manager, site, [{"month": 3, "hours": 1_234, "averageEmployees": 7}])
    entries[2] = {"month": 3, "hours": 1_234, "averageEmployees": 7}
    assert hours_of(manager, site).json == entries


def test_null_hours_and_employees_clear_a_month(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(10_000, 50))
    body = put_hours(manager, site, [{"month": 2, "hours": None, "averageEmployees": None}]).json
    assert body[1] == {"month": 2, "hours": None, "averageEmployees": None}
    assert hours_of(manager, site).json == body
    assert [e["hours"] for e in body] == [10_000, None] + [10_000] * 10
    log = get_log(manager, site).json
    assert log["totalHoursWorked"] == 110_000
    assert log["annualAverageEmployees"] == 50
    # One of the two alone is kept.
    body = put_hours(manager, site, [{"month": 4, "hours": None, "averageEmployees": 12}]).json
    assert body[3] == {"month": 4, "hours": None, "averageEmployees": 12}


@pytest.mark.parametrize("entries", [
    [{"month": 13, "hours": 1, "averageEmployees": 1}],
    [{"month": 0, "hours": 1, "averageEmployees": 1}],
    [{"month": -1, "hours": 1, "averageEmployees": 1}],
    [{"month": "3", "hours": 1, "averageEmployees": 1}],
    [{"month": 3, "hours": -5, "averageEmployees": 1}],
    [{"month": 3, "hours": 5, "averageEmployees": -1}],
    [{"month": 3, "hours": "many", "averageEmployees": 1}],
    [{"month": 3, "hours": 1, "averageEmployees": 1}, {"month": 3, "hours": 2, "averageEmployees": 1}],
    [{"hours": 1, "averageEmployees": 1}],
    [{"month": m, "hours": 1, "averageEmployees": 1} for m in range(1, 14)],
])
def test_hours_validation(manager: Any, site: int, entries: list) -> None:
    put_hours(manager, site, full_year(10_000, 50))
    issue_paths(put_hours(manager, site, entries, status=400))
    assert hours_of(manager, site).json == full_year(10_000, 50)


@pytest.mark.parametrize("year", ["abc", "20255", "25", "", "2025.0", "-2025"])
def test_bad_year_is_refused(manager: Any, site: int, year: str) -> None:
    issue_paths(put_hours(manager, site, full_year(1, 1), year=year, status=400))
    issue_paths(hours_of(manager, site, year, status=400))
    issue_paths(get_log(manager, site, year, status=400))
    for name in ("summary", "cases"):
        issue_paths(manager.get(f"{OSHA}/ita/{name}.csv", {"year": year}, status=400))


def test_year_and_site_are_required(manager: Any, site: int) -> None:
    issue_paths(manager.get(f"{OSHA}/sites/{site}/hours", status=400))
    issue_paths(manager.put_json(f"{OSHA}/sites/{site}/hours", full_year(1, 1), status=400))
    issue_paths(manager.get(f"{OSHA}/log", {"year": YEAR}, status=400))
    issue_paths(manager.get(f"{OSHA}/log", {"siteId": site}, status=400))
    issue_paths(manager.get(f"{OSHA}/log", {"siteId": "north", "year": YEAR}, status=400))


# --- ITA edit checks ---------------------------------------------------------


def check_fields(log: dict[str, Any], site_id: int, site_name: str = "Plant North") -> set[str]:
    """The fields of the log's checks on the 300A file, each check naming the site."""
    for check in log["checks"]:
        assert check["siteId"] == site_id
        assert check["siteName"] == site_name
        assert isinstance(check["message"], str) and check["message"]
    return {check["field"] for check in log["checks"] if check["caseId"] is None}


def case_checks(log: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The log's checks on the case file as (case number, field, level)."""
    return {(check["caseNumber"], check["field"], check["level"]) for check in log["checks"]
            if check["caseId"] is not None}


@pytest.fixture
def staffed(manager: Any, site: int) -> int:
    """The site with a complete, plausible year of hours."""
    put_hours(manager, site, full_year(10_000, 50))
    return site


def test_a_consistent_year_has_no_checks(manager: Any, staffed: int) -> None:
    recorded(manager, staffed, daysAway=5)
    recorded(manager, staffed, restrictedOrTransfer=True, daysRestricted=2)
    assert get_log(manager, staffed).json["checks"] == []


def test_check_cases_by_type_equal_cases_by_outcome(manager: Any, staffed: int) -> None:
    # A property-damage incident gives no default type: the case has no column M.
    case = recorded(manager, staffed, incident_type="property_damage", medicalTreatment=True)
    log = get_log(manager, staffed).json
    assert log["totals"]["J"] == 1 and sum(log["totals"][f"M{n}"] for n in range(1, 7)) == 0
    # The 300A cross-field check, and the case-file check naming the case to fix.
    assert check_fields(log, staffed) == {"total_injuries"}
    assert case_checks(log) == {(case["caseNumber"], "type_of_incident", "error")}


def test_check_average_employees_above_case_count(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(150, 1))  # 1,800 hours for one employee
    recorded(manager, site, medicalTreatment=True)
    assert check_fields(get_log(manager, site).json, site) == {"annual_average_employees"}


def test_check_days_away_cases_need_days_away(manager: Any, staffed: int) -> None:
    case = recorded(manager, staffed, daysAwayFromWork=True)  # H 1, K 0
    log = get_log(manager, staffed).json
    assert check_fields(log, staffed) == {"total_dafw_days"}
    assert case_checks(log) == {(case["caseNumber"], "dafw_num_away", "error")}


def test_check_days_away_need_a_days_away_case(manager: Any, staffed: int) -> None:
    recorded(manager, staffed, died=True, dateOfDeath="2025-03-12", daysAway=2)  # G 1, K 2, H 0
    assert check_fields(get_log(manager, staffed).json, staffed) == {"total_dafw_cases"}


def test_check_days_away_at_least_days_away_cases(manager: Any, staffed: int) -> None:
    recorded(manager, staffed, daysAway=1)
    recorded(manager, staffed, daysAwayFromWork=True)  # H 2, K 1
    log = get_log(manager, staffed).json
    assert (log["totals"]["H"], log["totals"]["K"]) == (2, 1)
    assert check_fields(log, staffed) == {"total_dafw_days"}


def test_check_restricted_cases_need_restricted_days(manager: Any, staffed: int) -> None:
    case = recorded(manager, staffed, restrictedOrTransfer=True)  # I 1, L 0
    log = get_log(manager, staffed).json
    assert check_fields(log, staffed) == {"total_djtr_days"}
    assert case_checks(log) == {(case["caseNumber"], "djtr_num_tr", "error")}


def test_check_restricted_days_need_a_days_away_or_restricted_case(manager: Any, staffed: int) -> None:
    # G 1, L 2, H+I 0
    case = recorded(manager, staffed, died=True, dateOfDeath="2025-03-12", daysRestricted=2)
    log = get_log(manager, staffed).json
    assert check_fields(log, staffed) == {"total_djtr_cases"}
    # The case file: a death with day counts is worth a second look.
    assert case_checks(log) == {(case["caseNumber"], "djtr_num_tr", "warning")}


def test_check_death_needs_its_date(manager: Any, staffed: int) -> None:
    case = recorded(manager, staffed, died=True)
    assert case_checks(get_log(manager, staffed).json) == {(case["caseNumber"], "date_of_death", "error")}


def test_case_checks_name_each_case(manager: Any, staffed: int) -> None:
    away = recorded(manager, staffed, daysAwayFromWork=True)
    fine = recorded(manager, staffed, daysAway=4)
    restricted = recorded(manager, staffed, restrictedOrTransfer=True)
    log = get_log(manager, staffed).json
    assert case_checks(log) == {(away["caseNumber"], "dafw_num_away", "error"),
                                (restricted["caseNumber"], "djtr_num_tr", "error")}
    assert fine["caseNumber"] not in {number for number, _, _ in case_checks(log)}
    for check in log["checks"]:
        if check["caseId"] == away["id"]:
            assert "daysAway" in check["message"]


def test_check_average_employees_present(manager: Any, site: int) -> None:
    put_hours(manager, site, [{"month": m, "hours": 1_000, "averageEmployees": None} for m in range(1, 13)])
    log = get_log(manager, site).json
    assert log["annualAverageEmployees"] is None
    assert log["sizeCode"] is None
    assert check_fields(log, site) == {"annual_average_employees", "size"}


def test_check_average_employees_below_25000(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(5_000_000, 25_000))
    assert check_fields(get_log(manager, site).json, site) == {"annual_average_employees"}


def test_check_hours_worked_present(manager: Any, site: int) -> None:
    put_hours(manager, site, [{"month": m, "hours": None, "averageEmployees": 5} for m in range(1, 13)])
    log = get_log(manager, site).json
    assert check_fields(log, site) == {"total_hours_worked"}
    assert "error" in {c["level"] for c in log["checks"]}


def test_check_hours_per_employee_below_8760(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(800, 1))  # 9,600 hours for one employee
    log = get_log(manager, site).json
    assert check_fields(log, site) == {"total_hours_worked"}
    assert [c["level"] for c in log["checks"]] == ["error"]


def test_check_hours_per_employee_above_500(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(100, 10))  # 120 hours each
    log = get_log(manager, site).json
    assert check_fields(log, site) == {"total_hours_worked"}
    assert [c["level"] for c in log["checks"]] == ["warning"]


def test_check_hours_missing_for_a_month(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(10_000, 50)[:11])
    log = get_log(manager, site).json
    assert check_fields(log, site) == {"total_hours_worked"}
    assert "12" in log["checks"][0]["message"]


def test_check_unique_establishment_name(manager: Any, staffed: int) -> None:
    twin = new_site(manager, " plant north")
    log = get_log(manager, staffed).json
    assert check_fields(log, staffed) == {"establishment_name"}
    manager.patch_json(f"/api/sites/{twin}", {"archived": True}, status=200)
    assert get_log(manager, staffed).json["checks"] == []


def test_missing_establishment_fields(manager: Any) -> None:
    site = new_site(manager, "Bare Yard", establishment=False)
    put_hours(manager, site, full_year(10_000, 50))
    log = get_log(manager, site).json
    required = {"ein", "streetAddress", "city", "state", "zip", "naicsCode"}
    assert set(log["missingEstablishmentFields"]) == required
    assert check_fields(log, site, "Bare Yard") == required
    manager.patch_json(f"/api/sites/{site}", {"ein": "98-7654321", "city": "Boston"}, status=200)
    log = get_log(manager, site).json
    assert set(log["missingEstablishmentFields"]) == required - {"ein", "city"}
    assert check_fields(log, site, "Bare Yard") == required - {"ein", "city"}
    manager.patch_json(f"/api/sites/{site}", {"streetAddress": "2 Dock St", "state": "MA", "zip": "02110",
                                              "naicsCode": "493110"}, status=200)
    log = get_log(manager, site).json
    assert log["missingEstablishmentFields"] == []
    assert log["checks"] == []


def test_checks_name_only_their_own_site(manager: Any, staffed: int) -> None:
    other = new_site(manager, "Bare Yard", establishment=False)
    assert get_log(manager, staffed).json["checks"] == []
    assert check_fields(get_log(manager, other).json, other, "Bare Yard")


def summary_totals(dbsession: Any, registry: Any, site_id: int, year: int) -> tuple[dict, dict]:
    """The 300A page's totals (`log.load_totals`) and the log's (`log.load`)."""
    from ehs_core.sites.models import Site
    from ehs_plugins.osha.log import load, load_totals
    site = dbsession.get(Site, site_id)
    return (dict(load_totals(dbsession, registry, site, year).totals),
            dict(load(dbsession, registry, [site], year)[0].totals))


def test_the_300a_page_counts_the_totals_of_the_log(ledger: dict[str, Any], manager: Any, dbsession: Any,
                                                     registry: Any) -> None:
    """Issue #42 item 2: the 300A page reads only what its totals need, and
    they are the log's, case for case (the other year and site left out)."""
    from_summary, from_log = summary_totals(dbsession, registry, ledger["site"], YEAR)
    assert from_summary == from_log == EXPECTED_TOTALS
    page = manager.get("/osha/summary", {"siteId": ledger["site"], "year": YEAR}, status=200).text
    assert "120,000" in page  # the hours, as before


def test_the_300a_page_counts_an_open_period_to_today_as_the_log(manager: Any, site: int, dbsession: Any,
                                                                  registry: Any) -> None:
    import datetime as dt
    start = dt.date.today() - dt.timedelta(days=20)
    number = new_incident(manager, site, occurred_at=f"{start.isoformat()}T09:00:00+00:00")["number"]
    period = {"kind": "away", "from": (start + dt.timedelta(days=1)).isoformat(), "to": None}
    new_case(manager, number, **WORK, caseType="injury", periods=[period])
    new_case(manager, number, "Rita Restricted", **WORK, restrictedOrTransfer=True, daysRestricted=6)
    from_summary, from_log = summary_totals(dbsession, registry, site, start.year)
    assert from_summary == from_log and from_log["K"] >= 19 and from_log["L"] == 6
