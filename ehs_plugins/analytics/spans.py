"""A period as whole tallied months and pieces of rows (`Span`): the
tallies count local months of each site's zone (models.Tally), a period
rarely starts and ends on the first of a month, so the whole months come
from the tallies and the few days between a period's end and the nearest
month boundary from the rows, added or taken away."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_
from sqlalchemy.sql import ColumnElement

from ehs_plugins.analytics.counted_state import ROLLED_UP
from ehs_plugins.analytics.models import Tally
from ehs_plugins.analytics.months import month_of, month_start, zone_key


@dataclass(frozen=True)
class Piece:
    """Incidents of `sites` that occurred in [low, high), counted `sign` times."""

    sites: tuple[int, ...]
    low: Any
    high: Any
    sign: int


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
            self.pieces.extend(between(sites, month_start(first, zone), start, -1))
            if end is not None:
                self.pieces.extend(between(sites, month_start(last, zone), end, 1))
        self.of_site: dict[int, list[Piece]] = defaultdict(list)
        for piece in self.pieces:
            for site in piece.sites:
                self.of_site[site].append(piece)

    def tallied(self, kind: str, by_zone: bool = False) -> ColumnElement | None:
        """The condition on Tally rows of `kind` in the whole months, if any
        (of each zone's sites, or `by_zone`: of the rows kept per zone); for
        a kind kept per quarter and year, whole years and quarters come from
        those rows. Zones whose whole months are the same (most often all of
        them) share one condition, so each range of months is read once."""
        together: dict[tuple[int, int | None], list[Any]] = defaultdict(list)
        for zone, sites, first, last in self.months:
            together[(first, last)].extend([zone_key(zone)] if by_zone else sites)
        conditions = []
        for (first, last), members in together.items():
            where = _among(Tally.type if by_zone else Tally.site_id, tuple(sorted(members)))
            if last is None or kind not in ROLLED_UP:
                conditions.append(and_(Tally.kind == kind, where, Tally.month >= first,
                                       *([Tally.month < last] if last is not None else [])))
                continue
            for level, low, high in segments(first, last):
                conditions.append(and_(Tally.kind == kind + level, where,
                                       Tally.month >= low, Tally.month < high))
        return or_(*conditions) if conditions else None

    def weight(self, site_id: int, instant: Any) -> int:
        """How many times an incident of the pieces counts."""
        return sum(piece.sign for piece in self.of_site.get(site_id, ()) if piece.low <= instant < piece.high)


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
    month = month_of(instant, zone)
    before, after = month_start(month, zone), month_start(month + 1, zone)
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


def _among(column: Any, values: tuple[Any, ...]) -> ColumnElement:
    return column == values[0] if len(values) == 1 else column.in_(values)
