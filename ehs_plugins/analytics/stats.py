"""Statistics over the incidents the caller may see. Every figure is an SQL
aggregate over `visible_incidents(...)`, so a reporter's numbers leave out
what they cannot open, and nothing loads incidents into Python.

Each aggregate reads the incidents table once, with the visibility rule and
the period as plain conditions on it (see `scoped`), so PostgreSQL can use
ix_incidents_org_occurred for a period and needs no second pass over the
table to match ids (bench/README.md has the figures)."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pyramid.request import Request
from sqlalchemy import BigInteger, Select, and_, case, func, literal, or_, select
from sqlalchemy.orm import Session, aliased

from ehs_core.actions import server_zone, today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.incidents.models import Incident, IncidentType, Status
from ehs_core.incidents.resources import visible_incidents
from ehs_core.investigation.models import RootCause
from ehs_core.sites.models import Area, Site
from ehs_plugins.analytics import sqltime

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


def zone_name(request: Request) -> str:
    return request.registry.settings.get("ehs.timezone") or "UTC"


def dialect(dbsession: Session) -> str:
    return dbsession.get_bind().dialect.name


def incident_ids(request: Request, *where: Any) -> Select:
    """The ids of visible incidents matching `where`, as a subquery source."""
    return scoped(request, select(Incident.id), *where)


def visible(request: Request, *where: Any) -> Any:
    return Incident.id.in_(incident_ids(request, *where))


def scoped(request: Request, stmt: Select, *where: Any) -> Select:
    """`stmt` (which reads `Incident`, joined to at most one row per incident)
    narrowed to the caller's visible incidents of the organization that match
    `where`: the same rows as `Incident.id.in_(incident_ids(...))`, in one pass."""
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

    status_counts = dict.fromkeys((s.value for s in Status), 0)
    for status, count in db.execute(scoped(request, select(Incident.status, func.count())
                                           .group_by(Incident.status))):
        status_counts[status] = count

    on = today(request.registry)
    due, overdue = db.execute(scoped(request, select(
        func.count(case((and_(Action.due_date >= on, Action.due_date <= on + DUE_SOON),
                         1))),
        func.count(case((Action.due_date < on, 1))),
    ).select_from(Action).join(Incident, Incident.id == Action.incident_id)
        .where(Action.status.in_(PENDING)))).one()

    close_days = db.execute(scoped(
        request, select(func.avg(sqltime.days_between(Incident.closed_at, Incident.created_at, name))),
        Incident.closed_at.is_not(None))).scalar()

    # 12 weeks, Monday-based in the server's zone, the current week last.
    monday = on - dt.timedelta(days=on.weekday())
    first = monday - 11 * WEEK
    zone = server_zone(request.registry)
    start = utc_start(first, zone)
    seconds = sqltime.epoch(Incident.occurred_at, name) - literal(int(start.timestamp()), BigInteger)
    bucket = seconds / (7 * 86400)
    counts = dict(db.execute(scoped(
        request, select(func.floor(bucket).label("week"), func.count()).group_by("week"),
        Incident.occurred_at >= start, Incident.occurred_at < utc_start(monday + WEEK, zone))).all())
    trend = [{"weekStart": (first + i * WEEK).isoformat(), "count": int(counts.get(i, 0))}
             for i in range(12)]

    year_start = utc_start(dt.date(on.year, 1, 1), zone)
    by_site = [{"siteId": site_id, "siteName": site_name, "count": count} for site_id, site_name, count in
               db.execute(scoped(request, select(Site.id, Site.name, func.count(Incident.id))
                                 .select_from(Site).join(Incident, Incident.site_id == Site.id)
                                 .group_by(Site.id, Site.name)
                                 .order_by(func.count(Incident.id).desc(), Site.name),
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


def period_figures(request: Request, start: dt.datetime, end: dt.datetime, filters: list[Any],
                   with_cases: bool) -> dict[str, Any]:
    db = request.dbsession
    name = dialect(db)
    where = [Incident.occurred_at >= start, Incident.occurred_at < end, *filters]
    counts = dict(db.execute(scoped(request, select(Incident.type, func.count()).group_by(Incident.type),
                                    *where)).all())
    close_days = db.execute(scoped(
        request, select(func.avg(sqltime.days_between(Incident.closed_at, Incident.created_at, name))),
        *where, Incident.closed_at.is_not(None))).scalar()
    finished = sqltime.local_date(func.coalesce(Action.done_at, Action.updated_at),
                                  name, zone_name(request))
    completed = Action.status.in_((ActionStatus.done, ActionStatus.verified))
    on = today(request.registry)
    # Actions due in the period, on incidents the caller may see (any occurrence date).
    on_time, late, pending = db.execute(scoped(request, select(
        func.count(case((and_(completed, finished <= Action.due_date), 1))),
        func.count(case((or_(
            and_(completed, finished > Action.due_date),
            and_(Action.status.in_(PENDING), Action.due_date < on)), 1))),
        func.count(case((and_(Action.status.in_(PENDING), Action.due_date >= on), 1))),
    ).select_from(Action).join(Incident, Incident.id == Action.incident_id)
        .where(Action.due_date >= start.date(), Action.due_date < end.date()),
        *filters)).one()
    figures = {
        "reported": sum(counts.values()),
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
    if with_cases:
        from ehs_plugins.osha.models import InjuryCase

        recordable, days_away = db.execute(scoped(
            request, select(func.count(), func.coalesce(func.sum(InjuryCase.days_away), 0))
            .select_from(InjuryCase).join(Incident, Incident.id == InjuryCase.incident_id)
            .where(InjuryCase.recordable.is_(True)), *where)).one()
        figures["recordableCases"] = recordable
        figures["daysAway"] = int(days_away)
    return figures


LEADING = ("reported", "nearMisses", "hazards", "actionsClosedOnTimeRate", "averageDaysToClose")
LAGGING = ("injuries", "illnesses", "recordableCases", "daysAway")


def analytics(request: Request, first: dt.date, last: dt.date, site_id: int | None,
              incident_type: str | None, osha: bool, show_rates: bool) -> dict[str, Any]:
    db = request.dbsession
    name = dialect(db)
    zone = server_zone(request.registry)
    start, end = utc_start(first, zone), utc_start(last + dt.timedelta(days=1), zone)
    length = end - start
    previous_start = start - length
    filters: list[Any] = []
    if site_id is not None:
        filters.append(Incident.site_id == site_id)
    if incident_type is not None:
        filters.append(Incident.type == incident_type)
    with_cases = osha and show_rates
    current = period_figures(request, start, end, filters, with_cases)
    previous = period_figures(request, previous_start, start, filters, with_cases)

    def kpis(keys: tuple[str, ...]) -> dict[str, Any]:
        return {key: {"current": current[key], "previous": previous[key]} for key in keys if key in current}

    period = [Incident.occurred_at >= start, Incident.occurred_at < end, *filters]
    weekly = length <= WEEKLY_UP_TO
    if weekly:
        seconds = sqltime.epoch(Incident.occurred_at, name) - literal(int(start.timestamp()), BigInteger)
        bucket = func.floor(seconds / (7 * 86400))
        counts = dict(db.execute(scoped(request, select(bucket.label("b"), func.count()).group_by("b"),
                                        *period)).all())
        steps = -(-length.days // 7)
        trend = [{"start": (first + i * WEEK).isoformat(), "count": int(counts.get(i, 0))}
                 for i in range(steps)]
    else:
        bucket = sqltime.month_index(Incident.occurred_at, name, zone_name(request))
        counts = dict(db.execute(scoped(request, select(bucket.label("b"), func.count()).group_by("b"),
                                        *period)).all())
        first_index, last_index = first.year * 12 + first.month - 1, last.year * 12 + last.month - 1
        trend = [{"start": dt.date(i // 12, i % 12 + 1, 1).isoformat(), "count": int(counts.get(i, 0))}
                 for i in range(first_index, last_index + 1)]

    locations = [{"siteId": s_id, "siteName": s_name, "areaId": a_id, "areaName": a_name, "count": count}
                 for s_id, s_name, a_id, a_name, count in db.execute(scoped(
                     request, select(Site.id, Site.name, Area.id, Area.name, func.count(Incident.id))
                     .select_from(Incident).join(Site, Site.id == Incident.site_id)
                     .outerjoin(Area, Area.id == Incident.area_id)
                     .group_by(Site.id, Site.name, Area.id, Area.name)
                     .order_by(func.count(Incident.id).desc(), Site.name), *period))]
    root_causes = [{"category": category, "count": count} for category, count in db.execute(scoped(
        request, select(RootCause.category, func.count())
        .select_from(RootCause).join(Incident, Incident.id == RootCause.incident_id)
        .group_by(RootCause.category).order_by(func.count().desc(), RootCause.category), *period))]

    zone = request.registry.settings.get("ehs.timezone") or "UTC"
    local = sqltime.local(Incident.occurred_at, name, func.coalesce(Site.timezone, zone),
                          Incident.occurred_offset_minutes)
    weekday, hour = sqltime.weekday_hour(local, name)
    heat = [[0] * 24 for _ in range(7)]
    for day, hr, count in db.execute(scoped(
            request, select(weekday.label("d"), hour.label("h"), func.count()).select_from(Incident)
            .join(Site, Site.id == Incident.site_id).group_by("d", "h"), *period)):
        heat[int(day)][int(hr)] = count

    body: dict[str, Any] = {
        "from": first.isoformat(), "to": last.isoformat(),
        "previousFrom": previous_start.date().isoformat(),
        "previousTo": (start.date() - dt.timedelta(days=1)).isoformat(),
        "granularity": "week" if weekly else "month",
        "leading": kpis(LEADING),
        "lagging": kpis(LAGGING),
        "trend": trend,
        "locations": locations,
        "rootCauses": root_causes,
        "heatmap": {"weekdays": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], "counts": heat},
        "actions": {"onTime": current["actionsOnTime"], "late": current["actionsLate"],
                    "pending": current["actionsPending"]},
    }
    if osha and show_rates:
        from ehs_plugins.analytics.rates import rates

        body["rates"] = rates(request, last, site_id)
    return body
