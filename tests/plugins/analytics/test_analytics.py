"""GET /api/stats/analytics: query validation and the 3-year span limit,
leading and lagging KPIs with the previous period of equal length, period
boundaries, the trend (weekly up to about 3 months, monthly beyond, empty
buckets as zero), locations, root causes, the weekday-by-hour heatmap in the
site's zone, actions on time versus late, rolling and yearly TRIR/DART for
supervisors and above, and visibility (a reporter's figures leave out what
they cannot open).

Spec: Statistics and views; Limits (analytics date span); Incidents
(visibility)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import text, update

from ehs_core.actions.models import CorrectiveAction
from tests.plugins.analytics import (
    ANALYTICS,
    add_action,
    add_case,
    add_root_cause,
    analytics,
    assert_error,
    closed_at,
    current,
    day,
    heat_cells,
    issue_paths,
    midnight,
    move,
    new_area,
    new_site,
    put_hours,
    report,
    set_action_status,
    set_times,
)

LEADING = {"reported", "nearMisses", "hazards", "actionsClosedOnTimeRate", "averageDaysToClose"}


def weeks_from(first: str, count: int) -> list[str]:
    start = dt.date.fromisoformat(first)
    return [(start + dt.timedelta(weeks=i)).isoformat() for i in range(count)]


# --- the query -----------------------------------------------------------------------------


def test_analytics_needs_a_session(client):
    assert_error(client.get(ANALYTICS, params={"from": "2024-01-01", "to": "2024-01-31"}, status=401), 401)


@pytest.mark.parametrize(("query", "path"), [
    ({"to": "2024-01-31"}, "from"),
    ({"from": "2024-01-01"}, "to"),
    ({"from": "2024-02-30", "to": "2024-03-31"}, "from"),
    ({"from": "2024-01-01", "to": "2024-13-01"}, "to"),
    ({"from": "2024-1-1", "to": "2024-01-31"}, "from"),
    ({"from": "yesterday", "to": "2024-01-31"}, "from"),
    ({"from": "2024-01-01T00:00:00Z", "to": "2024-01-31"}, "from"),
    ({"from": "2024-01-01", "to": ""}, "to"),
    ({"from": "2024-01-01", "to": "2024-01-31", "siteId": "north"}, "siteId"),
    ({"from": "2024-01-01", "to": "2024-01-31", "type": "accident"}, "type"),
])
def test_bad_dates_and_filters_answer_400(admin, query, path):
    assert path in issue_paths(admin.get(ANALYTICS, params=query, status=400))


def test_to_before_from_answers_400_and_a_single_day_is_a_period(admin):
    assert "to" in issue_paths(analytics(admin, "2024-03-02", "2024-03-01", status=400))
    body = analytics(admin, "2024-03-01", "2024-03-01")
    assert (body["from"], body["to"]) == ("2024-03-01", "2024-03-01")
    assert (body["previousFrom"], body["previousTo"]) == ("2024-02-29", "2024-02-29")
    assert body["granularity"] == "week"
    assert body["trend"] == [{"start": "2024-03-01", "count": 0}]


@pytest.mark.parametrize(("first", "last"), [
    ("2040-01-01", "2040-01-31"),  # after 2038-01-19: seconds since 1970 exceed a 32-bit integer
    ("1900-01-01", "1900-01-31"),  # before 1901-12-13: likewise
    ("9999-12-01", "9999-12-31"),  # the day after `to` is past the last date there is
    ("9998-06-01", "9998-06-30"),  # three years after `from` is past the last date there is
    ("0001-01-01", "0001-01-31"),  # the previous period starts before the first date there is
])
def test_well_formed_dates_far_from_today_do_not_fail_the_server(admin, first, last):
    """Whatever the dates, the answer is figures (200) or a validation error (400), never a 500."""
    response = admin.get(ANALYTICS, params={"from": first, "to": last}, expect_errors=True)
    assert response.status_int in (200, 400), response.body[:300]
    if response.status_int == 400:
        assert issue_paths(response)
    else:
        assert response.json["leading"]["reported"] == {"current": 0, "previous": 0}


@pytest.mark.parametrize(("first", "last", "status"), [
    ("2021-01-01", "2023-12-31", 200),  # exactly three years
    ("2021-01-01", "2024-01-01", 400),  # three years and a day
    ("2021-01-01", "2026-01-01", 400),
    ("2021-03-15", "2024-03-14", 200),
    ("2021-03-15", "2024-03-15", 400),
    ("2020-02-29", "2023-02-28", 200),  # from a leap day
    ("2020-02-29", "2023-03-01", 400),
])
def test_the_span_is_at_most_three_years(admin, first, last, status):
    response = analytics(admin, first, last, status=status)
    if status == 400:
        assert "to" in issue_paths(response)
    else:
        assert response["granularity"] == "month"
        start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
        months = (end.year - start.year) * 12 + end.month - start.month + 1
        assert len(response["trend"]) == months
        assert response["trend"][0]["start"] == start.replace(day=1).isoformat()
        assert response["trend"][-1]["start"] == end.replace(day=1).isoformat()


# --- periods and KPIs --------------------------------------------------------------------------


def test_period_boundaries_and_the_previous_period_of_equal_length(admin):
    site = new_site(admin)["id"]
    report(admin, site, "2024-03-01T00:00:00+00:00", "hazard")  # first instant of `from`: counts
    report(admin, site, "2024-03-31T23:59:59+00:00", "near_miss")  # last second of `to`: counts
    report(admin, site, "2024-04-01T00:00:00+00:00", "hazard")  # the day after `to`: no
    report(admin, site, "2024-04-01T01:30:00+02:00", "hazard")  # 23:30 UTC on 31 March: counts
    report(admin, site, "2024-03-01T01:30:00+02:00", "injury")  # 23:30 UTC on 29 Feb: previous
    report(admin, site, "2024-02-29T23:59:59+00:00", "injury")  # previous
    report(admin, site, "2024-01-30T00:00:00+00:00", "illness")  # first instant of the previous period
    report(admin, site, "2024-01-29T23:59:59+00:00", "hazard")  # before both: no

    body = analytics(admin, "2024-03-01", "2024-03-31")
    # 31 days; the previous period is the 31 days just before.
    assert (body["from"], body["to"]) == ("2024-03-01", "2024-03-31")
    assert (body["previousFrom"], body["previousTo"]) == ("2024-01-30", "2024-02-29")
    assert set(body["leading"]) == LEADING
    assert body["leading"]["reported"] == {"current": 3, "previous": 3}
    assert body["leading"]["hazards"] == {"current": 2, "previous": 0}
    assert body["leading"]["nearMisses"] == {"current": 1, "previous": 0}
    assert body["lagging"]["injuries"] == {"current": 0, "previous": 2}
    assert body["lagging"]["illnesses"] == {"current": 0, "previous": 1}
    assert body["leading"]["averageDaysToClose"] == {"current": None, "previous": None}
    assert body["leading"]["actionsClosedOnTimeRate"] == {"current": None, "previous": None}
    assert body["granularity"] == "week"
    assert body["trend"] == [{"start": start, "count": count} for start, count in
                             zip(weeks_from("2024-03-01", 5), [1, 0, 0, 0, 2], strict=True)]


def test_site_and_type_filters_narrow_every_figure(admin):
    north = new_site(admin, "Plant North", timezone="UTC")["id"]
    south = new_site(admin, "Plant South", timezone="UTC")["id"]
    first = report(admin, north, "2024-05-06T10:00:00+00:00", "hazard")
    report(admin, north, "2024-05-07T11:00:00+00:00", "near_miss")
    report(admin, south, "2024-05-08T12:00:00+00:00", "hazard")
    report(admin, north, "2024-04-20T09:00:00+00:00", "hazard")  # previous period
    add_root_cause(admin, first, "equipment")

    both = analytics(admin, "2024-05-01", "2024-05-31")
    assert current(both, "leading", "reported") == 3
    north_only = analytics(admin, "2024-05-01", "2024-05-31", siteId=north)
    assert north_only["leading"]["reported"] == {"current": 2, "previous": 1}
    assert {item["siteId"] for item in north_only["locations"]} == {north}
    assert heat_cells(north_only) == {(0, 10): 1, (1, 11): 1}
    hazards = analytics(admin, "2024-05-01", "2024-05-31", type="hazard")
    assert hazards["leading"]["reported"] == {"current": 2, "previous": 1}
    assert hazards["leading"]["nearMisses"] == {"current": 0, "previous": 0}
    assert sum(point["count"] for point in hazards["trend"]) == 2
    north_near_misses = analytics(admin, "2024-05-01", "2024-05-31", siteId=north, type="near_miss")
    assert north_near_misses["leading"]["reported"] == {"current": 1, "previous": 0}
    assert north_near_misses["rootCauses"] == []
    assert north_only["rootCauses"] == [{"category": "equipment", "count": 1}]


def test_average_days_to_close_per_period(admin, dbsession, registry):
    site = new_site(admin)["id"]
    march = [report(admin, site, f"2024-03-{d:02d}T08:00:00+00:00") for d in (4, 5, 6)]
    february = report(admin, site, "2024-02-10T08:00:00+00:00")
    for number in [*march, february]:
        move(admin, number, "triage", "closed")
    lengths = {march[0]: dt.timedelta(days=1), march[1]: dt.timedelta(days=4),
               february: dt.timedelta(days=10)}
    for number, length in lengths.items():
        set_times(dbsession, registry, number, created_at=closed_at(dbsession, number) - length)
    move(admin, march[2], "investigation")  # reopened: not closed any more

    body = analytics(admin, "2024-03-01", "2024-03-31")
    assert body["leading"]["averageDaysToClose"] == {"current": 2.5, "previous": 10.0}


# --- trend ----------------------------------------------------------------------------------------


def test_the_trend_is_weekly_up_to_three_months_and_monthly_beyond(admin):
    site = new_site(admin)["id"]
    report(admin, site, "2024-01-01T00:00:00+00:00")
    report(admin, site, "2024-01-07T23:59:59+00:00")  # still the first week
    report(admin, site, "2024-01-08T00:00:00+00:00")  # the second week
    report(admin, site, "2024-03-31T12:00:00+00:00")  # the 13th week; March
    report(admin, site, "2024-04-15T12:00:00+00:00")  # April

    three_months = analytics(admin, "2024-01-01", "2024-03-31")  # 91 days
    assert three_months["granularity"] == "week"
    assert [point["start"] for point in three_months["trend"]] == weeks_from("2024-01-01", 13)
    assert [point["count"] for point in three_months["trend"]] == [2, 1] + [0] * 10 + [1]

    one_month = analytics(admin, "2024-01-01", "2024-01-31")
    assert one_month["granularity"] == "week"
    assert [point["start"] for point in one_month["trend"]] == weeks_from("2024-01-01", 5)
    assert [point["count"] for point in one_month["trend"]] == [2, 1, 0, 0, 0]

    four_months = analytics(admin, "2024-01-01", "2024-04-30")
    assert four_months["granularity"] == "month"
    assert four_months["trend"] == [{"start": "2024-01-01", "count": 3}, {"start": "2024-02-01", "count": 0},
                                    {"start": "2024-03-01", "count": 1}, {"start": "2024-04-01", "count": 1}]


def test_monthly_buckets_over_a_year_include_empty_months(admin):
    site = new_site(admin)["id"]
    report(admin, site, "2023-01-31T23:59:59+00:00")
    report(admin, site, "2023-02-01T00:00:00+00:00")
    report(admin, site, "2023-02-14T12:00:00+00:00")
    report(admin, site, "2023-11-30T22:30:00-02:00")  # 00:30 UTC on 1 December
    report(admin, site, "2022-12-31T23:59:59+00:00")  # before the period
    report(admin, site, "2024-01-01T00:00:00+00:00")  # after it

    body = analytics(admin, "2023-01-01", "2023-12-31")
    assert body["granularity"] == "month"
    assert [point["start"] for point in body["trend"]] == [f"2023-{m:02d}-01" for m in range(1, 13)]
    assert [point["count"] for point in body["trend"]] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert (body["previousFrom"], body["previousTo"]) == ("2022-01-01", "2022-12-31")
    assert body["leading"]["reported"] == {"current": 4, "previous": 1}


def test_a_monthly_trend_starts_at_the_month_of_from(admin):
    site = new_site(admin)["id"]
    report(admin, site, "2023-01-20T12:00:00+00:00")
    report(admin, site, "2023-01-10T12:00:00+00:00")  # before `from`, same month: not counted
    report(admin, site, "2023-06-15T12:00:00+00:00")
    body = analytics(admin, "2023-01-15", "2023-06-20")
    assert body["granularity"] == "month"
    assert body["trend"] == [{"start": f"2023-{m:02d}-01", "count": int(m in (1, 6))} for m in range(1, 7)]


def test_trend_buckets_start_at_local_midnight_across_a_daylight_saving_change(admin, registry,
                                                                              monkeypatch):
    """With the server in Berlin (+01:00, +02:00 from 31 March 2024 02:00), a
    week or month starts at local midnight, whatever the offset was when the
    period began."""
    monkeypatch.setitem(registry.settings, "ehs.timezone", "Europe/Berlin")
    site = new_site(admin)["id"]
    report(admin, site, "2024-03-24T23:00:00+00:00")  # Monday 25 March 00:00: the first week
    report(admin, site, "2024-03-31T21:59:59+00:00")  # Sunday 31 March 23:59:59: still the first week
    report(admin, site, "2024-03-31T22:00:00+00:00")  # Monday 1 April 00:00: the second week, April
    report(admin, site, "2024-03-31T22:30:00+00:00")  # Monday 1 April 00:30
    report(admin, site, "2024-04-07T21:30:00+00:00")  # Sunday 7 April 23:30: the second week
    report(admin, site, "2024-04-07T22:00:00+00:00")  # Monday 8 April 00:00: the third week
    report(admin, site, "2024-10-31T23:30:00+00:00")  # Friday 1 November 00:30 (+01:00 again)

    weeks = analytics(admin, "2024-03-25", "2024-04-14")
    assert weeks["granularity"] == "week"
    assert weeks["trend"] == [{"start": "2024-03-25", "count": 2}, {"start": "2024-04-01", "count": 3},
                              {"start": "2024-04-08", "count": 1}]
    months = analytics(admin, "2024-03-01", "2024-11-30")
    assert [point["count"] for point in months["trend"]] == [2, 4, 0, 0, 0, 0, 0, 0, 1]


# --- locations, root causes, heatmap -----------------------------------------------------------


def test_locations_are_grouped_by_site_and_area(admin):
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    assembly = new_area(admin, north["id"], "Assembly")
    paint = new_area(admin, north["id"], "Paint shop")
    dock = new_area(admin, south["id"], "Dock")
    may = "2024-05-10T09:00:00+00:00"
    for _ in range(3):
        report(admin, north["id"], may, areaId=assembly["id"])
    report(admin, north["id"], may, areaId=paint["id"])
    report(admin, north["id"], may)  # no area
    report(admin, north["id"], may)
    report(admin, south["id"], may, areaId=dock["id"])
    report(admin, north["id"], "2024-06-01T00:00:00+00:00", areaId=paint["id"])  # after the period

    locations = analytics(admin, "2024-05-01", "2024-05-31")["locations"]
    assert locations[0] == {"siteId": north["id"], "siteName": "Plant North", "areaId": assembly["id"],
                            "areaName": "Assembly", "count": 3}
    assert locations[1] == {"siteId": north["id"], "siteName": "Plant North", "areaId": None,
                            "areaName": None, "count": 2}
    assert sorted(locations[2:], key=lambda item: item["siteName"]) == [
        {"siteId": north["id"], "siteName": "Plant North", "areaId": paint["id"], "areaName": "Paint shop",
         "count": 1},
        {"siteId": south["id"], "siteName": "Plant South", "areaId": dock["id"], "areaName": "Dock",
         "count": 1},
    ]
    counts = [item["count"] for item in locations]
    assert counts == sorted(counts, reverse=True)


def test_root_causes_are_counted_by_category(admin):
    site = new_site(admin)["id"]
    first = report(admin, site, "2024-05-02T09:00:00+00:00")
    second = report(admin, site, "2024-05-03T09:00:00+00:00")
    third = report(admin, site, "2024-05-04T09:00:00+00:00")
    outside = report(admin, site, "2024-04-30T09:00:00+00:00")
    add_root_cause(admin, first, "equipment")
    add_root_cause(admin, first, "training")
    add_root_cause(admin, second, "equipment")
    add_root_cause(admin, third, "equipment")
    add_root_cause(admin, third, "procedure")
    add_root_cause(admin, outside, "people")
    add_root_cause(admin, outside, "training")

    causes = analytics(admin, "2024-05-01", "2024-05-31")["rootCauses"]
    assert causes[0] == {"category": "equipment", "count": 3}
    assert sorted(causes[1:], key=lambda c: c["category"]) == [
        {"category": "procedure", "count": 1}, {"category": "training", "count": 1}]


def test_the_heatmap_counts_local_weekday_and_hour_in_the_sites_zone(admin):
    utc_site = new_site(admin, "Plant UTC", timezone="UTC")["id"]
    berlin = new_site(admin, "Plant Berlin", timezone="Europe/Berlin")["id"]
    new_york = new_site(admin, "Plant New York", timezone="America/New_York")["id"]
    no_zone = new_site(admin, "Plant Nowhere")["id"]  # the server's zone (UTC)
    report(admin, utc_site, "2024-03-06T14:30:00+00:00")  # Wednesday 14:xx
    report(admin, utc_site, "2024-03-06T14:59:59+00:00")  # the same cell
    report(admin, utc_site, "2024-03-06T15:00:00+00:00")  # the next hour
    report(admin, berlin, "2024-01-10T08:15:00+01:00")  # Wednesday 08:xx in Berlin (07:15 UTC)
    report(admin, new_york, "2024-01-07T23:30:00-05:00")  # Sunday 23:xx in New York (Monday UTC)
    report(admin, no_zone, "2024-01-08T00:10:00+00:00")  # Monday 00:xx
    report(admin, utc_site, "2024-04-01T10:00:00+00:00")  # after the period

    body = analytics(admin, "2024-01-01", "2024-03-31")
    assert body["heatmap"]["weekdays"] == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert heat_cells(body) == {(2, 14): 2, (2, 15): 1, (2, 8): 1, (6, 23): 1, (0, 0): 1}


def test_the_heatmap_follows_daylight_saving_time_in_the_sites_zone(admin, registry, monkeypatch):
    """Berlin is at +01:00 until 31 March 2024 02:00, then at +02:00 until 27
    October 03:00 (02:00-02:59 happens twice that night). Reports are filed
    in UTC here; the heatmap shows the wall-clock time at the site."""
    berlin = new_site(admin, "Plant Berlin", timezone="Europe/Berlin")["id"]
    report(admin, berlin, "2024-03-30T00:30:00+00:00")  # Saturday 01:30 (+01:00)
    report(admin, berlin, "2024-03-31T23:30:00+00:00")  # Monday 1 April 01:30 (+02:00)
    report(admin, berlin, "2024-10-25T23:30:00+00:00")  # Saturday 26 October 01:30 (+02:00)
    report(admin, berlin, "2024-10-27T00:30:00+00:00")  # Sunday 02:30, the first time (+02:00)
    report(admin, berlin, "2024-10-27T01:30:00+00:00")  # Sunday 02:30, the second time (+01:00)
    report(admin, berlin, "2024-10-28T00:30:00+00:00")  # Monday 28 October 01:30 (+01:00)
    body = analytics(admin, "2024-03-01", "2024-10-31")
    assert heat_cells(body) == {(5, 1): 2, (0, 1): 2, (6, 2): 2}

    # A site without a zone is shown in the server's zone, with its changes too.
    monkeypatch.setitem(registry.settings, "ehs.timezone", "America/New_York")  # -05:00, -04:00 from 10 March
    nowhere = new_site(admin, "Plant Nowhere")["id"]
    report(admin, nowhere, "2024-03-09T06:30:00+00:00")  # Saturday 01:30 (-05:00)
    report(admin, nowhere, "2024-03-11T05:30:00+00:00")  # Monday 01:30 (-04:00)
    assert heat_cells(analytics(admin, "2024-03-01", "2024-03-31", siteId=nowhere)) == {(5, 1): 1, (0, 1): 1}


# --- actions on time versus late -----------------------------------------------------------------


def test_actions_due_in_the_period_are_on_time_late_or_pending(admin):
    """done_at is 'now' when an action is marked done, so an action due in the
    past and done now is late, one due today or later and done now is on time."""
    site = new_site(admin)["id"]
    number = report(admin, site, midnight(day(-2)))

    def action(due: dt.date | None, status: str | None = None) -> None:
        created = add_action(admin, number, due=due)
        if status is not None:
            set_action_status(admin, created["id"], status)

    action(day(-5), "done")  # late
    action(day(5), "done")  # on time
    action(day(0), "done")  # on time: done on its due date
    action(day(10), "verified")  # on time
    action(day(-3))  # late: still open after its due date
    action(day(-1), "in_progress")  # late
    action(day(3), "in_progress")  # pending
    action(day(0))  # pending: due today
    action(day(2), "cancelled")  # neither
    action(day(-40), "done")  # due in the previous period: late there
    action(day(31))  # due after the period
    action(None, "done")  # no due date

    body = analytics(admin, day(-30), day(30))
    assert body["actions"] == {"onTime": 3, "late": 3, "pending": 2}
    assert body["leading"]["actionsClosedOnTimeRate"] == {"current": 50.0, "previous": 0.0}


def finish(dbsession, action_id: int, moment: str) -> None:
    """Set when an action was marked done (the API records 'now')."""
    dbsession.execute(update(CorrectiveAction).where(CorrectiveAction.id == action_id)
                      .values(done_at=dt.datetime.fromisoformat(moment)))
    dbsession.commit()


def test_an_action_is_on_time_until_local_midnight_after_its_due_date(admin, dbsession, registry,
                                                                      monkeypatch):
    """Due dates are judged in the server's zone, here New York (-05:00, and
    -04:00 from 02:00 on 10 March 2024): done at 23:59 local on the due date is
    on time, at 00:00 the next local day is late, on either side of the change."""
    monkeypatch.setitem(registry.settings, "ehs.timezone", "America/New_York")
    site = new_site(admin)["id"]
    number = report(admin, site, "2024-03-01T12:00:00+00:00")

    def done(due: dt.date, moment: str) -> None:
        action = add_action(admin, number, due=due)
        set_action_status(admin, action["id"], "done")
        finish(dbsession, action["id"], moment)

    done(dt.date(2024, 3, 9), "2024-03-09T23:59:59-05:00")  # on time
    done(dt.date(2024, 3, 9), "2024-03-10T00:00:00-05:00")  # late
    done(dt.date(2024, 3, 10), "2024-03-10T23:59:00-04:00")  # on time (already 11 March in UTC)
    done(dt.date(2024, 3, 10), "2024-03-11T00:00:00-04:00")  # late
    done(dt.date(2024, 3, 20), "2024-03-19T12:00:00-04:00")  # on time: early

    body = analytics(admin, "2024-03-01", "2024-03-31")
    assert body["actions"] == {"onTime": 3, "late": 2, "pending": 0}
    assert current(body, "leading", "actionsClosedOnTimeRate") == 60.0


# --- visibility --------------------------------------------------------------------------------


def test_a_reporters_figures_leave_out_incidents_they_cannot_see(admin, make_user):
    site = new_site(admin, "Plant North", timezone="UTC")["id"]
    supervisor = make_user("supervisor")
    rita = make_user("reporter")
    rob = make_user("reporter")
    own = report(rita, site, "2024-05-06T10:00:00+00:00", "hazard")
    robs = report(rob, site, "2024-05-07T11:00:00+00:00", "hazard")
    assigned = report(admin, site, "2024-05-08T12:00:00+00:00", "near_miss")
    hidden = report(admin, site, "2024-05-09T13:00:00+00:00", "injury")
    report(rob, site, "2024-04-10T09:00:00+00:00", "hazard")  # Rob's, previous period
    add_action(admin, assigned, due=dt.date(2024, 5, 20), assignee_id=rita.user["id"])  # late for all
    add_action(admin, hidden, due=dt.date(2024, 5, 21))  # late, on an incident Rita cannot see
    add_root_cause(admin, own, "housekeeping")
    add_root_cause(admin, robs, "training")
    add_root_cause(admin, assigned, "equipment")
    add_root_cause(admin, hidden, "equipment")

    everything = analytics(supervisor, "2024-05-01", "2024-05-31")
    assert everything["leading"]["reported"] == {"current": 4, "previous": 1}
    assert everything["lagging"]["injuries"]["current"] == 1
    assert everything["rootCauses"][0] == {"category": "equipment", "count": 2}
    assert everything["actions"] == {"onTime": 0, "late": 2, "pending": 0}
    assert sum(map(sum, everything["heatmap"]["counts"])) == 4

    ritas = analytics(rita, "2024-05-01", "2024-05-31")
    assert ritas["leading"]["reported"] == {"current": 2, "previous": 0}
    assert ritas["leading"]["hazards"] == {"current": 1, "previous": 0}
    assert ritas["leading"]["nearMisses"] == {"current": 1, "previous": 0}
    assert ritas["lagging"]["injuries"] == {"current": 0, "previous": 0}
    assert sum(point["count"] for point in ritas["trend"]) == 2
    assert [(item["siteId"], item["count"]) for item in ritas["locations"]] == [(site, 2)]
    assert sorted((c["category"], c["count"]) for c in ritas["rootCauses"]) == [
        ("equipment", 1), ("housekeeping", 1)]
    assert heat_cells(ritas) == {(0, 10): 1, (2, 12): 1}
    assert ritas["actions"] == {"onTime": 0, "late": 1, "pending": 0}
    assert "rates" not in ritas

    robs_view = analytics(rob, "2024-05-01", "2024-05-31")
    assert robs_view["leading"]["reported"] == {"current": 1, "previous": 1}
    assert robs_view["rootCauses"] == [{"category": "training", "count": 1}]
    assert robs_view["actions"] == {"onTime": 0, "late": 0, "pending": 0}


# --- injury rates (OSHA plugin data) --------------------------------------------------------------


@pytest.fixture
def injury_records(admin):
    """Two sites with monthly hours and recordable cases, counted by hand:

    Plant North, hours: 2023-01 100,000; 2023-12 100,000; 2024-01..06 50,000 each.
    Plant North, cases: 2023-05-01 other recordable; 2023-12-15 other recordable;
                        2024-02-01 not recordable (not work-related);
                        2024-03-10 days away (5 days), a DART case.
    Plant South, hours: 2024-01 100,000; case: 2024-04-02 restricted (DART).
    """
    north = new_site(admin, "Plant North")["id"]
    south = new_site(admin, "Plant South")["id"]
    put_hours(admin, north, 2023, {1: 100_000, 12: 100_000})
    put_hours(admin, north, 2024, dict.fromkeys(range(1, 7), 50_000))
    put_hours(admin, south, 2024, {1: 100_000})
    recordable = {"workRelated": True, "newCase": True}

    def injury(site: int, occurred: str, **answers: object) -> dict:
        return add_case(admin, report(admin, site, occurred, "injury"), **answers)

    cases = [
        injury(north, "2023-05-01T10:00:00+00:00", medicalTreatment=True, **recordable),
        injury(north, "2023-12-15T10:00:00+00:00", medicalTreatment=True, **recordable),
        injury(north, "2024-02-01T10:00:00+00:00", workRelated=False, newCase=True, medicalTreatment=True),
        injury(north, "2024-03-10T10:00:00+00:00", daysAwayFromWork=True, daysAway=5, **recordable),
        injury(south, "2024-04-02T10:00:00+00:00", restrictedOrTransfer=True, daysRestricted=3, **recordable),
    ]
    assert [case["recordable"] for case in cases] == [True, True, False, True, True]
    return {"north": north, "south": south}


def counted(rates: dict) -> tuple:
    return rates["recordableCases"], rates["dartCases"], rates["hours"]


@pytest.mark.parametrize("role", ["safety_manager", "admin"])
def test_safety_managers_and_above_get_rolling_and_yearly_rates_with_counts(make_user, injury_records,
                                                                           role):
    browser = make_user(role)
    rates = analytics(browser, "2024-01-01", "2024-06-30")["rates"]
    rolling = rates["rolling12Months"]
    assert (rolling["from"], rolling["to"]) == ("2023-07-01", "2024-06-30")
    # 2023-12 (North), 2024-03 (North, DART), 2024-04 (South, DART); hours 100k + 300k + 100k.
    assert counted(rolling) == (3, 2, 500_000)
    assert rolling["trir"] == 3 * 200_000 / 500_000
    assert rolling["dart"] == 2 * 200_000 / 500_000
    yearly = {item["year"]: item for item in rates["yearly"]}
    assert set(yearly) == {2022, 2023, 2024}
    assert (yearly[2022]["recordableCases"], yearly[2022]["hours"]) == (0, 0)
    assert (yearly[2022]["trir"], yearly[2022]["dart"]) == (None, None)
    assert counted(yearly[2023]) == (2, 0, 200_000)
    assert (yearly[2023]["trir"], yearly[2023]["dart"]) == (2.0, 0.0)
    assert counted(yearly[2024]) == (2, 2, 400_000)
    assert (yearly[2024]["trir"], yearly[2024]["dart"]) == (1.0, 1.0)
    # Lost time: the days-away case of March alone (column H), not the restricted one.
    assert (rolling["lostTimeCases"], rolling["ltir"]) == (1, 1 * 200_000 / 500_000)
    assert (yearly[2024]["lostTimeCases"], yearly[2024]["ltir"]) == (1, 0.5)
    assert (yearly[2023]["lostTimeCases"], yearly[2023]["ltir"]) == (0, 0.0)


def test_supervisors_get_the_rates_without_the_case_counts_behind_them(make_user, injury_records):
    supervisor = make_user("supervisor")
    rates = analytics(supervisor, "2024-01-01", "2024-06-30")["rates"]
    rolling = rates["rolling12Months"]
    assert set(rolling) == {"from", "to", "hours", "trir", "dart", "ltir"}
    assert (rolling["trir"], rolling["dart"], rolling["ltir"], rolling["hours"]) == (1.2, 0.8, 0.4, 500_000)
    yearly = {item["year"]: item for item in rates["yearly"]}
    assert all(set(item) == {"year", "hours", "trir", "dart", "ltir"} for item in yearly.values())
    assert (yearly[2024]["trir"], yearly[2024]["dart"]) == (1.0, 1.0)


def test_rates_follow_the_site_filter(make_user, injury_records):
    manager = make_user("safety_manager")
    body = analytics(manager, "2024-01-01", "2024-06-30", siteId=injury_records["north"])
    rolling = body["rates"]["rolling12Months"]
    assert counted(rolling) == (2, 1, 400_000)
    assert (rolling["trir"], rolling["dart"]) == (1.0, 0.5)
    yearly = {item["year"]: item for item in body["rates"]["yearly"]}
    assert counted(yearly[2024]) == (1, 1, 300_000)
    assert (yearly[2024]["trir"], yearly[2024]["dart"]) == (0.67, 0.67)


@pytest.mark.parametrize(("zone", "occurred", "year"), [
    # 22:00 on 31 December 2025 in New York: a 2025 case, as on its 300 Log (1904.32(a)(1)).
    ("America/New_York", "2026-01-01T03:00:00+00:00", 2025),
    # 01:30 on 1 January 2026 in Tokyo: a 2026 case.
    ("Asia/Tokyo", "2025-12-31T16:30:00+00:00", 2026),
    # A site without a zone: the server's (UTC in the tests).
    (None, "2026-01-01T03:00:00+00:00", 2026),
])
def test_yearly_rates_count_a_case_in_the_year_of_its_sites_local_date(admin, zone, occurred, year):
    site = new_site(admin, "Harbor Works", **({"timezone": zone} if zone else {}))["id"]
    put_hours(admin, site, 2025, {12: 100_000})
    put_hours(admin, site, 2026, {1: 100_000})
    add_case(admin, report(admin, site, occurred, "injury"), workRelated=True, newCase=True,
             medicalTreatment=True)
    yearly = {item["year"]: item for item in analytics(admin, "2026-01-01", "2026-01-31")["rates"]["yearly"]}
    assert (yearly[2025]["recordableCases"], yearly[2026]["recordableCases"]) == \
        ((1, 0) if year == 2025 else (0, 1))
    assert yearly[year]["trir"] == 2.0


def test_lagging_kpis_count_recordable_cases_and_days_away_for_safety_managers(make_user, injury_records):
    manager = make_user("safety_manager")
    body = analytics(manager, "2024-01-01", "2024-06-30")
    # The previous 182 days run from 2023-07-03 to 2023-12-31: the December case.
    assert (body["previousFrom"], body["previousTo"]) == ("2023-07-03", "2023-12-31")
    assert body["lagging"]["recordableCases"] == {"current": 2, "previous": 1}
    assert body["lagging"]["daysAway"] == {"current": 5, "previous": 0}
    assert body["lagging"]["injuries"] == {"current": 3, "previous": 1}


def test_supervisors_get_no_per_case_injury_figures(make_user, injury_records):
    """One site, one type, one period: `recordableCases: 1, daysAway: 5`
    would describe one identifiable person."""
    supervisor = make_user("supervisor")
    body = analytics(supervisor, "2024-03-01", "2024-03-31", siteId=injury_records["north"], type="injury")
    assert "recordableCases" not in body["lagging"]
    assert "daysAway" not in body["lagging"]
    assert body["lagging"]["injuries"] == {"current": 1, "previous": 1}
    assert "trir" in body["rates"]["rolling12Months"]


def test_reporters_get_no_rates_or_case_figures(make_user, injury_records):
    reporter = make_user("reporter")
    body = analytics(reporter, "2024-01-01", "2024-06-30")
    assert "rates" not in body
    assert "recordableCases" not in body["lagging"]
    assert "daysAway" not in body["lagging"]
    assert body["lagging"]["injuries"] == {"current": 0, "previous": 0}


# --- PostgreSQL: figures do not depend on the database session's time zone ---------------------


def test_postgresql_groups_by_the_servers_calendar_whatever_the_sessions_time_zone(admin, dbsession):
    """PostgreSQL's `TimeZone` setting defaults to the database host's zone
    (initdb), so it need not be UTC. Extracting a month or a date from a
    timestamptz uses that setting; the figures must not change with it."""
    postgresql = dbsession.get_bind().dialect.name == "postgresql"
    site = new_site(admin)["id"]
    report(admin, site, "2023-01-01T06:00:00+00:00")  # January (31 December at UTC-12)
    report(admin, site, "2023-01-31T12:00:00+00:00")  # January (1 February at UTC+14)
    report(admin, site, "2023-02-01T06:00:00+00:00")  # February (31 January at UTC-12)
    report(admin, site, "2023-12-31T12:00:00+00:00")  # December (1 January 2024 at UTC+14)
    number = report(admin, site, midnight(day(-1)))
    # done now: on time when due today, late when due yesterday
    for due in (day(0), day(-1)):
        set_action_status(admin, add_action(admin, number, due=due)["id"], "done")

    # A zone whose date differs from UTC's right now: at 12:00 UTC or later it is
    # already tomorrow at UTC+14, before 12:00 UTC it is still yesterday at UTC-12.
    zone = "Pacific/Kiritimati" if dt.datetime.now(dt.UTC).hour >= 12 else "Etc/GMT+12"
    if postgresql:  # SQLite has no session time zone; the same figures must hold there too
        dbsession.execute(text(f"SET TIME ZONE '{zone}'"))
        dbsession.commit()

    year = analytics(admin, "2023-01-01", "2023-12-31")
    assert [point["count"] for point in year["trend"]] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert sum(point["count"] for point in year["trend"]) == current(year, "leading", "reported")
    assert analytics(admin, day(-7), day(7))["actions"] == {"onTime": 1, "late": 1, "pending": 0}


def test_periods_are_calendar_days_of_the_servers_zone_east_of_utc(admin, dbsession, registry,
                                                                     monkeypatch):
    """In Berlin (+01:00) local midnight is the evening before in UTC: the
    periods and the due dates that fall in them are still the calendar days
    asked for, not the UTC dates of their first instants."""
    monkeypatch.setitem(registry.settings, "ehs.timezone", "Europe/Berlin")
    site = new_site(admin)["id"]
    number = report(admin, site, "2024-01-15T12:00:00+01:00")
    for due in (dt.date(2024, 2, 29), dt.date(2024, 3, 1), dt.date(2024, 1, 29), dt.date(2024, 1, 30)):
        action = add_action(admin, number, due=due)
        set_action_status(admin, action["id"], "done")
        finish(dbsession, action["id"], "2024-01-10T12:00:00+01:00")  # before every due date
    report(admin, site, "2024-03-01T00:30:00+01:00", "hazard")  # 23:30 UTC on 29 Feb: current
    report(admin, site, "2024-01-30T00:30:00+01:00", "injury")  # 23:30 UTC on 29 Jan: previous

    body = analytics(admin, "2024-03-01", "2024-03-31")
    assert (body["previousFrom"], body["previousTo"]) == ("2024-01-30", "2024-02-29")
    # Due 1 March: current; due 30 January and 29 February: previous; 29 January: neither.
    assert body["actions"] == {"onTime": 1, "late": 0, "pending": 0}
    assert body["leading"]["actionsClosedOnTimeRate"] == {"current": 100.0, "previous": 100.0}
    assert body["leading"]["hazards"] == {"current": 1, "previous": 0}
    assert body["lagging"]["injuries"] == {"current": 0, "previous": 1}
