"""Statistics over the incidents the caller may see: the overview and the
analytics figures, each read from one of two sources that give the same
answer.

- `Rows`: SQL aggregates over `visible_incidents(...)`, so a reporter's
  numbers leave out what they cannot open, and nothing loads incidents into
  Python. Each aggregate reads the incidents table once, with the
  visibility rule and the period as plain conditions on it (see `scoped`),
  so PostgreSQL can use ix_incidents_org_occurred for a period and needs no
  second pass over the table to match ids.
- `Tallied`: for callers who see every incident, the sums kept per site,
  type and local month (`tallies`, models.Tally), so a figure reads a few
  thousand rows however many incidents there are. A period rarely starts
  and ends on the first of a month in each site's zone: the whole months
  come from the tallies, and the few days between a period's end and the
  nearest month boundary from the rows, added or taken away (`Span`). Used
  when the tallies are complete and were counted in the server's current
  zone (`tallied`), else the rows answer.

Calendar days, weeks and months are those of the server's zone (TZ), the
heatmap's hours those of the incident's site (the server's zone for a site
without one). No statement converts zones row by row: bucket boundaries are
computed in Python as UTC instants, and local time is the UTC instant plus
the zone's offset at it, a CASE over the few changes of the period (see
sqltime)."""

from __future__ import annotations

import datetime as dt
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from itertools import pairwise
from typing import Any

from pyramid.request import Request
from sqlalchemy import Select, and_, case, func, literal, or_, select, union_all
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql import ColumnElement

from ehs_core.actions import server_zone, today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.incidents.models import Incident, IncidentType, Status
from ehs_core.incidents.resources import sees_everything, visible_incidents
from ehs_core.investigation.models import RootCause
from ehs_core.sites.models import Area, Site
from ehs_core.sites.zones import site_zone
from ehs_plugins.analytics import sqltime, tallies
from ehs_plugins.analytics.figures import InjuryFigures, Month
from ehs_plugins.analytics.models import CountedIncident, Tally, TallyState

# Queries that read actions name them through this alias: the visibility rule
# has a subquery on corrective_actions (actions assigned to a reporter), which
# must not be correlated with the actions being counted.
Action = aliased(CorrectiveAction)
WEEK = dt.timedelta(days=7)
DUE_SOON = dt.timedelta(days=7)
WEEKLY_UP_TO = dt.timedelta(days=92)  # about three months
DAY_MICROS = 86_400_000_000


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


def rounded(value: Any, places: str = "0.1") -> float | None:
    if value is None:
        return None
    return float(Decimal(str(value)).quantize(Decimal(places), ROUND_HALF_UP))


def average_days(close_micros: Any, closed: Any) -> float | None:
    """The average close time in days, to 0.1, of `closed` incidents that
    took `close_micros` microseconds in all (exact: whole microseconds)."""
    return rounded(Decimal(int(close_micros)) / (Decimal(int(closed)) * DAY_MICROS)) if closed else None


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


# --- the two sources ------------------------------------------------------------------------------


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

    def prefetch(self, periods: Sequence[tuple[dt.datetime, dt.datetime | None]]) -> None:
        """Read ahead what the periods' figures share (nothing, here)."""

    def groups(self, start: dt.datetime, end: dt.datetime, named: bool = True) -> list[tuple[Any, ...]]:
        """(type, site id, site name, area id, area name, incidents, close
        microseconds, closed incidents) per type and place of the period;
        names are joined to the groups, not to every row."""
        micros = sqltime.micros_between(Incident.closed_at, Incident.created_at, self.name)
        groups = self.scoped(select(
            Incident.type.label("type"), Incident.site_id.label("site_id"), Incident.area_id.label("area_id"),
            func.count().label("incidents"), func.sum(micros).label("close_micros"),
            func.count(Incident.closed_at).label("closed"))
            .group_by(Incident.type, Incident.site_id, Incident.area_id), *self.period(start, end)).subquery()
        return [tuple(row) for row in self.db.execute(
            select(groups.c.type, groups.c.site_id, Site.name, groups.c.area_id, Area.name,
                   groups.c.incidents, groups.c.close_micros, groups.c.closed)
            .select_from(groups).join(Site, Site.id == groups.c.site_id)
            .outerjoin(Area, Area.id == groups.c.area_id))]

    def trend(self, starts: Sequence[dt.datetime], end: dt.datetime) -> list[int]:
        """Incidents in each bucket [starts[i], starts[i + 1]) (the last up to `end`)."""
        bucket = sqltime.bucket_index(Incident.occurred_at, self.name, starts)
        counts = dict(self.db.execute(self.scoped(
            select(bucket.label("b"), func.count()).group_by("b"), *self.period(starts[0], end))).all())
        return [int(counts.get(i, 0)) for i in range(len(starts))]

    def by_severity(self, start: dt.datetime, end: dt.datetime) -> list[tuple[str, str, int]]:
        return [tuple(row) for row in self.db.execute(self.scoped(
            select(Incident.type, Incident.severity, func.count())
            .group_by(Incident.type, Incident.severity)
            .order_by(Incident.type, Incident.severity), *self.period(start, end)))]

    def heat(self, start: dt.datetime, end: dt.datetime) -> dict[int, int]:
        offset = site_offsets(self.request, self.zones, start, end)
        key = sqltime.hour_of_week(sqltime.epoch(Incident.occurred_at, self.name) + offset, self.name)
        return dict(self.db.execute(self.scoped(
            select(key.label("k"), func.count()).group_by("k"), *self.period(start, end))).all())

    def root_causes(self, start: dt.datetime, end: dt.datetime) -> list[tuple[str, int]]:
        return [tuple(row) for row in self.db.execute(self.scoped(
            select(RootCause.category, func.count())
            .select_from(RootCause).join(Incident, Incident.id == RootCause.incident_id)
            .group_by(RootCause.category).order_by(func.count().desc(), RootCause.category),
            *self.period(start, end)))]

    def actions(self, first: dt.date, after: dt.date) -> tuple[int, int, int]:
        """(on time, late, pending) of the actions due in [first, after), on
        incidents the caller may see (any occurrence date): on time when
        finished on or before the due date in the server's zone."""
        on_time, late, pending = action_classes(self.request, first, after)
        return tuple(self.db.execute(self.scoped(select(
            func.count(case((on_time, 1))), func.count(case((late, 1))), func.count(case((pending, 1))))
            .select_from(Action).join(Incident, Incident.id == Action.incident_id)
            .where(Action.due_date >= first, Action.due_date < after), *self.filters)).one())

    def cases(self, figures: InjuryFigures, start: dt.datetime, end: dt.datetime) -> tuple[int, int]:
        """(recordable cases, days away) of the incidents of the period."""
        found = figures.cases().subquery()
        recordable, days_away = self.db.execute(self.scoped(
            select(func.count(), func.coalesce(func.sum(found.c.days_away), 0))
            .select_from(found).join(Incident, Incident.id == found.c.incident_id),
            *self.period(start, end))).one()
        return int(recordable), int(days_away)

    def body_parts(self, figures: InjuryFigures, start: dt.datetime,
                   end: dt.datetime) -> list[tuple[str | None, int]]:
        """(code, injured or ill people) of the visible incidents of the
        period, per part of the body (None: not coded). Read from the rows
        for every caller: cases are few beside incidents, and the tallies
        keep no body part."""
        assert figures.body_parts is not None
        found = figures.body_parts().subquery()
        return [(code, int(count)) for code, count in self.db.execute(self.scoped(
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
        counts = self.db.execute(select(*columns).select_from(found)
                                 .join(Incident, Incident.id == found.c.incident_id).where(*where)).one()
        return [tuple(int(n) for n in counts[3 * i:3 * i + 3]) for i in range(len(windows))]

    # the overview

    def statuses(self) -> list[tuple[str, int, Any, int]]:
        """(status, incidents, close_micros, closed) of every incident."""
        micros = sqltime.micros_between(Incident.closed_at, Incident.created_at, self.name)
        return [tuple(row) for row in self.db.execute(self.scoped(
            select(Incident.status, func.count(), func.sum(micros), func.count(Incident.closed_at))
            .group_by(Incident.status)))]

    def actions_due(self, on: dt.date) -> tuple[int, int]:
        """(due within a week, overdue) of the pending actions."""
        return tuple(self.db.execute(self.scoped(select(
            func.count(case((and_(Action.due_date >= on, Action.due_date <= on + DUE_SOON), 1))),
            func.count(case((Action.due_date < on, 1))),
        ).select_from(Action).join(Incident, Incident.id == Action.incident_id)
            .where(Action.status.in_(PENDING)))).one())

    def by_site(self, start: dt.datetime) -> list[tuple[int, str, int]]:
        """(site id, name, incidents) per site of the incidents from `start`
        on, most first, then by name and id."""
        sites = self.scoped(select(Incident.site_id.label("site_id"), func.count().label("incidents"))
                            .group_by(Incident.site_id), *self.period(start, None)).subquery()
        return [(site_id, name, int(count)) for site_id, name, count in self.db.execute(
            select(Site.id, Site.name, sites.c.incidents)
            .select_from(sites).join(Site, Site.id == sites.c.site_id)
            .order_by(sites.c.incidents.desc(), Site.name, Site.id))]


WIDEST_OFFSET = dt.timedelta(hours=15)  # any zone's offset is within this of UTC


def _wall(month: Month) -> dt.datetime:
    """Midnight starting the month, as a wall-clock time written in UTC."""
    return dt.datetime(month[0], month[1], 1, tzinfo=dt.UTC)


def _next(month: Month) -> Month:
    return (month[0] + (month[1] == 12), month[1] % 12 + 1)


@dataclass(frozen=True)
class Piece:
    """Incidents of `sites` that occurred in [low, high), counted `sign` times."""

    sites: tuple[int, ...]
    low: Any
    high: Any
    sign: int

    def holds(self, site_id: int, instant: Any) -> bool:
        return site_id in self.sites and self.low <= instant < self.high


class Span:
    """A period [start, end) as whole tallied months and pieces of rows: for
    each zone, the months between the local month boundaries nearest to
    `start` and `end` (the tallies), plus the incidents between `end` and its
    boundary, minus those between `start` and its boundary (the rows; signs
    flip when a boundary lies beyond its end). `end` None: no end."""

    def __init__(self, groups: dict[dt.tzinfo, tuple[int, ...]], start: dt.datetime,
                 end: dt.datetime | None) -> None:
        self.months: list[tuple[dt.tzinfo, tuple[int, ...], int, int | None]] = []
        self.pieces: list[Piece] = []
        for zone, sites in groups.items():
            first = nearest_month(start, zone)
            last = nearest_month(end, zone) if end is not None else None
            if last is None or first < last:
                self.months.append((zone, sites, first, last))
            self.pieces.extend(between(sites, tallies.month_start(first, zone), start, -1))
            if end is not None:
                self.pieces.extend(between(sites, tallies.month_start(last, zone), end, 1))

    def tallied(self, kind: str, by_zone: bool = False) -> ColumnElement | None:
        """The condition on Tally rows of `kind` in the whole months, if any
        (of each zone's sites, or `by_zone`: of the rows kept per zone); for
        a kind kept per quarter and year, whole years and quarters come from
        those rows."""
        conditions = []
        for zone, sites, first, last in self.months:
            where = Tally.type == tallies.zone_key(zone) if by_zone else _among(Tally.site_id, sites)
            if last is None or kind not in tallies.ROLLED_UP:
                conditions.append(and_(Tally.kind == kind, where, Tally.month >= first,
                                       *([Tally.month < last] if last is not None else [])))
                continue
            for level, low, high in segments(first, last):
                conditions.append(and_(Tally.kind == kind + level, where,
                                       Tally.month >= low, Tally.month < high))
        return or_(*conditions) if conditions else None

    def weight(self, site_id: int, instant: Any) -> int:
        """How many times an incident of the pieces counts."""
        return sum(piece.sign for piece in self.pieces if piece.holds(site_id, instant))


def segments(first: int, last: int) -> list[tuple[str, int, int]]:
    """Months [first, last) as runs of whole years (".y"), quarters (".q")
    and months (""): (level, first month, after the last month)."""
    found: list[tuple[str, int, int]] = []
    month = first
    while month < last:
        if month % 12 == 0 and month + 12 <= last:
            level, step = ".y", 12
        elif month % 3 == 0 and month + 3 <= last:
            level, step = ".q", 3
        else:
            level, step = "", 1
        if found and found[-1][0] == level and found[-1][2] == month:
            found[-1] = (level, found[-1][1], month + step)
        else:
            found.append((level, month, month + step))
        month += step
    return found


def nearest_month(instant: dt.datetime, zone: dt.tzinfo) -> int:
    """The month whose start in `zone` is nearest to `instant`."""
    month = tallies.month_of(instant, zone)
    before, after = tallies.month_start(month, zone), tallies.month_start(month + 1, zone)
    return month if instant - before <= after - instant else month + 1


def between(sites: tuple[int, ...], boundary: Any, instant: Any, sign: int) -> list[Piece]:
    """The rows between a month boundary and a period's end or start,
    counted `sign` times if the end lies after the boundary, else -sign."""
    if instant == boundary:
        return []
    if instant > boundary:
        return [Piece(sites, boundary, instant, sign)]
    return [Piece(sites, instant, boundary, -sign)]


def merged(ranges: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Overlapping or touching [low, high) ranges joined."""
    joined: list[list[Any]] = []
    for low, high in sorted(ranges):
        if joined and low <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], high)
        else:
            joined.append([low, high])
    return [(low, high) for low, high in joined]


def _among(column: Any, sites: tuple[int, ...]) -> ColumnElement:
    return column == sites[0] if len(sites) == 1 else column.in_(sites)


def date_month_start(month: int) -> dt.date:
    return dt.date(month // 12, month % 12 + 1, 1)


def nearest_date_month(day: dt.date) -> int:
    month = tallies.date_month(day)
    return month if (day - date_month_start(month)) <= (date_month_start(month + 1) - day) else month + 1


Bucket = dict[Any, list[int]]


def fold(found: dict[str, Bucket], state: tallies.State, weight: int) -> None:
    """Add an incident's counted `state`, `weight` times, to the figures a
    period reads, each by the key its tallies are summed by (as `Tallied`
    reads them): count (type, site), site (site,), place (type, site, area), severity
    (type, severity), heat (hour of the week,), cause (category,), case ()."""
    site, kind, micros, closed = state["s"], state["t"], state["cu"], state["c"]
    for figure, key, values in (
            ("count", (kind, site), (1, micros, closed)),
            ("site", (site,), (1, 0, 0)),
            ("place", (kind, site, state["a"]), (1, micros, closed)),
            ("severity", (kind, state["v"]), (1, 0, 0)),
            ("heat", (state["h"],), (1, 0, 0)),
            *(("cause", (category,), (n, 0, 0)) for category, n in state.get("rc", {}).items()),
            *(("case", (), (n, days, 0)) for _, n, days in state.get("cs", []))):
        bucket = found[figure]
        item = bucket.get(key)
        if item is None:
            bucket[key] = [weight * values[0], weight * values[1], weight * values[2]]
        else:
            item[0] += weight * values[0]
            item[1] += weight * values[1]
            item[2] += weight * values[2]


def add_to(found: Bucket, key: Any, values: Sequence[Any], sign: int = 1) -> None:
    item = found.setdefault(key, [0, 0, 0])
    for i, value in enumerate(values):
        item[i] += sign * int(value or 0)


class Tallied(Rows):
    """The same figures from the tallies, for a caller who sees every
    incident: the whole months of a period from the tallies, the incidents
    near its ends (`Span.pieces`) from their counted state
    (`analytics_counted`), read once for all the figures of a request
    (`prefetch`)."""

    def __init__(self, request: Request, site_id: int | None, incident_type: str | None,
                 sites: Sequence[tuple[int, str, str | None]]) -> None:
        super().__init__(request, site_id, incident_type, {s_id: zone for s_id, _, zone in sites})
        self.organization_id = request.identity.account.organization_id
        self.incident_type = incident_type
        self.names = {s_id: name for s_id, name, _ in sites}
        self.rank = {s_id: i for i, (s_id, _, _) in enumerate(sites)}  # by name, then id
        groups: dict[dt.tzinfo, list[int]] = defaultdict(list)
        for s_id, zone in sorted(self.zones.items()):
            groups[site_zone(zone, request.registry)].append(s_id)
        self.zone_groups = {zone: tuple(ids) for zone, ids in groups.items()}
        self.pieces: dict[tuple[dt.datetime, dt.datetime | None], tallies.Sums] = {}

    def tally(self, kind: str | None, *columns: Any) -> Select:
        """A statement on the organization's tallies of `kind` (None: the
        condition names the kinds), of the site and type asked for."""
        stmt = select(*columns).where(Tally.organization_id == self.organization_id)
        if kind is not None:
            stmt = stmt.where(Tally.kind == kind)
        if self.site_id is not None:
            stmt = stmt.where(Tally.site_id == self.site_id)
        if self.incident_type is not None:
            stmt = stmt.where(Tally.type == self.incident_type)
        return stmt

    def span(self, start: dt.datetime, end: dt.datetime | None) -> Span:
        return Span(self.zone_groups, start, end)

    def prefetch(self, periods: Sequence[tuple[dt.datetime, dt.datetime | None]]) -> None:
        """The signed contributions of the incidents in the periods' pieces,
        from one statement for all of them."""
        spans = {period: self.span(*period) for period in periods if period not in self.pieces}
        if not spans:
            return
        ranges = merged([(piece.low, piece.high) for span in spans.values() for piece in span.pieces])
        rows = []
        if ranges:
            rows = self.db.execute(
                select(Incident.site_id, Incident.occurred_at, CountedIncident.state)
                .join(CountedIncident, CountedIncident.incident_id == Incident.id)
                .where(Incident.organization_id == self.organization_id, *self.filters,
                       or_(*(and_(Incident.occurred_at >= low, Incident.occurred_at < high)
                             for low, high in ranges)))).all()
        for period, span in spans.items():
            found: dict[str, Bucket] = defaultdict(dict)
            for site_id, occurred_at, state in rows:
                weight = span.weight(site_id, occurred_at)
                if weight:
                    fold(found, state, weight)
            self.pieces[period] = found

    def pieces_of(self, start: dt.datetime, end: dt.datetime | None, kind: str) -> Bucket:
        """The pieces' contributions to the figure `kind`, by its key (see `fold`)."""
        self.prefetch([(start, end)])
        return self.pieces[(start, end)].get(kind, {})

    def summed(self, start: dt.datetime, end: dt.datetime | None, kind: str, keys: Sequence[Any],
               values: int = 1, by_zone: bool = False, figure: str | None = None) -> Bucket:
        """Tally rows of the span's months summed by `keys` (columns of
        Tally), plus the pieces' contributions to the same figure (`figure`,
        by default the kind's; see `fold`)."""
        found: Bucket = {}
        months = self.span(start, end).tallied(kind, by_zone)
        if months is not None:
            sums = [func.sum(Tally.n), func.sum(Tally.total), func.sum(Tally.closed)][:values]
            for row in self.db.execute(self.tally(None, *keys, *sums).where(months).group_by(*keys)):
                add_to(found, tuple(row[:len(keys)]), row[len(keys):])
        for key, item in self.pieces_of(start, end, figure or kind.removesuffix("z")).items():
            add_to(found, key, item[:values])
        return {key: item for key, item in found.items() if item[0]}

    def groups(self, start: dt.datetime, end: dt.datetime, named: bool = True) -> list[tuple[Any, ...]]:
        if not named:  # counts by type and close times only (fewer rows to read)
            found = {(kind, site_id, 0): item for (kind, site_id), item in self.summed(
                start, end, "count", (Tally.type, Tally.site_id), values=3).items()}
        else:
            found = self.summed(start, end, "place", (Tally.type, Tally.site_id, Tally.k2), values=3)
        areas: dict[int, str] = {}
        wanted = {area for (_, _, area) in found if area}
        if named and wanted:
            areas = dict(self.db.execute(select(Area.id, Area.name).where(Area.id.in_(sorted(wanted)))).all())
        return [(kind, site_id, self.names.get(site_id), area or None, areas.get(area), n, total, closed)
                for (kind, site_id, area), (n, total, closed) in found.items()]

    def trend(self, starts: Sequence[dt.datetime], end: dt.datetime) -> list[int]:
        """Monthly buckets: F(s) = incidents before s, the tallied months
        before the month boundary nearest to s, plus or minus the incidents
        between s and that boundary (a few hours in a zone other than the
        server's); a bucket's count is F(its end) - F(its start). Shorter
        buckets are counted from the rows."""
        bounds = [*starts, end]
        inner = list(pairwise(bounds[1:-1]))  # the buckets but the first and last
        if len(starts) < 3 or any(later - earlier < dt.timedelta(days=28) for earlier, later in inner):
            return super().trend(starts, end)
        nearest = {zone: [nearest_month(bound, zone) for bound in bounds] for zone in self.zone_groups}
        before = [0] * len(bounds)
        if nearest:
            low = min(months[0] for months in nearest.values())
            high = max(months[-1] for months in nearest.values())
            per_month = [(site, month, int(n)) for site, month, n in self.db.execute(
                self.tally("count", Tally.site_id, Tally.month, func.sum(Tally.n))
                .where(Tally.month >= low, Tally.month < high).group_by(Tally.site_id, Tally.month))]
            site_zone_of = {site: zone for zone, sites in self.zone_groups.items() for site in sites}
            for site, month, n in per_month:
                zone = site_zone_of.get(site)
                if zone is not None:
                    for i, boundary in enumerate(nearest[zone]):
                        if month < boundary:
                            before[i] += n
        pieces = [[piece for zone, sites in self.zone_groups.items()
                   for piece in between(sites, tallies.month_start(nearest[zone][i], zone), bound, 1)]
                  for i, bound in enumerate(bounds)]
        ranges = merged([(piece.low, piece.high) for found in pieces for piece in found])
        if ranges:
            instants: dict[int, list[dt.datetime]] = defaultdict(list)
            for site_id, occurred_at in self.db.execute(
                    select(Incident.site_id, Incident.occurred_at)
                    .where(Incident.organization_id == self.organization_id, *self.filters,
                           or_(*(and_(Incident.occurred_at >= low, Incident.occurred_at < high)
                                 for low, high in ranges)))):
                instants[site_id].append(occurred_at)
            for found in instants.values():
                found.sort()
            for i, found in enumerate(pieces):
                before[i] += sum(piece.sign * (bisect_left(instants[site], piece.high)
                                               - bisect_left(instants[site], piece.low))
                                 for piece in found for site in piece.sites if site in instants)
        return [before[i + 1] - before[i] for i in range(len(starts))]

    def by_severity(self, start: dt.datetime, end: dt.datetime) -> list[tuple[str, str, int]]:
        found = self.summed(start, end, "severity", (Tally.type, Tally.k1))
        return sorted((kind, severity, item[0]) for (kind, severity), item in found.items())

    def heat(self, start: dt.datetime, end: dt.datetime) -> dict[int, int]:
        # Without filters, the rows kept per zone (a few per hour of the week).
        by_zone = self.site_id is None and self.incident_type is None
        found = self.summed(start, end, "heatz" if by_zone else "heat", (Tally.k2,),
                            by_zone=by_zone)
        return {how: item[0] for (how,), item in found.items()}

    def root_causes(self, start: dt.datetime, end: dt.datetime) -> list[tuple[str, int]]:
        by_zone = self.site_id is None and self.incident_type is None
        found = self.summed(start, end, "causez" if by_zone else "cause", (Tally.k1,),
                            by_zone=by_zone)
        return sorted(((category, item[0]) for (category,), item in found.items()),
                      key=lambda item: (-item[1], item[0]))

    def cases(self, figures: InjuryFigures, start: dt.datetime, end: dt.datetime) -> tuple[int, int]:
        found = self.summed(start, end, "case", (), values=2)
        recordable, days, _ = found.get((), [0, 0, 0])
        return recordable, days

    def case_counts(self, figures: InjuryFigures,
                    windows: list[tuple[Month, Month]]) -> list[tuple[int, int, int]]:
        """Whole months of each site's calendar are the tallies' months."""
        def index(month: Month) -> int:
            return month[0] * 12 + month[1] - 1

        low = min(index(first) for first, _ in windows)
        high = max(index(last) for _, last in windows)
        stmt = (select(Tally.month, Tally.k2, func.sum(Tally.n))
                .where(Tally.organization_id == self.organization_id, Tally.kind == "case",
                       Tally.month >= low, Tally.month <= high).group_by(Tally.month, Tally.k2))
        if self.site_id is not None:
            stmt = stmt.where(Tally.site_id == self.site_id)
        rows = [(month, flags, int(n)) for month, flags, n in self.db.execute(stmt)]
        counts = []
        for first, last in windows:
            inside = [(flags, n) for month, flags, n in rows if index(first) <= month <= index(last)]
            counts.append((sum(n for _, n in inside), sum(n for flags, n in inside if flags & 1),
                           sum(n for flags, n in inside if flags & 2)))
        return counts

    def actions(self, first: dt.date, after: dt.date) -> tuple[int, int, int]:
        """Tallied by the calendar month of the due date: whole months from
        the tallies, the days between `first`, `after` and the nearest first
        of a month from the rows. Pending actions are kept with their due
        day, late or not is decided today."""
        low, high = nearest_date_month(first), nearest_date_month(after)
        on = today(self.request.registry)
        this_month = tallies.date_month(on)
        before_today = or_(Tally.month < this_month, and_(Tally.month == this_month, Tally.k2 < on.day))
        parts = []
        if low < high:
            parts.append(self.tally(
                "action", case((Tally.k1 == "on_time", Tally.n), else_=0).label("on_time"),
                case((or_(Tally.k1 == "late", and_(Tally.k1 == "pending", before_today)), Tally.n),
                     else_=0).label("late"),
                case((and_(Tally.k1 == "pending", ~before_today), Tally.n), else_=0).label("pending"))
                .where(Tally.month >= low, Tally.month < high))
        pieces = [*between((), date_month_start(low), first, -1),
                  *between((), date_month_start(high), after, 1)]
        if pieces:
            on_time, late, pending = action_classes(
                self.request, min(piece.low for piece in pieces), max(piece.high for piece in pieces))
            inside = [and_(Action.due_date >= piece.low, Action.due_date < piece.high) for piece in pieces]
            weight = sum((case((condition, piece.sign), else_=0)
                          for condition, piece in zip(inside, pieces, strict=True)),
                         start=literal(0))
            parts.append(
                select(case((on_time, weight), else_=0).label("on_time"),
                       case((late, weight), else_=0).label("late"),
                       case((pending, weight), else_=0).label("pending"))
                .select_from(Action).join(Incident, Incident.id == Action.incident_id)
                .where(Incident.organization_id == self.organization_id, or_(*inside), *self.filters))
        if not parts:
            return 0, 0, 0
        found = (parts[0] if len(parts) == 1 else union_all(*parts)).subquery()
        return tuple(int(value) for value in self.db.execute(select(
            func.coalesce(func.sum(found.c.on_time), 0), func.coalesce(func.sum(found.c.late), 0),
            func.coalesce(func.sum(found.c.pending), 0))).one())

    # the overview

    def statuses(self) -> list[tuple[str, int, Any, int]]:
        return [(status, int(n), total, int(closed)) for status, n, total, closed in self.db.execute(
            self.tally("status", Tally.k1, func.sum(Tally.n), func.sum(Tally.total), func.sum(Tally.closed))
            .group_by(Tally.k1))]

    def actions_due(self, on: dt.date) -> tuple[int, int]:
        def due_before(day: dt.date) -> ColumnElement:
            month = tallies.date_month(day)
            return or_(Tally.month < month, and_(Tally.month == month, Tally.k2 < day.day))

        soon = and_(~due_before(on), due_before(on + DUE_SOON + dt.timedelta(days=1)))
        due, overdue = self.db.execute(self.tally(
            "action", func.coalesce(func.sum(case((soon, Tally.n), else_=0)), 0),
            func.coalesce(func.sum(case((due_before(on), Tally.n), else_=0)), 0))
            .where(Tally.k1 == "pending")).one()
        return int(due), int(overdue)

    def by_site(self, start: dt.datetime) -> list[tuple[int, str, int]]:
        found = self.summed(start, None, "count", (Tally.site_id,), figure="site")
        return [(site_id, self.names.get(site_id), item[0]) for (site_id,), item in sorted(
            found.items(), key=lambda entry: (-entry[1][0], self.rank.get(entry[0][0], 0), entry[0][0]))]


def figures_for(request: Request, site_id: int | None = None, incident_type: str | None = None) -> Rows:
    """The source of a request's figures: the tallies for a caller who sees
    every incident when they are complete and counted in the server's
    current zone (see TallyState), else the rows."""
    if sees_everything(request.identity):
        rows = request.dbsession.execute(
            select(TallyState.server_zone, Site.id, Site.name, Site.timezone).select_from(TallyState)
            .outerjoin(Site, and_(Site.organization_id == TallyState.organization_id,
                                  *([Site.id == site_id] if site_id is not None else [])))
            .where(TallyState.organization_id == request.identity.account.organization_id)
            .order_by(Site.name, Site.id)).all()
        if rows and rows[0].server_zone == tallies.zone_key(server_zone(request.registry)):
            sites = [(row.id, row.name, row.timezone) for row in rows if row.id is not None]
            return Tallied(request, site_id, incident_type, sites)
    return Rows(request, site_id, incident_type)


# --- the answers --------------------------------------------------------------------------------


def overview(request: Request) -> dict[str, Any]:
    source = figures_for(request)

    # Counts per status and the close times (only closed incidents have closed_at).
    status_counts = dict.fromkeys((s.value for s in Status), 0)
    close_micros, closed = 0, 0
    for status, count, total, with_close in source.statuses():
        status_counts[status] += int(count)
        if with_close:
            close_micros += int(total)
            closed += int(with_close)

    on = today(request.registry)
    due, overdue = source.actions_due(on)

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
    return {
        "openIncidents": sum(v for k, v in status_counts.items() if k != Status.closed),
        "actionsDue": due,
        "actionsOverdue": overdue,
        "averageCloseDays": average_days(close_micros, closed),
        "statusCounts": status_counts,
        "weeklyTrend": trend,
        "incidentsBySite": by_site,
    }


TYPES = (IncidentType.near_miss, IncidentType.hazard, IncidentType.injury, IncidentType.illness)


Place = tuple[int, str, int | None, str | None]  # site id and name, area id and name


def period_figures(request: Request, source: Rows, first: dt.date, after: dt.date,
                   cases: InjuryFigures | None,
                   places_too: bool = True) -> tuple[dict[str, Any], dict[Place, int]]:
    """The KPIs of the calendar days [first, after) in the server's zone, and
    the incident count per place (read in the same pass; named if `places_too`)."""
    zone = server_zone(request.registry)
    start, end = utc_start(first, zone), utc_start(after, zone)
    # Counts by type, by place and the close times in one pass over the
    # period: at most types x areas groups, added up here.
    counts: dict[str, int] = {}
    places: dict[Place, int] = {}
    close_micros, closed = 0, 0
    for kind, *place, count, total, with_close in source.groups(start, end, named=places_too):
        counts[kind] = counts.get(kind, 0) + int(count)
        places[tuple(place)] = places.get(tuple(place), 0) + int(count)
        if with_close:
            close_micros += int(total)
            closed += int(with_close)
    on_time, late, pending = source.actions(first, after)
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
    if cases is not None:
        recordable, days_away = source.cases(cases, start, end)
        figures["recordableCases"] = recordable
        figures["daysAway"] = days_away
    return figures, places


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
    current, places = period_figures(request, source, first, after, cases)
    previous, _ = period_figures(request, source, previous_first, first, cases, places_too=False)

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
