"""Statistics over the incidents the caller may see. Every figure is an SQL
aggregate over `visible_incidents(...)`, so a reporter's numbers leave out
what they cannot open, and nothing loads incidents into Python.

Each aggregate reads the incidents table once, with the visibility rule and
the period as plain conditions on it (see `scoped`), so PostgreSQL can use
ix_incidents_org_occurred for a period and needs no second pass over the
table to match ids (bench/README.md has the figures).

Calendar days, weeks and months are those of the server's zone (TZ), the
heatmap's hours those of the incident's site (the server's zone for a site
without one). No statement converts zones row by row: bucket boundaries are
computed in Python as UTC instants, and local time is the UTC instant plus
the zone's offset at it, a CASE over the few changes of the period (see
sqltime)."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pyramid.request import Request
from sqlalchemy import Select, and_, case, func, literal, or_, select
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql import ColumnElement

from ehs_core.actions import server_zone, today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.incidents.models import Incident, IncidentType, Status
from ehs_core.incidents.resources import visible_incidents
from ehs_core.investigation.models import RootCause
from ehs_core.sites.models import Area, Site
from ehs_core.sites.zones import site_zone
from ehs_plugins.analytics import sqltime
from ehs_plugins.analytics.figures import InjuryFigures

# Queries that read actions name them through this alias: the visibility rule
# has a subquery on corrective_actions (actions assigned to a reporter), which
# must not be correlated with the actions being counted.
Action = aliased(CorrectiveAction)
WEEK = dt.timedelta(days=7)
DUE_SOON = dt.timedelta(days=7)
WEEKLY_UP_TO = dt.timedelta(days=92)  # about three months


def utc_start(day: dt.date, zone: dt.tzinfo = dt.UTC) -> dt.datetime:
    """The instant a calendar day starts in `zone` (the server's zone: TZ)."""
    return dt.datetime.combine(day, dt.time(), zone).astimezone(dt.UTC)


def dialect(dbsession: Session) -> str:
    return dbsession.get_bind().dialect.name


def scoped(request: Request, stmt: Select, *where: Any) -> Select:
    """`stmt` (which reads `Incident`, joined to at most one row per incident)
    narrowed to the caller's visible incidents of the organization that match
    `where`, in the same pass (no second one to match ids)."""
    identity = request.identity
    return visible_incidents(stmt.where(Incident.organization_id == identity.user.organization_id, *where),
                             identity)


def rounded(value: Any, places: str = "0.1") -> float | None:
    if value is None:
        return None
    return float(Decimal(str(value)).quantize(Decimal(places), ROUND_HALF_UP))


def overview(request: Request) -> dict[str, Any]:
    db = request.dbsession
    name = dialect(db)

    # Counts per status and the close times (only closed incidents have
    # closed_at) in one pass; the average is taken over all groups.
    status_counts = dict.fromkeys((s.value for s in Status), 0)
    close_total, closed = 0.0, 0
    days = sqltime.days_between(Incident.closed_at, Incident.created_at, name)
    for status, count, total, with_close in db.execute(scoped(
            request, select(Incident.status, func.count(), func.sum(days), func.count(Incident.closed_at))
            .group_by(Incident.status))):
        status_counts[status] = count
        if with_close:
            close_total += total
            closed += with_close
    close_days = close_total / closed if closed else None

    on = today(request.registry)
    due, overdue = db.execute(scoped(request, select(
        func.count(case((and_(Action.due_date >= on, Action.due_date <= on + DUE_SOON),
                         1))),
        func.count(case((Action.due_date < on, 1))),
    ).select_from(Action).join(Incident, Incident.id == Action.incident_id)
        .where(Action.status.in_(PENDING)))).one()

    # 12 weeks, Monday-based in the server's zone, the current week last.
    monday = on - dt.timedelta(days=on.weekday())
    first = monday - 11 * WEEK
    zone = server_zone(request.registry)
    starts = [utc_start(first + i * WEEK, zone) for i in range(12)]
    bucket = sqltime.bucket_index(Incident.occurred_at, name, starts)
    counts = dict(db.execute(scoped(
        request, select(bucket.label("week"), func.count()).group_by("week"),
        Incident.occurred_at >= starts[0], Incident.occurred_at < utc_start(monday + WEEK, zone))).all())
    trend = [{"weekStart": (first + i * WEEK).isoformat(), "count": int(counts.get(i, 0))}
             for i in range(12)]

    year_start = utc_start(dt.date(on.year, 1, 1), zone)
    by_site = [{"siteId": site_id, "siteName": site_name, "count": count} for site_id, site_name, count in
               db.execute(scoped(request, select(Site.id, Site.name, func.count(Incident.id))
                                 .select_from(Site).join(Incident, Incident.site_id == Site.id)
                                 .group_by(Site.id, Site.name)
                                 .order_by(func.count(Incident.id).desc(), Site.name, Site.id),
                                 Incident.occurred_at >= year_start))]
    return {
        "openIncidents": sum(v for k, v in status_counts.items() if k != Status.closed),
        "actionsDue": due,
        "actionsOverdue": overdue,
        "averageCloseDays": rounded(close_days),
        "statusCounts": status_counts,
        "weeklyTrend": trend,
        "incidentsBySite": by_site,
    }


TYPES = (IncidentType.near_miss, IncidentType.hazard, IncidentType.injury, IncidentType.illness)


def on_time_before(request: Request, first: dt.date, last: dt.date) -> ColumnElement:
    """Seconds since 1970 at which the due date of `Action` ends in the
    server's zone (its next local midnight), for due dates in [first, last):
    an action finished before that instant is on time."""
    name = dialect(request.dbsession)
    shift = sqltime.offset_case(Action.due_date, sqltime.day_end_spans(server_zone(request.registry),
                                                                       first, last))
    return (sqltime.epoch_days(Action.due_date, name) + 1) * 86400 - shift


def incident_groups(request: Request, where: list[Any]) -> list[tuple[Any, ...]]:
    """(type, site id, site name, area id, area name, incidents, sum of close
    days, closed incidents) per type and place of the visible incidents
    matching `where`; names are joined to the groups, not to every row."""
    name = dialect(request.dbsession)
    days = sqltime.days_between(Incident.closed_at, Incident.created_at, name)
    groups = scoped(request, select(
        Incident.type.label("type"), Incident.site_id.label("site_id"), Incident.area_id.label("area_id"),
        func.count().label("incidents"), func.sum(days).label("close_days"),
        func.count(Incident.closed_at).label("closed"))
        .group_by(Incident.type, Incident.site_id, Incident.area_id), *where).subquery()
    return [tuple(row) for row in request.dbsession.execute(
        select(groups.c.type, groups.c.site_id, Site.name, groups.c.area_id, Area.name,
               groups.c.incidents, groups.c.close_days, groups.c.closed)
        .select_from(groups).join(Site, Site.id == groups.c.site_id)
        .outerjoin(Area, Area.id == groups.c.area_id))]


Place = tuple[int, str, int | None, str | None]  # site id and name, area id and name


def period_figures(request: Request, first: dt.date, after: dt.date, filters: list[Any],
                   cases: InjuryFigures | None) -> tuple[dict[str, Any], dict[Place, int]]:
    """The KPIs of the calendar days [first, after) in the server's zone, and
    the incident count per place (read in the same pass)."""
    db = request.dbsession
    name = dialect(db)
    zone = server_zone(request.registry)
    start, end = utc_start(first, zone), utc_start(after, zone)
    where = [Incident.occurred_at >= start, Incident.occurred_at < end, *filters]
    # Counts by type, by place and the close times in one pass over the
    # period: at most types x areas groups, added up here.
    counts: dict[str, int] = {}
    places: dict[Place, int] = {}
    close_total, closed = 0.0, 0
    for kind, *place, count, total, with_close in incident_groups(request, where):
        counts[kind] = counts.get(kind, 0) + count
        places[tuple(place)] = places.get(tuple(place), 0) + count
        if with_close:
            close_total += total
            closed += with_close
    reported = sum(counts.values())
    close_days = close_total / closed if closed else None
    finished = sqltime.epoch(func.coalesce(Action.done_at, Action.updated_at), name)
    due_ends = on_time_before(request, first, after)
    completed = Action.status.in_((ActionStatus.done, ActionStatus.verified))
    on = today(request.registry)
    # Actions due in the period, on incidents the caller may see (any occurrence date):
    # on time when finished on or before the due date in the server's zone.
    on_time, late, pending = db.execute(scoped(request, select(
        func.count(case((and_(completed, finished < due_ends), 1))),
        func.count(case((or_(
            and_(completed, finished >= due_ends),
            and_(Action.status.in_(PENDING), Action.due_date < on)), 1))),
        func.count(case((and_(Action.status.in_(PENDING), Action.due_date >= on), 1))),
    ).select_from(Action).join(Incident, Incident.id == Action.incident_id)
        .where(Action.due_date >= first, Action.due_date < after),
        *filters)).one()
    figures = {
        "reported": reported,
        "nearMisses": counts.get(IncidentType.near_miss, 0),
        "hazards": counts.get(IncidentType.hazard, 0),
        "injuries": counts.get(IncidentType.injury, 0),
        "illnesses": counts.get(IncidentType.illness, 0),
        "averageDaysToClose": rounded(close_days),
        "actionsOnTime": on_time,
        "actionsLate": late,
        "actionsPending": pending,
        "actionsClosedOnTimeRate": rounded(100 * on_time / (on_time + late)) if on_time + late else None,
    }
    if cases is not None:
        recordable, days_away = cases.period(request, lambda stmt: scoped(request, stmt, *where))
        figures["recordableCases"] = recordable
        figures["daysAway"] = int(days_away)
    return figures, places


def site_offsets(request: Request, site_id: int | None, start: dt.datetime,
                 end: dt.datetime) -> ColumnElement:
    """The UTC offset (seconds) at `Incident.occurred_at` in the zone of the
    incident's site (the server's zone for a site without one), for
    incidents in [start, end) of the organization's sites (or of `site_id`)."""
    stmt = select(Site.id, Site.timezone).where(Site.organization_id == request.identity.user.organization_id)
    if site_id is not None:
        stmt = stmt.where(Site.id == site_id)
    sites: dict[dt.tzinfo, list[int]] = {}
    for s_id, zone in request.dbsession.execute(stmt.order_by(Site.id)):
        sites.setdefault(site_zone(zone, request.registry), []).append(s_id)
    cases = [(zone, sqltime.offset_case(Incident.occurred_at, sqltime.offset_spans(zone, start, end)))
             for zone in sites]
    if len(cases) <= 1:
        return cases[0][1] if cases else literal(0)
    return case(*((Incident.site_id.in_(sites[zone]), offset) for zone, offset in cases[:-1]),
                else_=cases[-1][1])


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
    db = request.dbsession
    name = dialect(db)
    zone = server_zone(request.registry)
    after = last + dt.timedelta(days=1)
    start, end = utc_start(first, zone), utc_start(after, zone)
    length = end - start
    # The previous period has as many calendar days, just before `first`.
    previous_first = first - (after - first)
    filters: list[Any] = []
    if site_id is not None:
        filters.append(Incident.site_id == site_id)
    if incident_type is not None:
        filters.append(Incident.type == incident_type)
    cases = injuries if show_cases else None
    current, places = period_figures(request, first, after, filters, cases)
    previous, _ = period_figures(request, previous_first, first, filters, cases)

    def kpis(keys: tuple[str, ...]) -> dict[str, Any]:
        return {key: {"current": current[key], "previous": previous[key]} for key in keys if key in current}

    period = [Incident.occurred_at >= start, Incident.occurred_at < end, *filters]
    weekly = length <= WEEKLY_UP_TO
    # Buckets start at local midnight in the server's zone (weeks from `from`,
    # or the 1st of each month), found in Python as UTC instants.
    if weekly:
        days = [first + i * WEEK for i in range(-(-((last - first).days + 1) // 7))]
    else:
        first_index, last_index = first.year * 12 + first.month - 1, last.year * 12 + last.month - 1
        days = [dt.date(i // 12, i % 12 + 1, 1) for i in range(first_index, last_index + 1)]
    starts = [start, *(utc_start(day, zone) for day in days[1:])]
    bucket = sqltime.bucket_index(Incident.occurred_at, name, starts)
    counts = dict(db.execute(scoped(request, select(bucket.label("b"), func.count()).group_by("b"),
                                    *period)).all())
    trend = [{"start": day.isoformat(), "count": int(counts.get(i, 0))} for i, day in enumerate(days)]

    # Most incidents first; ties by site, then area (none last), names then ids.
    locations = [{"siteId": s_id, "siteName": s_name, "areaId": a_id, "areaName": a_name, "count": count}
                 for (s_id, s_name, a_id, a_name), count in sorted(
                     places.items(), key=lambda item: (-item[1], item[0][1], item[0][0], item[0][2] is None,
                                                       item[0][3] or "", item[0][2] or 0))]
    root_causes = [{"category": category, "count": count} for category, count in db.execute(scoped(
        request, select(RootCause.category, func.count())
        .select_from(RootCause).join(Incident, Incident.id == RootCause.incident_id)
        .group_by(RootCause.category).order_by(func.count().desc(), RootCause.category), *period))]

    # Type by severity (every type, not only the four of the KPIs).
    by_severity = [{"type": kind, "severity": severity, "count": count}
                   for kind, severity, count in db.execute(scoped(
                       request, select(Incident.type, Incident.severity, func.count())
                       .group_by(Incident.type, Incident.severity)
                       .order_by(Incident.type, Incident.severity), *period))]

    heat = [[0] * 24 for _ in range(7)]
    offset = site_offsets(request, site_id, start, end)
    key = sqltime.hour_of_week(sqltime.epoch(Incident.occurred_at, name) + offset, name)
    for hour_of_week, count in db.execute(scoped(
            request, select(key.label("k"), func.count()).group_by("k"), *period)):
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
    if injuries is not None and show_rates:
        body["rates"] = injuries.rates(
            request, last, site_id, with_counts=show_cases,
            local_seconds=lambda start, end: (sqltime.epoch(Incident.occurred_at, name)
                                              + site_offsets(request, site_id, start, end)))
    return body
