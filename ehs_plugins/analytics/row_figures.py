"""Figures from the rows the caller may see (`Rows`): SQL aggregates over
`visible_incidents(...)`, so a reporter's numbers leave out what they
cannot open, and nothing loads incidents into Python. Each aggregate reads
the incidents table once, with the visibility rule and the period as plain
conditions on it (see `scoped`), so PostgreSQL can use
ix_incidents_org_occurred for a period and needs no second pass over the
table to match ids.

Calendar days, weeks and months are those of the server's zone (TZ), the
heatmap's hours those of the incident's site (the server's zone for a site
without one). No statement converts zones row by row: bucket boundaries are
computed in Python as UTC instants, and local time is the UTC instant plus
the zone's offset at it, a CASE over the few changes of the period (see
sqltime)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from pyramid.request import Request
from sqlalchemy import Select, and_, case, func, literal, or_, select
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql import ColumnElement

from ehs_core.actions import server_zone, today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.db import read_rows
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import visible_incidents
from ehs_core.investigation.models import RootCause
from ehs_core.sites.models import Area, Site
from ehs_core.sites.zones import site_zone
from ehs_plugins.analytics import sqltime
from ehs_plugins.analytics.figures import InjuryFigures, Month

# Queries that read actions name them through this alias: the visibility rule
# has a subquery on corrective_actions (actions assigned to a reporter), which
# must not be correlated with the actions being counted.
Action = aliased(CorrectiveAction)
DUE_SOON = dt.timedelta(days=7)
WIDEST_OFFSET = dt.timedelta(hours=15)  # any zone's offset is within this of UTC


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
    return visible_incidents(stmt.where(Incident.organization_id == identity.account.organization_id, *where),
                             identity)



def on_time_before(request: Request, first: dt.date, last: dt.date) -> ColumnElement:
    """Seconds since 1970 at which the due date of `Action` ends in the
    server's zone (its next local midnight), for due dates in [first, last):
    an action finished before that instant is on time."""
    name = dialect(request.dbsession)
    shift = sqltime.offset_case(Action.due_date, sqltime.day_end_spans(server_zone(request.registry),
                                                                       first, last))
    return (sqltime.epoch_days(Action.due_date, name) + 1) * 86400 - shift


def action_classes(request: Request, first: dt.date, after: dt.date) -> tuple[ColumnElement, ...]:
    """(on time, late, pending) conditions on `Action`, due in [first, after)."""
    name = dialect(request.dbsession)
    finished = sqltime.epoch(func.coalesce(Action.done_at, Action.updated_at), name)
    due_ends = on_time_before(request, first, after)
    completed = Action.status.in_((ActionStatus.done, ActionStatus.verified))
    on = today(request.registry)
    return (and_(completed, finished < due_ends),
            or_(and_(completed, finished >= due_ends),
                and_(Action.status.in_(PENDING), Action.due_date < on)),
            and_(Action.status.in_(PENDING), Action.due_date >= on))


def site_offsets(request: Request, zones: dict[int, str | None], start: dt.datetime,
                 end: dt.datetime) -> ColumnElement:
    """The UTC offset (seconds) at `Incident.occurred_at` in the zone of the
    incident's site (the server's zone for a site without one), for
    incidents in [start, end) of the sites in `zones` (site id -> zone)."""
    sites: dict[dt.tzinfo, list[int]] = {}
    for s_id, zone in sorted(zones.items()):
        sites.setdefault(site_zone(zone, request.registry), []).append(s_id)
    cases = [(zone, sqltime.offset_case(Incident.occurred_at, sqltime.offset_spans(zone, start, end)))
             for zone in sites]
    if len(cases) <= 1:
        return cases[0][1] if cases else literal(0)
    return case(*((Incident.site_id.in_(sites[zone]), offset) for zone, offset in cases[:-1]),
                else_=cases[-1][1])


def read_zones(request: Request, site_id: int | None) -> dict[int, str | None]:
    """The organization's sites (or `site_id`) and their zones."""
    organization_id = request.identity.account.organization_id
    stmt = select(Site.id, Site.timezone).where(Site.organization_id == organization_id)
    if site_id is not None:
        stmt = stmt.where(Site.id == site_id)
    return dict(request.dbsession.execute(stmt.order_by(Site.id)).all())



class Rows:
    """Figures from the rows the caller may see, of one site and one type
    if given."""

    def __init__(self, request: Request, site_id: int | None = None, incident_type: str | None = None,
                 zones: dict[int, str | None] | None = None) -> None:
        self.request = request
        self.db = request.dbsession
        self.name = dialect(self.db)
        self.site_id = site_id
        self._zones = zones
        self.filters: list[Any] = []
        if site_id is not None:
            self.filters.append(Incident.site_id == site_id)
        if incident_type is not None:
            self.filters.append(Incident.type == incident_type)

    @property
    def zones(self) -> dict[int, str | None]:
        if self._zones is None:
            self._zones = read_zones(self.request, self.site_id)
        return self._zones

    def period(self, start: dt.datetime, end: dt.datetime | None) -> list[Any]:
        return [Incident.occurred_at >= start, *([Incident.occurred_at < end] if end else []), *self.filters]

    def scoped(self, stmt: Select, *where: Any) -> Select:
        return scoped(self.request, stmt, *where)

    def read(self, stmt: Select) -> Any:
        """The rows of a statement of plain columns (`ehs_core.db.read_rows`:
        no ORM execution context for what maps to no entity)."""
        return read_rows(self.request, stmt)

    def prefetch(self, periods: Sequence[tuple[dt.datetime, dt.datetime | None]]) -> None:
        """Read ahead what the periods' figures share (nothing, here)."""

    def groups_each(self, periods: Sequence[tuple[dt.datetime, dt.datetime]]) -> list[list[tuple[Any, ...]]]:
        """`groups` of each period."""
        return [self.groups(start, end) for start, end in periods]

    def groups(self, start: dt.datetime, end: dt.datetime) -> list[tuple[Any, ...]]:
        """(type, site id, site name, area id, area name, incidents, close
        microseconds, closed incidents) per type and place of the period;
        names are joined to the groups, not to every row."""
        micros = sqltime.micros_between(Incident.closed_at, Incident.created_at, self.name)
        groups = self.scoped(select(
            Incident.type.label("type"), Incident.site_id.label("site_id"), Incident.area_id.label("area_id"),
            func.count().label("incidents"), func.sum(micros).label("close_micros"),
            func.count(Incident.closed_at).label("closed"))
            .group_by(Incident.type, Incident.site_id, Incident.area_id), *self.period(start, end)).subquery()
        return [tuple(row) for row in self.read(
            select(groups.c.type, groups.c.site_id, Site.name, groups.c.area_id, Area.name,
                   groups.c.incidents, groups.c.close_micros, groups.c.closed)
            .select_from(groups).join(Site, Site.id == groups.c.site_id)
            .outerjoin(Area, Area.id == groups.c.area_id))]

    def trend(self, starts: Sequence[dt.datetime], end: dt.datetime) -> list[int]:
        """Incidents in each bucket [starts[i], starts[i + 1]) (the last up to `end`)."""
        bucket = sqltime.bucket_index(Incident.occurred_at, self.name, starts)
        counts = dict(self.read(self.scoped(
            select(bucket.label("b"), func.count()).group_by("b"), *self.period(starts[0], end))).all())
        return [int(counts.get(i, 0)) for i in range(len(starts))]

    def by_severity(self, start: dt.datetime, end: dt.datetime) -> list[tuple[str, str, int]]:
        return [tuple(row) for row in self.read(self.scoped(
            select(Incident.type, Incident.severity, func.count())
            .group_by(Incident.type, Incident.severity)
            .order_by(Incident.type, Incident.severity), *self.period(start, end)))]

    def heat(self, start: dt.datetime, end: dt.datetime) -> dict[int, int]:
        offset = site_offsets(self.request, self.zones, start, end)
        key = sqltime.hour_of_week(sqltime.epoch(Incident.occurred_at, self.name) + offset, self.name)
        return dict(self.read(self.scoped(
            select(key.label("k"), func.count()).group_by("k"), *self.period(start, end))).all())

    def root_causes(self, start: dt.datetime, end: dt.datetime) -> list[tuple[str, int]]:
        return [tuple(row) for row in self.read(self.scoped(
            select(RootCause.category, func.count())
            .select_from(RootCause).join(Incident, Incident.id == RootCause.incident_id)
            .group_by(RootCause.category).order_by(func.count().desc(), RootCause.category),
            *self.period(start, end)))]

    def actions(self, first: dt.date, after: dt.date) -> tuple[int, int, int]:
        """(on time, late, pending) of the actions due in [first, after), on
        incidents the caller may see (any occurrence date): on time when
        finished on or before the due date in the server's zone."""
        on_time, late, pending = action_classes(self.request, first, after)
        return tuple(self.read(self.scoped(select(
            func.count(case((on_time, 1))), func.count(case((late, 1))), func.count(case((pending, 1))))
            .select_from(Action).join(Incident, Incident.id == Action.incident_id)
            .where(Action.due_date >= first, Action.due_date < after), *self.filters)).one())

    def actions_each(self, periods: Sequence[tuple[dt.date, dt.date]]) -> list[tuple[int, int, int]]:
        """`actions` of each period."""
        return [self.actions(first, after) for first, after in periods]

    def cases_each(self, figures: InjuryFigures,
                   periods: Sequence[tuple[dt.datetime, dt.datetime]]) -> list[tuple[int, int]]:
        """`cases` of each period."""
        return [self.cases(figures, start, end) for start, end in periods]

    def cases(self, figures: InjuryFigures, start: dt.datetime, end: dt.datetime) -> tuple[int, int]:
        """(recordable cases, days away) of the incidents of the period."""
        found = figures.cases().subquery()
        recordable, days_away = self.read(self.scoped(
            select(func.count(), func.coalesce(func.sum(found.c.days_away), 0))
            .select_from(found).join(Incident, Incident.id == found.c.incident_id),
            *self.period(start, end))).one()
        return int(recordable), int(days_away)

    def body_parts(self, figures: InjuryFigures, start: dt.datetime,
                   end: dt.datetime) -> list[tuple[str | None, int]]:
        """(code, injured or ill people) of the visible incidents of the
        period, per part of the body (None: not coded)."""
        assert figures.body_parts is not None
        found = figures.body_parts().subquery()
        return [(code, int(count)) for code, count in self.read(self.scoped(
            select(found.c.code, func.count()).select_from(found)
            .join(Incident, Incident.id == found.c.incident_id).group_by(found.c.code),
            *self.period(start, end)))]

    def case_counts(self, figures: InjuryFigures,
                    windows: list[tuple[Month, Month]]) -> list[tuple[int, int, int]]:
        """(recordable, DART, lost-time cases) of the organization's
        incidents (of the site) in each window of whole months of the site's
        calendar (local wall-clock time)."""
        start = min(_wall(first) for first, _ in windows) - WIDEST_OFFSET
        end = max(_wall(_next(last)) for _, last in windows) + WIDEST_OFFSET
        offsets = site_offsets(self.request, self.zones, start, end)
        local = sqltime.epoch(Incident.occurred_at, self.name) + offsets
        found = figures.cases().subquery()
        columns = []
        for first, last in windows:
            during = and_(local >= _wall(first).timestamp(), local < _wall(_next(last)).timestamp())
            columns += [func.count().filter(during), func.count().filter(and_(during, found.c.dart)),
                        func.count().filter(and_(during, found.c.lost_time))]
        where = [Incident.organization_id == self.request.identity.account.organization_id,
                 Incident.occurred_at >= start, Incident.occurred_at < end]
        if self.site_id is not None:
            where.append(Incident.site_id == self.site_id)
        counts = self.read(select(*columns).select_from(found)
                                 .join(Incident, Incident.id == found.c.incident_id).where(*where)).one()
        return [tuple(int(n) for n in counts[3 * i:3 * i + 3]) for i in range(len(windows))]

    # the overview

    def statuses(self) -> list[tuple[str, int, Any, int]]:
        """(status, incidents, close_micros, closed) of every incident."""
        micros = sqltime.micros_between(Incident.closed_at, Incident.created_at, self.name)
        return [tuple(row) for row in self.read(self.scoped(
            select(Incident.status, func.count(), func.sum(micros), func.count(Incident.closed_at))
            .group_by(Incident.status)))]

    def actions_due(self, on: dt.date) -> tuple[int, int]:
        """(due within a week, overdue) of the pending actions."""
        return tuple(self.read(self.scoped(select(
            func.count(case((and_(Action.due_date >= on, Action.due_date <= on + DUE_SOON), 1))),
            func.count(case((Action.due_date < on, 1))),
        ).select_from(Action).join(Incident, Incident.id == Action.incident_id)
            .where(Action.status.in_(PENDING)))).one())

    def by_site(self, start: dt.datetime) -> list[tuple[int, str, int]]:
        """(site id, name, incidents) per site of the incidents from `start`
        on, most first, then by name and id."""
        sites = self.scoped(select(Incident.site_id.label("site_id"), func.count().label("incidents"))
                            .group_by(Incident.site_id), *self.period(start, None)).subquery()
        return [(site_id, name, int(count)) for site_id, name, count in self.read(
            select(Site.id, Site.name, sites.c.incidents)
            .select_from(sites).join(Site, Site.id == sites.c.site_id)
            .order_by(sites.c.incidents.desc(), Site.name, Site.id))]


def _wall(month: Month) -> dt.datetime:
    """Midnight starting the month, as a wall-clock time written in UTC."""
    return dt.datetime(month[0], month[1], 1, tzinfo=dt.UTC)


def _next(month: Month) -> Month:
    return (month[0] + (month[1] == 12), month[1] % 12 + 1)
