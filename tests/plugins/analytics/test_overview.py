"""GET /api/stats/overview: open incidents, actions due and overdue, average
close time, counts per status, the 12-week weekly trend (zero-filled) and
incidents by site this year, counted over what the caller may see.

Spec: Statistics and views; Limits (overview trend 12 weeks); Incidents
(visibility)."""

from __future__ import annotations

import datetime as dt

from tests.plugins.analytics import (
    OVERVIEW,
    STATUSES,
    add_action,
    assert_error,
    closed_at,
    day,
    midnight,
    move,
    new_site,
    overview,
    report,
    set_action_status,
    set_times,
    today,
)

WEEK = dt.timedelta(days=7)


def this_monday() -> dt.date:
    return today() - dt.timedelta(days=today().weekday())


def year_start() -> dt.datetime:
    return midnight(dt.date(today().year, 1, 1))


def test_the_overview_needs_a_session(client):
    assert_error(client.get(OVERVIEW, status=401), 401)


def test_an_empty_organization_has_zero_figures_and_twelve_empty_weeks(admin):
    body = overview(admin)
    assert body["openIncidents"] == 0
    assert (body["actionsDue"], body["actionsOverdue"]) == (0, 0)
    assert body["averageCloseDays"] is None
    assert body["statusCounts"] == dict.fromkeys(STATUSES, 0)
    assert body["incidentsBySite"] == []
    first = this_monday() - 11 * WEEK
    assert [point["weekStart"] for point in body["weeklyTrend"]] == [
        (first + i * WEEK).isoformat() for i in range(12)]
    assert [point["count"] for point in body["weeklyTrend"]] == [0] * 12


def test_the_weekly_trend_has_twelve_monday_weeks_with_empty_weeks_as_zero(admin):
    site = new_site(admin)["id"]
    monday = this_monday()
    first = monday - 11 * WEEK
    report(admin, site, midnight(first))  # the first instant of the first week
    report(admin, site, midnight(first) - dt.timedelta(seconds=1))  # the Sunday before: not shown
    report(admin, site, midnight(first + 5 * WEEK) + dt.timedelta(days=3, hours=12))
    # Sunday 23:00 at -05:00 is Monday 04:00 UTC: the server's zone (UTC) puts it in week 6.
    report(admin, site, stamp_with_offset(midnight(first + 6 * WEEK) + dt.timedelta(hours=4), hours=-5))
    report(admin, site, midnight(monday))  # the current week, last point

    trend = overview(admin)["weeklyTrend"]
    assert len(trend) == 12
    assert [point["weekStart"] for point in trend] == [(first + i * WEEK).isoformat() for i in range(12)]
    assert dt.date.fromisoformat(trend[-1]["weekStart"]) == monday
    assert all(dt.date.fromisoformat(point["weekStart"]).weekday() == 0 for point in trend)
    assert [point["count"] for point in trend] == [1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1]


def stamp_with_offset(utc_moment: dt.datetime, hours: int) -> str:
    """The same instant written in local time with a UTC offset of `hours`."""
    return utc_moment.astimezone(dt.timezone(dt.timedelta(hours=hours))).isoformat()


def test_status_counts_open_incidents_and_sites_this_year_follow_visibility(admin, make_user):
    north = new_site(admin, "Plant North")["id"]
    south = new_site(admin, "Plant South")["id"]
    supervisor = make_user("supervisor")
    rita = make_user("reporter")
    rob = make_user("reporter")
    start = year_start()

    own_triaged = report(rita, north, start)  # Rita's; moved to triage
    report(rita, south, start + dt.timedelta(seconds=1))  # Rita's; stays reported
    robs_closed = report(rob, north, start + dt.timedelta(seconds=2))  # Rob's; closed
    assigned = report(admin, north, start + dt.timedelta(seconds=3))  # admin's; Rita is assigned an action
    report(admin, south, start - dt.timedelta(seconds=1))  # last year; stays reported
    add_action(admin, assigned, due=day(3), assignee_id=rita.user["id"])
    move(supervisor, own_triaged, "triage")
    move(supervisor, robs_closed, "triage", "closed")
    move(supervisor, assigned, "triage", "actions")

    everything = overview(supervisor)
    assert everything["statusCounts"] == {"reported": 2, "triage": 1, "investigation": 0, "actions": 1,
                                          "verification": 0, "closed": 1}
    assert everything["openIncidents"] == 4
    assert everything["incidentsBySite"] == [
        {"siteId": north, "siteName": "Plant North", "count": 3},
        {"siteId": south, "siteName": "Plant South", "count": 1},
    ]
    assert (everything["actionsDue"], everything["actionsOverdue"]) == (1, 0)
    assert overview(admin) == everything

    # Rita: her two reports and the incident where she is assigned an action; not Rob's.
    ritas = overview(rita)
    assert ritas["statusCounts"] == {"reported": 1, "triage": 1, "investigation": 0, "actions": 1,
                                     "verification": 0, "closed": 0}
    assert ritas["openIncidents"] == 3
    assert sorted((s["siteName"], s["count"]) for s in ritas["incidentsBySite"]) == [
        ("Plant North", 2), ("Plant South", 1)]
    assert (ritas["actionsDue"], ritas["actionsOverdue"]) == (1, 0)
    assert ritas["averageCloseDays"] is None  # Rob's closed incident is not hers

    # Rob: only his closed report.
    robs = overview(rob)
    assert robs["statusCounts"] == {"reported": 0, "triage": 0, "investigation": 0, "actions": 0,
                                    "verification": 0, "closed": 1}
    assert robs["openIncidents"] == 0
    assert robs["incidentsBySite"] == [{"siteId": north, "siteName": "Plant North", "count": 1}]
    assert (robs["actionsDue"], robs["actionsOverdue"]) == (0, 0)
    assert robs["averageCloseDays"] is not None


def test_actions_due_and_overdue_count_open_work_by_due_date(admin, make_user):
    site = new_site(admin)["id"]
    rita = make_user("reporter")
    rob = make_user("reporter")
    number = report(admin, site, midnight(day(-1)))
    other = report(admin, site, midnight(day(-1)))
    due_today = add_action(admin, number, due=day(0), assignee_id=rita.user["id"])
    add_action(admin, number, due=day(1))
    add_action(admin, number, due=day(7))  # the last day of the coming week
    add_action(admin, number, due=day(8))  # later: not due yet
    add_action(admin, number, due=day(30))
    add_action(admin, number)  # no due date
    add_action(admin, number, due=day(-1))  # overdue
    in_progress = add_action(admin, number, due=day(-20))  # overdue, in progress
    set_action_status(admin, in_progress["id"], "in_progress")
    for due, status in ((day(-3), "done"), (day(-4), "verified"), (day(2), "cancelled"),
                        (day(1), "done")):
        set_action_status(admin, add_action(admin, number, due=due)["id"], status)
    add_action(admin, other, due=day(-5), assignee_id=rob.user["id"])  # overdue, on Rob's incident

    body = overview(admin)
    assert body["actionsDue"] == 3  # today, tomorrow, in 7 days
    assert body["actionsOverdue"] == 3  # yesterday, 20 days ago (in progress), Rob's
    # Rita sees the first incident (assigned an action there) and so all its actions, not Rob's.
    ritas = overview(rita)
    assert (ritas["actionsDue"], ritas["actionsOverdue"]) == (3, 2)
    # Once her action is done it no longer counts.
    set_action_status(rita, due_today["id"], "done")
    assert (overview(rita)["actionsDue"], overview(rob)["actionsOverdue"]) == (2, 1)


def test_average_close_time_counts_closed_incidents_only(admin, dbsession, registry):
    site = new_site(admin)["id"]
    quick = report(admin, site, midnight(day(-10)))
    slow = report(admin, site, midnight(day(-10)))
    reopened = report(admin, site, midnight(day(-10)))
    report(admin, site, midnight(day(-10)))  # still open
    for number in (quick, slow, reopened):
        move(admin, number, "triage", "closed")
    move(admin, reopened, "investigation")  # reopening clears closedAt

    # Closed right after being filed: (almost) no time.
    assert overview(admin)["averageCloseDays"] == 0.0

    set_times(dbsession, registry, quick, created_at=closed_at(dbsession, quick) - dt.timedelta(days=2))
    set_times(dbsession, registry, slow,
              created_at=closed_at(dbsession, slow) - dt.timedelta(days=5, hours=6))
    body = overview(admin)
    assert body["averageCloseDays"] == 3.6  # (2 + 5.25) / 2 = 3.625, one decimal
    assert body["statusCounts"]["closed"] == 2
    assert body["openIncidents"] == 2


def test_a_site_counts_only_incidents_that_occurred_this_year(admin):
    north = new_site(admin, "Plant North")["id"]
    south = new_site(admin, "Plant South")["id"]
    start = year_start()
    report(admin, north, start)
    report(admin, south, start)
    report(admin, south, start + dt.timedelta(seconds=1))
    report(admin, north, start - dt.timedelta(seconds=1))
    report(admin, north, start - dt.timedelta(days=200))
    body = overview(admin)
    assert body["incidentsBySite"] == [
        {"siteId": south, "siteName": "Plant South", "count": 2},
        {"siteId": north, "siteName": "Plant North", "count": 1},
    ]
    assert body["statusCounts"]["reported"] == 5
