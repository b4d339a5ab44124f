"""Rows of a correlated subquery as one JSON value, so that what hangs off
an incident (its investigation, causes, actions, files; a plugin's parts)
comes back as columns of a single statement rather than a statement each.

A statement costs a request more in the driver and the ORM than in the
database, so an incident's sections are read with it rather than each on
its own. `json_rows(...)` is `json_agg(json_build_array(...))` on
PostgreSQL and `json_group_array(json_array(...))` on SQLite, as JSON
text on both; `decode`
turns the answer back into plain rows with the column's Python types, so
the code that writes a section's JSON reads the same attributes as from
the ORM object.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from orjson import loads  # the values json.loads gives, from a compiled parser
from sqlalchemy import ColumnElement, Text
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement


class json_rows(FunctionElement):
    """The selected rows as a JSON array of arrays (`[]` when none); the
    rows come in no particular order (`decode` sorts them)."""

    type = Text()
    inherit_cache = True
    name = "json_rows"


@compiles(json_rows, "postgresql")
def _postgresql(element: json_rows, compiler: Any, **kw: Any) -> str:
    # As text, like SQLite's: `decode` parses it once, and an empty section
    # (most are: a page of 25 incidents reads 25 kiosk links that are not
    # there) is recognised without parsing, where the driver would have
    # parsed every `json` value.
    clauses = compiler.process(element.clauses, **kw)
    return f"coalesce(json_agg(json_build_array({clauses}))::text, '[]')"


@compiles(json_rows)
def _sqlite(element: json_rows, compiler: Any, **kw: Any) -> str:
    return f"json_group_array(json_array({compiler.process(element.clauses, **kw)}))"


def _instant(value: str | None) -> dt.datetime | None:
    """PostgreSQL writes an instant with its offset, SQLite the naive UTC it keeps."""
    if value is None:
        return None
    moment = dt.datetime.fromisoformat(value)
    if moment.tzinfo is dt.UTC:  # PostgreSQL's "+00:00" (the session's zone is UTC)
        return moment
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def _date(value: str | None) -> dt.date | None:
    return None if value is None else dt.date.fromisoformat(value[:10])


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)  # SQLite writes 0 and 1


def _document(value: Any) -> Any:
    """A JSON column: nested as JSON by PostgreSQL, as its text by SQLite."""
    return loads(value) if isinstance(value, str) else value


_make = tuple.__new__

# How each kind of column comes back from JSON.
INSTANT, DATE, FLAG, DOCUMENT = _instant, _date, _flag, _document


def decoder(row: type[NamedTuple], order: tuple[str, ...] | None = None,
            **kinds: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
    """A function from a `json_rows` value to a list of `row`s, sorted by
    the fields named in `order` (by default the first, the id), with the
    named fields converted by `kinds` (INSTANT, DATE, FLAG, DOCUMENT); the
    others are kept as JSON read them."""
    fields = row._fields
    converters = [(fields.index(name), convert) for name, convert in kinds.items()]
    # A C function (`itemgetter`), not a lambda building a tuple per row: the
    # key runs once for every row of every section decoded.
    key = itemgetter(*[fields.index(name) for name in order or fields[:1]])

    def decode(value: Any) -> list[Any]:
        if not value or value == "[]":
            return []
        rows: Sequence[list[Any]] = loads(value) if isinstance(value, str) else value
        # A column at a time; each row made by `tuple.__new__`, which is what a
        # NamedTuple's own `__new__` (a Python function) calls with its values,
        # without that extra Python call for every row.
        for index, convert in converters:
            for values in rows:
                values[index] = convert(values[index])
        found = [_make(row, values) for values in rows]
        found.sort(key=key)
        return found

    return decode


def columns_of(row: type[NamedTuple], model: type, **others: ColumnElement[Any]) -> list[ColumnElement[Any]]:
    """The model's columns named by the row's fields, in their order; a
    field that is not a column of the model is given in `others`."""
    return [others[name] if name in others else getattr(model, name) for name in row._fields]
