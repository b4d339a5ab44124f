"""Statistics over the incidents the caller may see. Every figure is an SQL
aggregate over `visible_incidents(...)`, so a reporter's numbers leave out
what they cannot open, and nothing loads incidents into Python."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pyramid.request import Request
from sqlalchemy import BigInteger, Select, and_, case, func, literal, or_, select
from sqlalchemy.orm import Session

from ehs_core.actions import server_zone, today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.incidents.models import Incident, IncidentType, Status
from ehs_core.incidents.resources import visible_incidents
from ehs_core.investigation.models import RootCause
from ehs_core.sites.models import Area, Site
from ehs_plugins.analytics import sqltime

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
    identity = request.identity
    stmt = select(Incident.id).where(Incident.organization_id == identity.user.organization_id, *where)
    return visible_incidents(stmt, identity)


def visible(request: Request, *where: Any) -> Any:
    return Incident.id.in_(incident_ids(request, *where))


def rounded(value: Any, places: str = "0.1") -> float | None:
    if value is None:
        return None
    return float(Decimal(str(value)).quantize(Decimal(places), ROUND_HALF_UP))


def overview(request: Request) -> dict[str, Any]:
    db = request.dbsession
    name = dialect(db)
    identity = request.identity
    base = visible_incidents(
        select(Incident).where(Incident.organization_id == identity.user.organization_id), identity
    ).subquery()

    status_counts = dict.fromkeys((s.value for s in Status), 0)
    for status, count in db.execute(select(base.c.status, func.count()).group_by(base.c.status)):
        status_counts[status] = count

    on = today(request.registry)
    pending = and_(CorrectiveAction.status.in_(PENDING), CorrectiveAction.incident_id.in_(select(base.c.id)))
    due, overdue = db.execute(select(
        func.count(case((and_(CorrectiveAction.due_date >= on, CorrectiveAction.due_date <= on + DUE_SOON),
                         1))),
        func.count(case((CorrectiveAction.due_date < on, 1))),
    ).where(pending)).one()

    close_days = db.execute(select(func.avg(sqltime.days_between(base.c.closed_at, base.c.created_at, name)))
                            .where(base.c.closed_at.is_not(None))).scalar()

    # 12 weeks, Monday-based in the server's zone, the current week last.
    monday = on - dt.timedelta(days=on.weekday())
    first = monday - 11 * WEEK
    zone = server_zone(request.registry)
    start = utc_start(first, zone)
    seconds = sqltime.epoch(base.c.occurred_at, name) - literal(int(start.timestamp()), BigInteger)
    bucket = seconds / (7 * 86400)
    counts = dict(db.execute(
        select(func.floor(bucket).label("week"), func.count())
        .where(base.c.occurred_at >= start, base.c.occurred_at < utc_start(monday + WEEK, zone))
        .group_by("week")).all())
    trend = [{"weekStart": (first + i * WEEK).isoformat(), "count": int(counts.get(i, 0))}
             for i in range(12)]

    year_start = utc_start(dt.date(on.year, 1, 1), zone)
    by_site = [{"siteId": site_id, "siteName": site_name, "count": count} for site_id, site_name, count in
               db.execute(select(Site.id, Site.name, func.count(base.c.id))
                          .join(base, base.c.site_id == Site.id)
                          .where(base.c.occurred_at >= year_start)
                          .group_by(Site.id, Site.name).order_by(func.count(base.c.id).desc(), Site.name))]
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
    ids = incident_ids(request, *where)
    counts = dict(db.execute(select(Incident.type, func.count()).where(Incident.id.in_(ids))
                             .group_by(Incident.type)).all())
    close_days = db.execute(select(func.avg(sqltime.days_between(Incident.closed_at, Incident.created_at,
                                                                 name)))
                            .where(Incident.id.in_(ids), Incident.closed_at.is_not(None))).scalar()
    finished = sqltime.local_date(func.coalesce(CorrectiveAction.done_at, CorrectiveAction.updated_at),
                                  name, zone_name(request))
    completed = CorrectiveAction.status.in_((ActionStatus.done, ActionStatus.verified))
    on = today(request.registry)
    # Actions due in the period, on incidents the caller may see (any occurrence date).
    action_filter = [CorrectiveAction.due_date >= start.date(), CorrectiveAction.due_date < end.date(),
                     CorrectiveAction.incident_id.in_(incident_ids(request, *filters))]
    on_time, late, pending = db.execute(select(
        func.count(case((and_(completed, finished <= CorrectiveAction.due_date), 1))),
        func.count(case((or_(
            and_(completed, finished > CorrectiveAction.due_date),
            and_(CorrectiveAction.status.in_(PENDING), CorrectiveAction.due_date < on)), 1))),
        func.count(case((and_(CorrectiveAction.status.in_(PENDING), CorrectiveAction.due_date >= on), 1))),
    ).where(*action_filter)).one()
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

        recordable, days_away = db.execute(
            select(func.count(), func.coalesce(func.sum(InjuryCase.days_away), 0))
            .where(InjuryCase.incident_id.in_(ids), InjuryCase.recordable.is_(True))).one()
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

    ids = incident_ids(request, Incident.occurred_at >= start, Incident.occurred_at < end, *filters)
    weekly = length <= WEEKLY_UP_TO
    if weekly:
        seconds = sqltime.epoch(Incident.occurred_at, name) - literal(int(start.timestamp()), BigInteger)
        bucket = func.floor(seconds / (7 * 86400))
        counts = dict(db.execute(select(bucket.label("b"), func.count()).where(Incident.id.in_(ids))
                                 .group_by("b")).all())
        steps = -(-length.days // 7)
        trend = [{"start": (first + i * WEEK).isoformat(), "count": int(counts.get(i, 0))}
                 for i in range(steps)]
    else:
        bucket = sqltime.month_index(Incident.occurred_at, name, zone_name(request))
        counts = dict(db.execute(select(bucket.label("b"), func.count()).where(Incident.id.in_(ids))
                                 .group_by("b")).all())
        first_index, last_index = first.year * 12 + first.month - 1, last.year * 12 + last.month - 1
        trend = [{"start": dt.date(i // 12, i % 12 + 1, 1).isoformat(), "count": int(counts.get(i, 0))}
                 for i in range(first_index, last_index + 1)]

    locations = [{"siteId": s_id, "siteName": s_name, "areaId": a_id, "areaName": a_name, "count": count}
                 for s_id, s_name, a_id, a_name, count in db.execute(
                     select(Site.id, Site.name, Area.id, Area.name, func.count(Incident.id))
                     .select_from(Incident).join(Site, Site.id == Incident.site_id)
                     .outerjoin(Area, Area.id == Incident.area_id).where(Incident.id.in_(ids))
                     .group_by(Site.id, Site.name, Area.id, Area.name)
                     .order_by(func.count(Incident.id).desc(), Site.name))]
    root_causes = [{"category": category, "count": count} for category, count in db.execute(
        select(RootCause.category, func.count()).where(RootCause.incident_id.in_(ids))
        .group_by(RootCause.category).order_by(func.count().desc(), RootCause.category))]

    zone = request.registry.settings.get("ehs.timezone") or "UTC"
    local = sqltime.local(Incident.occurred_at, name, func.coalesce(Site.timezone, zone),
                          Incident.occurred_offset_minutes)
    weekday, hour = sqltime.weekday_hour(local, name)
    heat = [[0] * 24 for _ in range(7)]
    for day, hr, count in db.execute(
            select(weekday.label("d"), hour.label("h"), func.count()).select_from(Incident)
            .join(Site, Site.id == Incident.site_id).where(Incident.id.in_(ids)).group_by("d", "h")):
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
