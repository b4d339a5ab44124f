"""Local months and hours of the week, as the tallies place incidents in
them (models.Tally: months are numbered year x 12 + month - 1, in the
site's zone). The statistics place a period's ends with the same functions,
so a month read from the tallies is the month the rows would count."""

from __future__ import annotations

import datetime as dt
import functools

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


def zone_key(zone: dt.tzinfo) -> str:
    """A name for a zone, to tell whether the server's zone changed."""
    return getattr(zone, "key", None) or f"{zone}"


@functools.lru_cache(maxsize=4096)
def month_start(month: int, zone: dt.tzinfo) -> dt.datetime:
    """The UTC instant month `month` (year x 12 + month - 1) starts in `zone`:
    its first local midnight (as `row_figures.utc_start`)."""
    return dt.datetime(month // 12, month % 12 + 1, 1, tzinfo=zone).astimezone(dt.UTC)


def month_of(instant: dt.datetime, zone: dt.tzinfo) -> int:
    """The local month an instant falls in: the one between its start and the
    next month's start (see `month_start`)."""
    local = instant.astimezone(zone)
    month = local.year * 12 + local.month - 1
    if instant < month_start(month, zone):
        return month - 1
    if instant >= month_start(month + 1, zone):
        return month + 1
    return month


def hour_of_week(instant: dt.datetime, zone: dt.tzinfo) -> int:
    """Monday 00:00-00:59 local = 0 … Sunday 23:00-23:59 = 167, as
    `sqltime.hour_of_week` computes it from the UTC seconds plus the zone's
    offset at the instant (1970-01-01 was a Thursday, hour 72 of its week)."""
    offset = instant.astimezone(zone).utcoffset() or dt.timedelta()
    seconds = (instant - EPOCH) // SECOND + int(offset.total_seconds())
    return (seconds // 3600 + 72) % 168


def date_month(day: dt.date) -> int:
    return day.year * 12 + day.month - 1

