"""Every record shows the event on the establishment's clock: the site's
IANA zone, the server's zone (TZ) for a site without one, never the offset
the client sent. Form 300 column D, Form 301 items 10-12, the 300A's
calendar year (1904.32(a)(1)), both ITA files and the rates of a year."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from tests.plugins.osha import (
    FORM_301,
    OSHA,
    WORK,
    full_year,
    get_log,
    new_case,
    new_incident,
    new_site,
    put_hours,
)

# 22:00 on 31 December 2025 in New York (EST, -05:00), sent by a device in UTC.
NEW_YEARS_EVE = "2026-01-01T03:00:00+00:00"


def ita_rows(browser: Any, name: str, year: int) -> list[dict[str, str]]:
    text = browser.get(f"{OSHA}/ita/{name}.csv", {"year": year}, status=200).text
    return list(csv.DictReader(io.StringIO(text, newline="")))


def recorded_at(browser: Any, site_id: int, occurred_at: str) -> dict:
    number = new_incident(browser, site_id, occurred_at)["number"]
    return new_case(browser, number, "Zed Quill", **WORK, **FORM_301, daysAway=3)


@pytest.fixture
def new_york(manager: Any) -> int:
    site = new_site(manager, "Harbor Works", timezone="America/New_York")
    put_hours(manager, site, full_year(10_000, 60), year=2025)
    put_hours(manager, site, full_year(10_000, 60), year=2026)
    return site


def test_new_york_case_is_on_the_2025_log_and_300a(manager: Any, new_york: int) -> None:
    case = recorded_at(manager, new_york, NEW_YEARS_EVE)
    log = get_log(manager, new_york, 2025).json
    assert [(row["caseId"], row["dateOfInjury"]) for row in log["rows"]] == [(case["id"], "2025-12-31")]
    assert (log["totals"]["H"], log["totals"]["K"]) == (1, 3)
    assert log["rates"]["trir"] == 1.67  # 1 x 200,000 / 120,000 hours
    later = get_log(manager, new_york, 2026).json
    assert later["rows"] == [] and later["totals"]["H"] == 0 and later["rates"]["trir"] == 0.0


def test_new_york_case_on_form_301_is_22_00_on_31_december(manager: Any, new_york: int) -> None:
    case = recorded_at(manager, new_york, NEW_YEARS_EVE)
    form = manager.get(f"{OSHA}/cases/{case['id']}/301", status=200).json
    assert (form["case"]["dateOfInjury"], form["case"]["timeOfEvent"]) == ("2025-12-31", "22:00")


def test_new_york_case_is_in_the_2025_ita_files(manager: Any, new_york: int) -> None:
    recorded_at(manager, new_york, NEW_YEARS_EVE)
    (row,) = ita_rows(manager, "cases", 2025)
    assert (row["year_of_filing"], row["date_of_incident"], row["time_of_incident"]) == \
        ("2025", "12/31/2025", "22:00")
    assert ita_rows(manager, "cases", 2026) == []
    summaries = {row["year_filing_for"]: row for row in
                 ita_rows(manager, "summary", 2025) + ita_rows(manager, "summary", 2026)}
    assert (summaries["2025"]["total_dafw_cases"], summaries["2025"]["no_injuries_illnesses"]) == ("1", "1")
    assert (summaries["2026"]["total_dafw_cases"], summaries["2026"]["no_injuries_illnesses"]) == ("0", "2")


def test_severe_report_deadline_is_written_on_the_establishments_clock(manager: Any, new_york: int) -> None:
    number = new_incident(manager, new_york, NEW_YEARS_EVE)["number"]
    case = new_case(manager, number, **WORK, amputation=True)
    assert case["severeReport"]["dueBy"] == "2026-01-01T22:00:00-05:00"  # 24 hours after 22:00 EST


@pytest.mark.parametrize(("zone", "occurred", "year", "local"), [
    # The offset the client sends does not matter, only the instant and the site's zone.
    ("Asia/Tokyo", "2025-12-31T16:30:00+00:00", 2026, ("2026-01-01", "01:30")),
    ("Asia/Tokyo", "2025-12-31T23:30:00-05:00", 2026, ("2026-01-01", "13:30")),
    ("Asia/Tokyo", "2025-12-31T14:59:00+00:00", 2025, ("2025-12-31", "23:59")),
    ("America/New_York", "2025-07-01T03:30:00+00:00", 2025, ("2025-06-30", "23:30")),  # EDT, -04:00
    ("Pacific/Honolulu", "2025-01-01T06:00:00+00:00", 2024, ("2024-12-31", "20:00")),
])
def test_year_date_and_time_follow_the_sites_zone(manager: Any, zone: str, occurred: str, year: int,
                                                  local: tuple[str, str]) -> None:
    site = new_site(manager, "Far Plant", timezone=zone)
    case = recorded_at(manager, site, occurred)
    assert [row["dateOfInjury"] for row in get_log(manager, site, year).json["rows"]] == [local[0]]
    for other in (year - 1, year + 1):
        assert get_log(manager, site, other).json["rows"] == []
    form = manager.get(f"{OSHA}/cases/{case['id']}/301", status=200).json
    assert (form["case"]["dateOfInjury"], form["case"]["timeOfEvent"]) == local
    (row,) = ita_rows(manager, "cases", year)
    month, day = local[0][5:7], local[0][8:10]
    assert (row["date_of_incident"], row["time_of_incident"]) == (f"{month}/{day}/{year}", local[1])


@pytest.mark.parametrize(("server_zone", "year", "local"), [
    ("UTC", 2026, ("2026-01-01", "03:00")),
    ("America/Los_Angeles", 2025, ("2025-12-31", "19:00")),
    ("Asia/Tokyo", 2026, ("2026-01-01", "12:00")),
])
def test_a_site_without_a_zone_uses_the_servers_zone(manager: Any, registry: Any, monkeypatch: Any,
                                                     server_zone: str, year: int,
                                                     local: tuple[str, str]) -> None:
    monkeypatch.setitem(registry.settings, "ehs.timezone", server_zone)
    site = new_site(manager, "Zoneless Yard")
    case = recorded_at(manager, site, NEW_YEARS_EVE)
    assert [row["dateOfInjury"] for row in get_log(manager, site, year).json["rows"]] == [local[0]]
    form = manager.get(f"{OSHA}/cases/{case['id']}/301", status=200).json
    assert (form["case"]["dateOfInjury"], form["case"]["timeOfEvent"]) == local
    (row,) = ita_rows(manager, "cases", year)
    assert row["time_of_incident"] == local[1]
