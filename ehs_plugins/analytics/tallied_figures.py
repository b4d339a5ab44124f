"""The figures of `row_figures.Rows` from the tallies (`Tallied`), for a
caller who sees every incident: the sums kept per site, type and local
month (`tallies`, models.Tally), so a figure reads a few thousand rows
however many incidents there are. The whole months of a period come from
the tallies, the incidents near its ends (`spans.Span.pieces`) from their
counted state (`analytics_counted`), read once for all the figures of a
request (`prefetch`)."""

from __future__ import annotations

import datetime as dt
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from pyramid.request import Request
from sqlalchemy import Select, and_, case, func, or_, select
from sqlalchemy.sql import ColumnElement

from ehs_core.actions import today
from ehs_core.incidents.models import Incident
from ehs_core.sites.services import site_index
from ehs_core.sites.zones import site_zone
from ehs_plugins.analytics.counted_state import UNCODED, State
from ehs_plugins.analytics.figures import InjuryFigures, Month
from ehs_plugins.analytics.models import CountedIncident, Tally
from ehs_plugins.analytics.months import date_month, month_start
from ehs_plugins.analytics.row_figures import DUE_SOON, Rows
from ehs_plugins.analytics.spans import (
    Span,
    between,
    merged,
    nearest_month,
)

Bucket = dict[Any, list[int]]


def fold(found: dict[str, Bucket], state: State, weight: int) -> None:
    """Add an incident's counted `state`, `weight` times, to the figures a
    period reads, each by the key its tallies are summed by (as `Tallied`
    reads them): site (site,), place (type, site, area), severity
    (type, severity), heat (hour of the week,), cause (category,), case (),
    body (part of the body,)."""
    site, kind, micros, closed = state["s"], state["t"], state["cu"], state["c"]
    for figure, key, values in (
            ("site", (site,), (1, 0, 0)),
            ("place", (kind, site, state["a"]), (1, micros, closed)),
            ("severity", (kind, state["v"]), (1, 0, 0)),
            ("heat", (state["h"],), (1, 0, 0)),
            *(("cause", (category,), (n, 0, 0)) for category, n in state.get("rc", {}).items()),
            *(("case", (), (n, days, 0)) for _, n, days in state.get("cs", [])),
            *(("body", (UNCODED if code is None else code,), (n, 0, 0)) for code, n in state.get("bp", []))):
        bucket = found[figure]
        item = bucket.get(key)
        if item is None:
            bucket[key] = [weight * values[0], weight * values[1], weight * values[2]]
        else:
            item[0] += weight * values[0]
            item[1] += weight * values[1]
            item[2] += weight * values[2]


def due_before(day: dt.date) -> ColumnElement:
    """Of the action tallies that keep the due day (`action.d`, and pending
    ones of `action`): those of actions due before `day`."""
    month = date_month(day)
    return or_(Tally.month < month, and_(Tally.month == month, Tally.k2 < day.day))


def due_in(first: dt.date, after: dt.date) -> ColumnElement | None:
    """The action tallies of the actions due in [first, after): whole months
    from `action`, the days of a first or last month not whole from
    `action.d` (models.Tally)."""
    low, high = date_month(first), date_month(after)
    if low == high:
        return and_(Tally.kind == "action.d", Tally.month == low, Tally.k2 >= first.day, Tally.k2 < after.day)
    parts = []
    if first.day != 1:
        parts.append(and_(Tally.kind == "action.d", Tally.month == low, Tally.k2 >= first.day))
    whole_from = low if first.day == 1 else low + 1
    if whole_from < high:
        parts.append(and_(Tally.kind == "action", Tally.month >= whole_from, Tally.month < high))
    if after.day != 1:
        parts.append(and_(Tally.kind == "action.d", Tally.month == high, Tally.k2 < after.day))
    return or_(*parts) if parts else None


def add_to(found: Bucket, key: Any, values: Sequence[Any]) -> None:
    item = found.setdefault(key, [0, 0, 0])
    for i, value in enumerate(values):
        item[i] += int(value or 0)


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
        self.spans: dict[tuple[dt.datetime, dt.datetime | None], Span] = {}
        self.pieces: dict[tuple[dt.datetime, dt.datetime | None], dict[str, Bucket]] = {}

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
        """The period as tallied months and pieces, worked out once per request."""
        found = self.spans.get((start, end))
        if found is None:
            found = self.spans[(start, end)] = Span(self.zone_groups, start, end)
        return found

    def prefetch(self, periods: Sequence[tuple[dt.datetime, dt.datetime | None]]) -> None:
        """The signed contributions of the incidents in the periods' pieces,
        from one statement for all of them."""
        spans = {period: self.span(*period) for period in periods if period not in self.pieces}
        if not spans:
            return
        ranges = merged([(piece.low, piece.high) for span in spans.values() for piece in span.pieces])
        rows = []
        if ranges:
            rows = self.read(
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
        return self.summed_each([(start, end)], kind, keys, values, by_zone, figure)[0]

    def summed_each(self, periods: Sequence[tuple[dt.datetime, dt.datetime | None]], kind: str,
                    keys: Sequence[Any], values: int = 1, by_zone: bool = False,
                    figure: str | None = None) -> list[Bucket]:
        """`summed` of each of periods that do not overlap (the analytics'
        period and the one before), from one statement: each tally row
        falls in the months of one period at most."""
        found: list[Bucket] = [{} for _ in periods]
        months = [(i, condition) for i, period in enumerate(periods)
                  if (condition := self.span(*period).tallied(kind, by_zone)) is not None]
        if months:
            which = case(*((condition, i) for i, condition in months)).label("which")
            sums = [func.sum(Tally.n), func.sum(Tally.total), func.sum(Tally.closed)][:values]
            for row in self.read(self.tally(None, which, *keys, *sums)
                                 .where(or_(*(condition for _, condition in months)))
                                 .group_by(which, *keys)):
                add_to(found[row[0]], tuple(row[1:1 + len(keys)]), row[1 + len(keys):])
        for bucket, (start, end) in zip(found, periods, strict=True):
            for key, item in self.pieces_of(start, end, figure or kind.removesuffix("z")).items():
                add_to(bucket, key, item[:values])
        return [{key: item for key, item in bucket.items() if item[0]} for bucket in found]

    def groups_each(self, periods: Sequence[tuple[dt.datetime, dt.datetime]]) -> list[list[tuple[Any, ...]]]:
        """`groups` of each of periods that do not overlap, from one statement
        (`summed_each`); the area names from the reference data each worker
        keeps (`site_index`)."""
        areas = site_index(self.request)["area"]
        counted = self.summed_each(periods, "place", (Tally.type, Tally.site_id, Tally.k2), values=3)
        return [[(kind, site_id, self.names.get(site_id), area or None,
                  areas[area]["name"] if area in areas else None, n, total, closed)
                 for (kind, site_id, area), (n, total, closed) in found.items()]
                for found in counted]

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
            per_month = [(site, month, int(n)) for site, month, n in self.read(
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
                   for piece in between(sites, month_start(nearest[zone][i], zone), bound, 1)]
                  for i, bound in enumerate(bounds)]
        ranges = merged([(piece.low, piece.high) for found in pieces for piece in found])
        if ranges:
            instants: dict[int, list[dt.datetime]] = defaultdict(list)
            for site_id, occurred_at in self.read(
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

    def cases_each(self, figures: InjuryFigures,
                   periods: Sequence[tuple[dt.datetime, dt.datetime]]) -> list[tuple[int, int]]:
        counted = self.summed_each(periods, "case", (), values=2)
        return [(found.get((), [0, 0])[0], found.get((), [0, 0])[1]) for found in counted]

    def body_parts(self, figures: InjuryFigures, start: dt.datetime,
                   end: dt.datetime) -> list[tuple[str | None, int]]:
        found = self.summed(start, end, "body", (Tally.k1,))
        return [(None if code == UNCODED else code, item[0]) for (code,), item in found.items()]

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
        rows = [(month, flags, int(n)) for month, flags, n in self.read(stmt)]
        counts = []
        for first, last in windows:
            inside = [(flags, n) for month, flags, n in rows if index(first) <= month <= index(last)]
            counts.append((sum(n for _, n in inside), sum(n for flags, n in inside if flags & 1),
                           sum(n for flags, n in inside if flags & 2)))
        return counts

    def actions_each(self, periods: Sequence[tuple[dt.date, dt.date]]) -> list[tuple[int, int, int]]:
        """The actions due in each period [first, after) are whole tally rows
        (`due_in`), read in one statement for periods that do not overlap.
        Pending actions are late or not as of today."""
        overdue = due_before(today(self.request.registry))
        found = [(0, 0, 0)] * len(periods)
        rows = [(i, condition) for i, (first, after) in enumerate(periods)
                if (condition := due_in(first, after)) is not None]
        if not rows:
            return found
        which = case(*((condition, i) for i, condition in rows)).label("which")
        for i, *counts in self.read(self.tally(
                None, which, *(func.sum(case((counted, Tally.n), else_=0)) for counted in (
                    Tally.k1 == "on_time",
                    or_(Tally.k1 == "late", and_(Tally.k1 == "pending", overdue)),
                    and_(Tally.k1 == "pending", ~overdue))))
                .where(or_(*(condition for _, condition in rows))).group_by(which)):
            found[i] = tuple(int(count) for count in counts)
        return found

    # the overview

    def statuses(self) -> list[tuple[str, int, Any, int]]:
        return [(status, int(n), total, int(closed)) for status, n, total, closed in self.read(
            self.tally("status", Tally.k1, func.sum(Tally.n), func.sum(Tally.total), func.sum(Tally.closed))
            .group_by(Tally.k1))]

    def actions_due(self, on: dt.date) -> tuple[int, int]:
        after_soon = on + DUE_SOON + dt.timedelta(days=1)
        overdue = due_before(on)
        sums = [func.coalesce(func.sum(case((counted, Tally.n), else_=0)), 0)
                for counted in (~overdue, overdue)]
        due, late = self.read(self.tally("action", *sums).where(
            Tally.k1 == "pending", Tally.month <= date_month(after_soon), due_before(after_soon))).one()
        return int(due), int(late)

    def by_site(self, start: dt.datetime) -> list[tuple[int, str, int]]:
        found = self.summed(start, None, "count", (Tally.site_id,), figure="site")
        return [(site_id, self.names.get(site_id), item[0]) for (site_id,), item in sorted(
            found.items(), key=lambda entry: (-entry[1][0], self.rank.get(entry[0][0], 0), entry[0][0]))]
