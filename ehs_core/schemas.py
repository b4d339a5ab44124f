"""Strict JSON types for colander, and the helpers that build fields of them.

colander's own types coerce ("x" becomes True, 1 becomes "1"); an API that
stores legal records must refuse such input with a 400 instead, so these
types accept only the JSON type they name. `None` is accepted only by types
built with `nullable=True` and means "clear this field".
"""

from __future__ import annotations

import datetime as dt
import math
import re
from enum import StrEnum
from typing import Any

import colander

null = colander.null
drop = colander.drop
required = colander.required


class JSONType(colander.SchemaType):
    nullable: bool

    def __init__(self, nullable: bool = False) -> None:
        self.nullable = nullable

    def serialize(self, node: colander.SchemaNode, appstruct: Any) -> Any:
        return appstruct

    def deserialize(self, node: colander.SchemaNode, cstruct: Any) -> Any:
        if cstruct is null:
            return null
        if cstruct is None:
            if self.nullable:
                return None
            raise colander.Invalid(node, "May not be null")
        return self.check(node, cstruct)

    def check(self, node: colander.SchemaNode, value: Any) -> Any:
        raise NotImplementedError


class Str(JSONType):
    """A string, stripped of surrounding white space. `max_length` bounds
    the string as sent (white space included), as the OpenAPI document's
    maxLength does."""

    def __init__(self, nullable: bool = False, strip: bool = True, max_length: int | None = None) -> None:
        super().__init__(nullable)
        self.strip = strip
        self.max_length = max_length

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        if not isinstance(value, str):
            raise colander.Invalid(node, "Must be a string")
        problem = text_problem(value)
        if problem:
            raise colander.Invalid(node, problem)
        if self.max_length is not None and len(value) > self.max_length:
            raise colander.Invalid(node, f"Must be at most {self.max_length} characters long")
        return value.strip() if self.strip else value


class Bool(JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> bool:
        if not isinstance(value, bool):
            raise colander.Invalid(node, "Must be true or false")
        return value


# Integer columns are 32-bit; larger numbers can name nothing stored.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


class Int(JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise colander.Invalid(node, "Must be a whole number")
        if not INT_MIN <= value <= INT_MAX:
            raise colander.Invalid(node, "Out of range")
        return value


class Number(JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> float | int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise colander.Invalid(node, "Must be a number")
        if not math.isfinite(value) or abs(value) > 1e15:
            raise colander.Invalid(node, "Out of range")
        return value


EARLIEST_DATE = dt.date(1900, 1, 1)
LATEST_DATE = dt.date(2999, 12, 31)
# Years 1900 to 2999, written with ASCII digits; the OpenAPI document states
# the same rule, so generated clients and fuzzers know it.
DATE_PATTERN = r"^(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"


class Date(JSONType):
    """A calendar date written YYYY-MM-DD, between `earliest` and 2999-12-31
    (a date outside the records' era is a typing slip, such as a due date in
    year 1); `not_future` refuses dates after today (a date of birth), with a
    day's grace for clients east of the server."""

    def __init__(self, nullable: bool = False, *, earliest: dt.date = EARLIEST_DATE,
                 not_future: bool = False) -> None:
        super().__init__(nullable)
        self.earliest = earliest
        self.not_future = not_future

    @property
    def rule(self) -> str:
        rule = f"A date from {self.earliest.isoformat()} to {LATEST_DATE.isoformat()}"
        return rule + (", not in the future" if self.not_future else "")

    def check(self, node: colander.SchemaNode, value: Any) -> dt.date:
        if not isinstance(value, str) or not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            raise colander.Invalid(node, "Must be a date written YYYY-MM-DD")
        try:
            day = dt.date.fromisoformat(value)
        except ValueError:
            raise colander.Invalid(node, "Not a valid calendar date") from None
        if day < self.earliest:
            raise colander.Invalid(node, f"Must not be before {self.earliest.isoformat()}")
        if day > LATEST_DATE:
            raise colander.Invalid(node, f"Must not be after {LATEST_DATE.isoformat()}")
        if self.not_future and day > dt.date.today() + dt.timedelta(days=1):
            raise colander.Invalid(node, "Must not lie in the future")
        return day


# Real UTC offsets lie between -12:00 and +14:00; ISO 8601 allows up to 18 hours.
MAX_OFFSET = dt.timedelta(hours=18)
# Clocks differ a little between a phone and the server.
FUTURE_TOLERANCE = dt.timedelta(minutes=2)


class DateTime(Str):
    """An ISO 8601 instant that carries its UTC offset, such as
    2026-03-01T14:30:00+01:00, in the years 1970 to 2999 with an offset of
    at most 18 hours. The bounds are checked before any arithmetic, so an
    extreme year or offset is refused instead of overflowing."""

    openapi = {"format": "date-time"}
    FORMAT = "Must be an ISO 8601 date and time with a UTC offset, such as 2026-03-01T14:30:00+01:00"

    def __init__(self, nullable: bool = False, *, not_future: bool = False) -> None:
        super().__init__(nullable)
        self.not_future = not_future

    @property
    def rule(self) -> str:
        rule = "A date and time with its UTC offset, in the years 1970 to 2999"
        return rule + (", not in the future" if self.not_future else "")

    def check(self, node: colander.SchemaNode, value: Any) -> dt.datetime:
        raw = super().check(node, value)
        if not re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}", raw) or not raw.isascii():
            raise colander.Invalid(node, self.FORMAT)
        try:
            moment = dt.datetime.fromisoformat(raw)
        except ValueError:
            raise colander.Invalid(node, self.FORMAT) from None
        offset = moment.utcoffset()
        if offset is None:
            raise colander.Invalid(node, "Must include a UTC offset such as +02:00 or Z")
        if abs(offset) > MAX_OFFSET or offset % dt.timedelta(minutes=1):
            raise colander.Invalid(node, "The UTC offset must be whole minutes, at most 18 hours")
        if not 1970 <= moment.year <= 2999:
            raise colander.Invalid(node, "Must lie in the years 1970 to 2999")
        if self.not_future and moment - FUTURE_TOLERANCE > dt.datetime.now(dt.UTC):
            raise colander.Invalid(node, "Must not lie in the future")
        return moment


class Choice(JSONType):
    """One value of a StrEnum."""

    def __init__(self, enum: type[StrEnum], nullable: bool = False) -> None:
        super().__init__(nullable)
        self.enum = enum

    def check(self, node: colander.SchemaNode, value: Any) -> StrEnum:
        try:
            return self.enum(value)
        except (ValueError, TypeError):
            allowed = ", ".join(member.value for member in self.enum)
            raise colander.Invalid(node, f"Must be one of: {allowed}") from None


class NullableMapping(colander.Mapping):
    """An object that may also be null (a PATCH that clears a nested part,
    such as a person's statement): null deserializes to None."""

    nullable = True

    def deserialize(self, node: colander.SchemaNode, cstruct: Any) -> Any:
        if cstruct is None:
            return None
        return super().deserialize(node, cstruct)


class StrList(JSONType):
    """A list of strings."""

    def __init__(self, max_items: int = 50, max_length: int = 2000) -> None:
        super().__init__(False)
        self.max_items = max_items
        self.max_length = max_length

    def check(self, node: colander.SchemaNode, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise colander.Invalid(node, "Must be a list of strings")
        if len(value) > self.max_items:
            raise colander.Invalid(node, f"At most {self.max_items} items")
        if any(len(item) > self.max_length for item in value):
            raise colander.Invalid(node, f"Each item at most {self.max_length} characters")
        for item in value:
            problem = text_problem(item)
            if problem:
                raise colander.Invalid(node, problem)
        return [item.strip() for item in value]


QUERY_INT_MAX = 999_999_999


class QueryInt(JSONType):
    """A whole number given as query-string text."""

    def check(self, node: colander.SchemaNode, value: Any) -> int:
        if not isinstance(value, str) or not re.fullmatch(r"-?[0-9]{1,9}", value.strip()):
            raise colander.Invalid(node, "Must be a whole number")
        return int(value)


class QueryBool(JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> bool:
        if value in ("true", "1"):
            return True
        if value in ("false", "0"):
            return False
        raise colander.Invalid(node, "Must be true or false")


def unless_null(validator: Any) -> Any:
    """colander runs validators on None too; null means "clear", which a
    nullable field always allows."""
    if validator is None:
        return None

    def validate(node: colander.SchemaNode, value: Any) -> None:
        if value is not None:
            validator(node, value)

    validate.__wrapped_validator__ = validator  # for the OpenAPI description
    return validate


def field(typ: colander.SchemaType, missing: Any = required, **kw: Any) -> colander.SchemaNode:
    if getattr(typ, "nullable", False) and "validator" in kw:
        kw["validator"] = unless_null(kw["validator"])
    return colander.SchemaNode(typ, missing=missing, **kw)


def text(max_length: int, *, min_length: int = 0, missing: Any = required,
         nullable: bool = False, **kw: Any) -> colander.SchemaNode:
    length = {"min": min_length, "max": max_length}
    if min_length == 1:
        length["min_err"] = "Must not be empty"
    return field(Str(nullable=nullable, max_length=max_length), missing=missing,
                 validator=colander.Length(**length), **kw)


_SURROGATE = re.compile("[\ud800-\udfff]")
# Control characters but tab, line feed and carriage return: C0, DEL and C1.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def text_problem(value: str) -> str | None:
    """What makes a string unstorable or no text: a lone UTF-16 surrogate
    (JSON's "\\ud800" escape) cannot be encoded for the database, NUL ends
    a C string in PostgreSQL (a 500 there), and the other control
    characters (but tab and line breaks) are no part of what a person
    writes, only of what is injected into terminals, logs and CSV files
    (OWASP Input Validation cheat sheet: free text allow-lists its
    characters). The
    API's parser, its schema types and the pages' forms (which validate
    through the same types) all ask this."""
    if _SURROGATE.search(value):
        return "Must be valid Unicode text (no lone surrogate characters)"
    if _CONTROL.search(value):
        return "Must not contain control characters (only tabs and line breaks)"
    return None


class Several(JSONType):
    """A query parameter that may be repeated (`?type=injury&type=illness`),
    each value checked by `item`; the result is the list of distinct values.
    Parameters of other types must be given once."""

    def __init__(self, item: JSONType, max_items: int = 20) -> None:
        super().__init__(False)
        self.item = item
        self.max_items = max_items

    def check(self, node: colander.SchemaNode, value: Any) -> list[Any]:
        values = value if isinstance(value, list) else [value]
        if len(values) > self.max_items:
            raise colander.Invalid(node, f"At most {self.max_items} values")
        return list(dict.fromkeys(self.item.check(node, item) for item in values))
