"""Date arithmetic inside SQL, for PostgreSQL and SQLite alike, so that
statistics group rows in the database instead of in Python.

Nothing here converts time zones row by row. Local time is UTC plus an
offset, and a zone's offset only changes at a few known instants, so Python
works out the offsets of a period from the zone data (zoneinfo) and hands
them to SQL as a CASE over the UTC column (`offset_spans`, `offset_case`).
No row is converted with PostgreSQL's `timezone(zone, column)`, and SQLite,
which has no zone data, gets the same real IANA zones."""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import BigInteger, Date, DateTime, Float, Integer, bindparam, case, cast, func, literal
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql import ColumnElement, literal_column

DAY = dt.timedelta(days=1)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# Whole weeks of hours added before taking an hour's place in the week, so
# the dividend is positive for any date from year 1 (`/` and `%` truncate
# towards zero in SQL); 1970-01-01 00:00 UTC was a Thursday, 72 hours after
# Monday 00:00, so this also makes Monday 00:00 hour 0 of the week.
WEEK_SHIFT_HOURS = 72 + 168 * 120_000


def utc_offset(zone: dt.tzinfo, instant: dt.datetime) -> int:
    """The UTC offset of `zone` at an (aware) instant, in seconds."""
    offset = instant.astimezone(zone).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def _at(seconds: int) -> dt.datetime:
    return EPOCH + dt.timedelta(seconds=seconds)


@functools.lru_cache(maxsize=256)
def offset_spans(zone: dt.tzinfo, start: dt.datetime,
                 end: dt.datetime) -> tuple[tuple[dt.datetime | None, int], ...]:
    """The offsets of `zone` over the UTC interval [start, end), as
    ((until, offset_seconds), …): `offset` holds from the previous span's
    `until` (or before `start`) up to `until` (exclusive); the last span's
    `until` is None (and it holds on after `end`). Found by stepping a day at
    a time and bisecting to the second where the offset changes, so two
    changes within one day (no zone has them) would be missed."""
    spans: list[tuple[dt.datetime | None, int]] = []
    moment, last = math.floor(start.timestamp()), math.ceil(end.timestamp())
    offset = utc_offset(zone, _at(moment))
    while moment < last:
        step = min(moment + 86400, last)
        if utc_offset(zone, _at(step)) == offset:
            moment = step
            continue
        low, high = moment, step  # `offset` at low, another one at high
        while high - low > 1:
            middle = (low + high) // 2
            if utc_offset(zone, _at(middle)) == offset:
                low = middle
            else:
                high = middle
        spans.append((_at(high), offset))
        offset = utc_offset(zone, _at(high))
        moment = high
    spans.append((None, offset))
    return tuple(spans)


def _midnight(day: dt.date, zone: dt.tzinfo) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), zone).astimezone(dt.UTC)


@functools.lru_cache(maxsize=256)
def day_end_spans(zone: dt.tzinfo, first: dt.date, last: dt.date) -> tuple[tuple[dt.date | None, int], ...]:
    """For the dates d in [first, last): when the calendar day d ends in
    `zone` (the first instant of d + 1 there), as the seconds S in
    end = (days from 1970-01-01 to d + 1) x 86400 - S, which is the zone's
    offset at that midnight. Spans as in `offset_spans`, keyed by dates: S
    holds for the dates before `until`."""
    def shift(day: dt.date) -> int:
        following = day + DAY
        return (following - EPOCH.date()).days * 86400 - round(_midnight(following, zone).timestamp())

    # The shift only changes for dates next to a change of the zone's offset.
    candidates = set()
    changes = offset_spans(zone, _midnight(first, zone) - 2 * DAY, _midnight(last, zone) + 2 * DAY)[:-1]
    for until, _ in changes:
        assert until is not None
        candidates.update(until.date() + k * DAY for k in range(-2, 3))
    spans: list[tuple[dt.date | None, int]] = []
    current = shift(first)
    for day in sorted(d for d in candidates if first < d < last):
        value = shift(day)
        if value != current:
            spans.append((day, current))
            current = value
    spans.append((None, current))
    return tuple(spans)


def offset_case(column: Any, spans: Sequence[tuple[Any, int]]) -> ColumnElement:
    """The offset (seconds) of a zone at the instant in `column`, from its
    `offset_spans` (or, for a date column, spans keyed by dates): a plain
    number without transitions, else
    CASE WHEN column < t1 THEN o0 WHEN column < t2 THEN o1 … ELSE oN END."""
    if len(spans) == 1:
        return literal(spans[0][1], Integer)
    return case(*((column < until, literal(offset, Integer)) for until, offset in spans[:-1]),
                else_=literal(spans[-1][1], Integer))


def epoch(column: Any, dialect: str) -> ColumnElement:
    """Seconds since 1970 of a UTC timestamp column. On PostgreSQL a double
    (date_part, not EXTRACT's numeric; exact to the microsecond for dates
    before about 2250), on SQLite whole seconds."""
    if dialect == "postgresql":
        return func.date_part(literal_column("'epoch'"), column, type_=Float)
    return cast(func.strftime("%s", column), Integer)


def epoch_days(column: Any, dialect: str) -> ColumnElement:
    """Days since 1970-01-01 of a DATE column, as a (64-bit) integer."""
    if dialect == "postgresql":
        return cast(column - literal(dt.date(1970, 1, 1), Date), BigInteger)
    return cast(func.julianday(column) - 2440587.5, BigInteger)


def hour_of_week(local_seconds: Any, dialect: str) -> ColumnElement:
    """Monday 00:00-00:59 = 0 … Sunday 23:00-23:59 = 167, of a local
    wall-clock time given as seconds since 1970-01-01 00:00 (UTC seconds plus
    the zone's offset)."""
    if dialect == "postgresql":  # a double: floor, then whole hours
        hours = cast(func.floor(local_seconds / 3600), BigInteger)
        return cast((hours + WEEK_SHIFT_HOURS) % 168, Integer)
    # whole seconds: integer division is floor division once positive
    return cast((local_seconds + WEEK_SHIFT_HOURS * 3600) // 3600 % 168, Integer)


def bucket_index(column: Any, dialect: str, starts: Sequence[dt.datetime]) -> ColumnElement:
    """0 … len(starts) - 1: the index of the last of the ascending UTC
    instants `starts` at or before the instant in `column` (which the caller
    keeps at or after starts[0])."""
    if len(starts) == 1:
        return literal(0, Integer)
    if dialect == "postgresql":
        array = bindparam(None, list(starts), type_=ARRAY(DateTime(timezone=True)))
        return func.width_bucket(column, array) - 1
    return case(*((column < start, literal(i, Integer)) for i, start in enumerate(starts[1:])),
                else_=literal(len(starts) - 1, Integer))


def micros_between(later: Any, earlier: Any, dialect: str) -> ColumnElement:
    """Whole microseconds from `earlier` to `later` (two UTC timestamp
    columns), exact, so sums of close times add up to the same total in any
    order (and to what `counted_state.close_micros` keeps). On PostgreSQL the
    interval's seconds as a double (exact to the microsecond for intervals of
    up to about 280 years) rounded; on SQLite, which stores
    'YYYY-MM-DD HH:MM:SS.ffffff', whole seconds and the microseconds apart."""
    if dialect == "postgresql":
        seconds = func.date_part(literal_column("'epoch'"), later - earlier, type_=Float)
        return cast(func.round(seconds * 1_000_000), BigInteger)
    whole = cast(func.strftime("%s", later), Integer) - cast(func.strftime("%s", earlier), Integer)
    fraction = cast(func.substr(later, 21, 6), Integer) - cast(func.substr(earlier, 21, 6), Integer)
    return whole * 1_000_000 + fraction
