"""Statistics over the incidents the caller may see: the overview and the
analytics figures, each read from one of two sources that give the same
answer: `row_figures.Rows` (SQL aggregates over the incidents the caller
may see) and, for callers who see every incident, `tallied_figures.Tallied`
(the sums the `tallies` keep). The tallies answer when they are complete
and were counted in the server's current zone (`figures_for`), else the
rows answer.

Calendar days, weeks and months are those of the server's zone (TZ), the
heatmap's hours those of the incident's site (the server's zone for a site
without one)."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.actions import server_zone, today
from ehs_core.db import read_rows
from ehs_core.incidents.models import IncidentType, Status
from ehs_core.incidents.resources import sees_everything
from ehs_core.sites.services import site_index
from ehs_plugins.analytics.figures import InjuryFigures
from ehs_plugins.analytics.models import TallyState
from ehs_plugins.analytics.months import zone_key
from ehs_plugins.analytics.row_figures import Rows, utc_start
from ehs_plugins.analytics.tallied_figures import Tallied

WEEK = dt.timedelta(days=7)
WEEKLY_UP_TO = dt.timedelta(days=92)  # about three months
DAY_MICROS = 86_400_000_000


def rounded(value: Any, places: str = "0.1") -> float | None:
    if value is None:
        return None
    return float(Decimal(str(value)).quantize(Decimal(places), ROUND_HALF_UP))


def average_days(close_micros: Any, closed: Any) -> float | None:
    """The average close time in days, to 0.1, of `closed` incidents that
    took `close_micros` microseconds in all (exact: whole microseconds)."""
    return rounded(Decimal(int(close_micros)) / (Decimal(int(closed)) * DAY_MICROS)) if closed else None


def tallies_zone(request: Request) -> str | None:
    """Request method (reified): the server zone the organization's tallies
    were counted in (see TallyState), None when they were never built; read
    once however many figures a page asks for."""
    return read_rows(request, select(TallyState.server_zone).where(
        TallyState.organization_id == request.identity.account.organization_id)).scalar()


def figures_for(request: Request, site_id: int | None = None, incident_type: str | None = None) -> Rows:
    """The source of a request's figures: the tallies for a caller who sees
    every incident when they are complete and counted in the server's
    current zone (see TallyState), else the rows."""
    if sees_everything(request.identity) \
            and request.analytics_tallies_zone == zone_key(server_zone(request.registry)):
        sites = [(site["id"], site["name"], site["timezone"]) for site in site_index(request)["site"].values()
                 if site_id is None or site["id"] == site_id]
        return Tallied(request, site_id, incident_type, sites)
    return Rows(request, site_id, incident_type)


# --- the answers --------------------------------------------------------------------------------


def open_work(request: Request, source: Rows | None = None) -> dict[str, Any]:
    """What waits now: open incidents, pending actions due within a week and
    overdue, the average days to close, and the counts per status. The
    dashboard page shows these alone; the overview adds its trend and
    sites."""
    source = source if source is not None else figures_for(request)
    # Counts per status and the close times (only closed incidents have closed_at).
    status_counts = dict.fromkeys((s.value for s in Status), 0)
    close_micros, closed = 0, 0
    for status, count, total, with_close in source.statuses():
        status_counts[status] += int(count)
        if with_close:
            close_micros += int(total)
            closed += int(with_close)
    due, overdue = source.actions_due(today(request.registry))
    return {
        "openIncidents": sum(v for k, v in status_counts.items() if k != Status.closed),
        "actionsDue": due,
        "actionsOverdue": overdue,
        "averageCloseDays": average_days(close_micros, closed),
        "statusCounts": status_counts,
    }


def overview(request: Request) -> dict[str, Any]:
    source = figures_for(request)
    on = today(request.registry)

    # 12 weeks, Monday-based in the server's zone, the current week last.
    monday = on - dt.timedelta(days=on.weekday())
    first = monday - 11 * WEEK
    zone = server_zone(request.registry)
    starts = [utc_start(first + i * WEEK, zone) for i in range(12)]
    counts = source.trend(starts, utc_start(monday + WEEK, zone))
    trend = [{"weekStart": (first + i * WEEK).isoformat(), "count": counts[i]} for i in range(12)]

    year_start = utc_start(dt.date(on.year, 1, 1), zone)
    by_site = [{"siteId": site_id, "siteName": site_name, "count": count}
               for site_id, site_name, count in source.by_site(year_start)]
    return {**open_work(request, source), "weeklyTrend": trend, "incidentsBySite": by_site}


Place = tuple[int, str, int | None, str | None]  # site id and name, area id and name


def period_figures(request: Request, source: Rows, periods: list[tuple[dt.date, dt.date]],
                   cases: InjuryFigures | None) -> tuple[list[dict[str, Any]], dict[Place, int]]:
    """The KPIs of each period of calendar days [first, after) in the
    server's zone (the periods do not overlap: the analytics' period and
    the one before), and the incident count per place of the first (read in
    the same pass)."""
    zone = server_zone(request.registry)
    instants = [(utc_start(first, zone), utc_start(after, zone)) for first, after in periods]
    groups = source.groups_each(instants)
    actions = source.actions_each(periods)
    case_counts = source.cases_each(cases, instants) if cases is not None else None
    answers = []
    places: dict[Place, int] = {}
    for i in range(len(periods)):
        # Counts by type, by place and the close times in one pass over the
        # period: at most types x areas groups, added up here.
        counts: dict[str, int] = {}
        close_micros, closed = 0, 0
        for kind, *place, count, total, with_close in groups[i]:
            counts[kind] = counts.get(kind, 0) + int(count)
            if i == 0:
                places[tuple(place)] = places.get(tuple(place), 0) + int(count)
            if with_close:
                close_micros += int(total)
                closed += int(with_close)
        on_time, late, pending = actions[i]
        figures = {
            "reported": sum(counts.values()),
            "nearMisses": counts.get(IncidentType.near_miss, 0),
            "hazards": counts.get(IncidentType.hazard, 0),
            "injuries": counts.get(IncidentType.injury, 0),
            "illnesses": counts.get(IncidentType.illness, 0),
            "averageDaysToClose": average_days(close_micros, closed),
            "actionsOnTime": on_time,
            "actionsLate": late,
            "actionsPending": pending,
            "actionsClosedOnTimeRate": rounded(100 * on_time / (on_time + late)) if on_time + late else None,
        }
        if case_counts is not None:
            figures["recordableCases"], figures["daysAway"] = case_counts[i]
        answers.append(figures)
    return answers, places


def by_body_part(request: Request, source: Rows, injuries: InjuryFigures, start: dt.datetime,
                 end: dt.datetime) -> list[dict[str, Any]]:
    """Injured or ill people of the period per part of the body, the most
    first (ties in the provider's order, the uncoded last): injury-record
    data, so only for those who keep the records (29 CFR 1904.29(b)(6)-(10),
    as `recordableCases`)."""
    titles = injuries.body_part_titles(request) if injuries.body_part_titles is not None else {}
    rank = {code: i for i, code in enumerate(titles)}
    counts = source.body_parts(injuries, start, end)
    counts.sort(key=lambda item: (-item[1], item[0] is None, rank.get(item[0], len(rank)), item[0] or ""))
    return [{"code": code, "title": titles.get(code, code) if code is not None else None, "count": count}
            for code, count in counts]


LEADING = ("reported", "nearMisses", "hazards", "actionsClosedOnTimeRate", "averageDaysToClose")
LAGGING = ("injuries", "illnesses", "recordableCases", "daysAway")


def analytics(request: Request, first: dt.date, last: dt.date, site_id: int | None,
              incident_type: str | None, injuries: InjuryFigures | None, show_rates: bool,
              show_cases: bool) -> dict[str, Any]:
    """The analytics answer. `injuries`: the registered injury figures (see
    add_injury_figures), if any. `show_rates` adds TRIR and DART;
    `show_cases` adds the injury-record figures (recordable cases, days
    away, case counts behind the rates), which are left out, not zeroed,
    otherwise."""
    source = figures_for(request, site_id, incident_type)
    zone = server_zone(request.registry)
    after = last + dt.timedelta(days=1)
    start, end = utc_start(first, zone), utc_start(after, zone)
    length = end - start
    # The previous period has as many calendar days, just before `first`.
    previous_first = first - (after - first)
    cases = injuries if show_cases else None
    # What the current and the previous period share is read once.
    source.prefetch([(start, end), (utc_start(previous_first, zone), start)])
    (current, previous), places = period_figures(request, source, [(first, after), (previous_first, first)],
                                                 cases)

    def kpis(keys: tuple[str, ...]) -> dict[str, Any]:
        return {key: {"current": current[key], "previous": previous[key]} for key in keys if key in current}

    weekly = length <= WEEKLY_UP_TO
    # Buckets start at local midnight in the server's zone (weeks from `from`,
    # or the 1st of each month), found in Python as UTC instants.
    if weekly:
        days = [first + i * WEEK for i in range(-(-((last - first).days + 1) // 7))]
    else:
        first_index, last_index = first.year * 12 + first.month - 1, last.year * 12 + last.month - 1
        days = [dt.date(i // 12, i % 12 + 1, 1) for i in range(first_index, last_index + 1)]
    starts = [start, *(utc_start(day, zone) for day in days[1:])]
    counts = source.trend(starts, end)
    trend = [{"start": day.isoformat(), "count": counts[i]} for i, day in enumerate(days)]

    # Most incidents first; ties by site, then area (none last), names then ids.
    locations = [{"siteId": s_id, "siteName": s_name, "areaId": a_id, "areaName": a_name, "count": count}
                 for (s_id, s_name, a_id, a_name), count in sorted(
                     places.items(), key=lambda item: (-item[1], item[0][1], item[0][0], item[0][2] is None,
                                                       item[0][3] or "", item[0][2] or 0))]
    root_causes = [{"category": category, "count": count}
                   for category, count in source.root_causes(start, end)]
    # Type by severity (every type, not only the four of the KPIs).
    by_severity = [{"type": kind, "severity": severity, "count": count}
                   for kind, severity, count in source.by_severity(start, end)]

    heat = [[0] * 24 for _ in range(7)]
    for hour_of_week, count in source.heat(start, end).items():
        heat[hour_of_week // 24][hour_of_week % 24] = count

    body: dict[str, Any] = {
        "from": first.isoformat(), "to": last.isoformat(),
        "previousFrom": previous_first.isoformat(),
        "previousTo": (first - dt.timedelta(days=1)).isoformat(),
        "granularity": "week" if weekly else "month",
        "leading": kpis(LEADING),
        "lagging": kpis(LAGGING),
        "trend": trend,
        "locations": locations,
        "rootCauses": root_causes,
        "byTypeAndSeverity": by_severity,
        "heatmap": {"weekdays": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], "counts": heat},
        "actions": {"onTime": current["actionsOnTime"], "late": current["actionsLate"],
                    "pending": current["actionsPending"]},
    }
    if injuries is not None and show_cases and injuries.body_parts is not None:
        body["byBodyPart"] = by_body_part(request, source, injuries, start, end)
    if injuries is not None and show_rates:
        # Rates are of the site (or all sites), whatever the type filter.
        body["rates"] = injuries.rates(
            request, last, site_id, with_counts=show_cases,
            case_counts=lambda windows: source.case_counts(injuries, windows))
    return body
