"""Days from dates (Form 301 item 12's periods, 1904.7(b)(3)-(4)) and when
the employer learned (1904.39(b)(7)-(8), the 7-day recording deadline of
1904.29(b)(3))."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ehs_plugins.osha.days import AWAY, RESTRICTED, Period, count_days
from tests.plugins.osha import (
    OSHA,
    WORK,
    full_year,
    get_log,
    issue_paths,
    new_case,
    new_incident,
    patch_case,
    put_hours,
)

D = dt.date


def away(start: dt.date, end: dt.date | None) -> Period:
    return Period(AWAY, start, end)


def restricted(start: dt.date, end: dt.date | None) -> Period:
    return Period(RESTRICTED, start, end)


INJURY = D(2025, 3, 10)
TODAY = D(2025, 12, 31)

# (periods, (days away, days restricted)): 1904.7(b)(3)-(4).
COUNTING = [
    # Calendar days, the injury day not counted ((b)(3)(i), (b)(3)(iii)).
    ([away(D(2025, 3, 10), D(2025, 3, 14))], (4, 0)),
    ([away(D(2025, 3, 11), D(2025, 3, 11))], (1, 0)),
    # Weekends count (2025-03-15/16 are a Saturday and Sunday).
    ([away(D(2025, 3, 14), D(2025, 3, 17))], (4, 0)),
    # A restriction confined to the day of injury does not count ((b)(4)(i)).
    ([restricted(D(2025, 3, 10), D(2025, 3, 10))], (0, 0)),
    # Away then restricted.
    ([away(D(2025, 3, 11), D(2025, 3, 20)), restricted(D(2025, 3, 21), D(2025, 4, 4))], (10, 15)),
    # Two periods away, a return to work between them.
    ([away(D(2025, 3, 11), D(2025, 3, 12)), away(D(2025, 5, 1), D(2025, 5, 3))], (5, 0)),
    # Overlapping periods: a day is counted once, as away when it is both.
    ([away(D(2025, 3, 11), D(2025, 3, 20)), restricted(D(2025, 3, 15), D(2025, 3, 25))], (10, 5)),
    ([away(D(2025, 3, 11), D(2025, 3, 20)), away(D(2025, 3, 15), D(2025, 3, 25))], (15, 0)),
    # The 180-day cap across both ((b)(3)(vii)), reached in date order.
    ([away(D(2025, 3, 11), D(2025, 12, 1))], (180, 0)),
    ([away(D(2025, 3, 11), D(2025, 7, 8)), restricted(D(2025, 7, 9), D(2025, 12, 1))], (120, 60)),
    ([restricted(D(2025, 3, 11), D(2025, 8, 7)), away(D(2025, 8, 8), D(2025, 12, 1))], (30, 150)),
    # An open period counts to today ((b)(3)(ii)).
    ([away(D(2025, 12, 20), None)], (12, 0)),
    ([restricted(D(2025, 3, 11), None)], (0, 180)),
    # Across the year end: the days belong to the case (its year's log).
    ([away(D(2025, 12, 30), D(2026, 1, 2))], (4, 0)),
]


@pytest.mark.parametrize(("periods", "expected"), COUNTING)
def test_day_counting(periods: list[Period], expected: tuple[int, int]) -> None:
    assert count_days(periods, INJURY, TODAY) == expected


def case_form(page: Any) -> Any:
    return next(f for f in page.forms.values() if f.action.startswith("/osha/cases/")
                and f.action.count("/") == 3)


@pytest.fixture
def incident(manager: Any, site: int) -> dict:
    return new_incident(manager, site)  # 2025-03-10 09:00 at the site


def test_periods_count_the_days_of_a_case(manager: Any, site: int, incident: dict) -> None:
    """1904.7(b)(3)-(4) through PATCH /api/osha/cases/:id, on the case, the log and the totals."""
    case = new_case(manager, incident["number"], **WORK, caseType="injury")
    periods = [{"kind": "away", "from": "2025-03-11", "to": "2025-03-20"},
               {"kind": "restricted", "from": "2025-03-21", "to": "2025-04-04"}]
    body = patch_case(manager, case["id"], periods=periods).json
    assert body["periods"] == periods
    assert (body["daysAway"], body["daysRestricted"]) == (10, 15)
    assert body["daysAwayFromWork"] is True and body["restrictedOrTransfer"] is True
    assert body["recordable"] is True and body["outcome"] == "days_away"
    put_hours(manager, site, full_year(10_000, 50))
    log = get_log(manager, site).json
    assert (log["rows"][0]["daysAway"], log["rows"][0]["daysRestricted"]) == (10, 15)
    assert (log["totals"]["K"], log["totals"]["L"]) == (10, 15)


def test_an_open_period_counts_to_today(manager: Any, site: int) -> None:
    """(b)(3)(ii): still away, the count grows each day until the period is closed."""
    start = dt.date.today() - dt.timedelta(days=20)
    occurred = f"{start.isoformat()}T09:00:00+00:00"
    number = new_incident(manager, site, occurred_at=occurred)["number"]
    first = (start + dt.timedelta(days=1)).isoformat()
    open_period = {"kind": "away", "from": first, "to": None}
    case = new_case(manager, number, **WORK, caseType="injury", periods=[open_period])
    # 19 or 20 days: today on the site's clock (America/Chicago) may lag the UTC date.
    assert case["daysAway"] in (19, 20) and case["outcome"] == "days_away"
    put_hours(manager, site, full_year(10_000, 50), year=start.year)
    if start.year == dt.date.today().year:
        assert get_log(manager, site, year=start.year).json["totals"]["K"] == case["daysAway"]


def test_typed_counts_stay_possible_without_periods(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK, daysAwayFromWork=True, daysAway=7)
    assert (case["daysAway"], case["periods"]) == (7, [])
    with_periods = patch_case(manager, case["id"], periods=[{"kind": "away", "from": "2025-03-11",
                                                              "to": "2025-03-13"}]).json
    assert with_periods["daysAway"] == 3
    # Periods taken away: the counts may be typed again.
    assert patch_case(manager, case["id"], periods=[], daysAway=9).json["daysAway"] == 9


BAD_PERIODS = [
    ([{"kind": "away", "from": "2025-03-09", "to": None}], "periods.0.from"),  # before the injury
    ([{"kind": "away", "from": "2025-03-12", "to": "2025-03-11"}], "periods.0.to"),
    ([{"kind": "sick", "from": "2025-03-12", "to": None}], "periods.0.kind"),
    ([{"kind": "away", "from": "2999-01-01", "to": None}], "periods.0.from"),  # in the future
]


@pytest.mark.parametrize(("periods", "path"), BAD_PERIODS)
def test_impossible_periods_are_refused(manager: Any, incident: dict, periods: list, path: str) -> None:
    case = new_case(manager, incident["number"], **WORK)
    assert path in issue_paths(patch_case(manager, case["id"], status=400, periods=periods))


def test_counts_cannot_be_typed_beside_periods(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], **WORK)
    response = patch_case(manager, case["id"], status=400, daysAway=3,
                          periods=[{"kind": "away", "from": "2025-03-11", "to": "2025-03-12"}])
    assert issue_paths(response) == {"daysAway"}


# --- when the employer learned: 1904.39(b)(7)-(8), 1904.29(b)(3) -------------------


def test_the_reporting_clock_runs_from_the_event_by_default(manager: Any, incident: dict) -> None:
    """1904.39(a)(2): 24 hours from the event (2025-03-10 09:00 at the site)."""
    case = new_case(manager, incident["number"], **WORK, inpatientHospitalization=True)
    assert case["learnedAt"] is None
    assert case["severeReport"]["dueBy"] == "2025-03-11T09:00:00-05:00"


LEARNED = [
    # (b)(7): reported to the employer two days later: 24 hours from then.
    ({"inpatientHospitalization": True}, "2025-03-12T14:00:00-05:00", "2025-03-13T14:00:00-05:00"),
    # (b)(8): the death known to be work-related only later: 8 hours from then.
    ({"died": True, "dateOfDeath": "2025-03-10"}, "2025-03-11T10:00:00-05:00", "2025-03-11T18:00:00-05:00"),
    # Learned an hour after the event.
    ({"amputation": True}, "2025-03-10T10:00:00-05:00", "2025-03-11T10:00:00-05:00"),
]


@pytest.mark.parametrize(("answers", "learned", "due"), LEARNED)
def test_the_reporting_clock_runs_from_when_the_employer_learned(manager: Any, incident: dict, answers: dict,
                                                                   learned: str, due: str) -> None:
    """1904.39(b)(7)-(8): the clocks run from when the employer learned."""
    case = new_case(manager, incident["number"], **WORK, **answers, learnedAt=learned)
    assert case["severeReport"]["dueBy"] == due


def test_the_recording_deadline_shows_on_undecided_cases(manager: Any, incident: dict) -> None:
    """1904.29(b)(3): recorded within 7 calendar days of learning of the case."""
    case = new_case(manager, incident["number"], medicalTreatment=True)
    assert case["recordBy"] == "2025-03-17T09:00:00-05:00"
    later = patch_case(manager, case["id"], learnedAt="2025-03-12T08:00:00-05:00").json
    assert later["recordBy"] == "2025-03-19T08:00:00-05:00"
    decided = patch_case(manager, case["id"], **WORK).json
    assert decided["recordBy"] is None
    not_work = new_case(manager, incident["number"], workRelated=False, newCase=True)
    assert not_work["recordBy"] is None


def test_the_case_page_shows_the_recording_deadline(manager: Any, incident: dict) -> None:
    case = new_case(manager, incident["number"], medicalTreatment=True)
    page = manager.get(f"/osha/cases/{case['id']}", status=200).text
    assert "Record by" in page and "17 Mar 2025" in page
    cases = manager.get(f"{OSHA}/incidents/{incident['number']}/cases", status=200).json
    assert cases[0]["recordBy"]


def test_the_case_page_takes_periods(manager: Any, incident: dict) -> None:
    """The case form's periods count the days (1904.7(b)(3)-(4)); an
    impossible one is shown, nothing saved."""
    case = new_case(manager, incident["number"], **WORK, caseType="injury")
    page = manager.get(f"/osha/cases/{case['id']}", status=200)
    form = case_form(page)
    form["periods-0-kind"] = "away"
    form["periods-0-from"] = "2025-03-11"
    form["periods-0-to"] = "2025-03-20"
    form["periods-1-kind"] = "restricted"
    form["periods-1-from"] = "2025-03-21"
    form["periods-1-to"] = "2025-04-04"
    form.submit(status=302)
    stored = manager.get(f"{OSHA}/incidents/{incident['number']}/cases", status=200).json[0]
    assert (stored["daysAway"], stored["daysRestricted"], stored["outcome"]) == (10, 15, "days_away")
    assert len(stored["periods"]) == 2
    again = case_form(manager.get(f"/osha/cases/{case['id']}", status=200))
    assert again["periods-1-to"].value == "2025-04-04"
    again["periods-2-kind"] = "away"
    again["periods-2-from"] = "2025-03-01"  # before the injury
    refused = again.submit(status=400)
    assert "cannot start before the day of the injury" in refused.text
    assert len(manager.get(f"{OSHA}/incidents/{incident['number']}/cases").json[0]["periods"]) == 2
