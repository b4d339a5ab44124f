"""Date arithmetic inside SQL, for PostgreSQL and SQLite alike, so that
statistics group rows in the database instead of in Python."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, cast, func
from sqlalchemy.sql import ColumnElement


def epoch(column: Any, dialect: str) -> ColumnElement:
    """Seconds since 1970 of a UTC timestamp column."""
    if dialect == "postgresql":
        return func.extract("epoch", column)
    return cast(func.strftime("%s", column), Integer)


def local(column: Any, dialect: str, zone: Any, offset_minutes: Any) -> Any:
    """The column as local wall-clock time. PostgreSQL converts to the site's
    zone (IANA name); SQLite has no zone data, so it shifts by the offset the
    report was made with, which is the reporter's local time."""
    if dialect == "postgresql":
        return func.timezone(zone, column)
    return func.datetime(column, func.printf("%+d minutes", offset_minutes))


def weekday_hour(column: Any, dialect: str) -> tuple[ColumnElement, ColumnElement]:
    """(weekday 0=Monday … 6=Sunday, hour 0-23) of a local timestamp."""
    if dialect == "postgresql":
        return (cast(func.extract("isodow", column), Integer) - 1,
                cast(func.extract("hour", column), Integer))
    dow = cast(func.strftime("%w", column), Integer)  # 0 = Sunday
    return (dow + 6) % 7, cast(func.strftime("%H", column), Integer)


def wall_clock(column: Any, dialect: str, zone: str) -> Any:
    """A UTC instant as wall-clock time in `zone` on PostgreSQL, independent
    of the session's TimeZone setting; SQLite stores UTC wall-clock already."""
    if dialect == "postgresql":
        return func.timezone(zone, column)
    return column


def local_date(column: Any, dialect: str, zone: str) -> ColumnElement:
    return func.date(wall_clock(column, dialect, zone))


def month_index(column: Any, dialect: str, zone: str = "UTC") -> ColumnElement:
    """year * 12 + (month - 1) of a timestamp (in `zone` on PostgreSQL)."""
    if dialect == "postgresql":
        column = wall_clock(column, dialect, zone)
        return cast(func.extract("year", column), Integer) * 12 + cast(func.extract("month", column),
                                                                         Integer) - 1
    return cast(func.strftime("%Y", column), Integer) * 12 + cast(func.strftime("%m", column), Integer) - 1


def days_between(later: Any, earlier: Any, dialect: str) -> ColumnElement:
    if dialect == "postgresql":
        return func.extract("epoch", later - earlier) / 86400.0
    return func.julianday(later) - func.julianday(earlier)


