"""Strict JSON types for colander and the helpers that run schemas on requests.

colander's own types coerce ("x" becomes True, 1 becomes "1"); an API that
stores legal records must refuse such input with a 400 instead, so these
types accept only the JSON type they name. `None` is accepted only by types
built with `nullable=True` and means "clear this field".
"""

from __future__ import annotations

import datetime as dt
import json
import re
from enum import StrEnum
from typing import Any

import colander
from pyramid.request import Request

from ehs_core.errors import APIError

null = colander.null
drop = colander.drop
required = colander.required


class _JSONType(colander.SchemaType):
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


class Str(_JSONType):
    """A string, stripped of surrounding white space."""

    def __init__(self, nullable: bool = False, strip: bool = True) -> None:
        super().__init__(nullable)
        self.strip = strip

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        if not isinstance(value, str):
            raise colander.Invalid(node, "Must be a string")
        if "\x00" in value:
            raise colander.Invalid(node, "Must not contain NUL characters")
        return value.strip() if self.strip else value


class Bool(_JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> bool:
        if not isinstance(value, bool):
            raise colander.Invalid(node, "Must be true or false")
        return value


# Integer columns are 32-bit; larger numbers can name nothing stored.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


class Int(_JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise colander.Invalid(node, "Must be a whole number")
        if not INT_MIN <= value <= INT_MAX:
            raise colander.Invalid(node, "Out of range")
        return value


class Number(_JSONType):
    def check(self, node: colander.SchemaNode, value: Any) -> float | int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise colander.Invalid(node, "Must be a number")
        return value


class Date(_JSONType):
    """A calendar date written YYYY-MM-DD."""

    def check(self, node: colander.SchemaNode, value: Any) -> dt.date:
        if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise colander.Invalid(node, "Must be a date written YYYY-MM-DD")
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise colander.Invalid(node, "Not a valid calendar date") from None


class Choice(_JSONType):
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


class StrList(_JSONType):
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
        return [item.strip() for item in value]


class QueryInt(_JSONType):
    """A whole number given as query-string text."""

    def check(self, node: colander.SchemaNode, value: Any) -> int:
        if not isinstance(value, str) or not re.fullmatch(r"-?\d{1,9}", value.strip()):
            raise colander.Invalid(node, "Must be a whole number")
        return int(value)


class QueryBool(_JSONType):
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
    return field(Str(nullable=nullable), missing=missing, validator=colander.Length(**length), **kw)


def json_value(raw: bytes | str, path: str) -> Any:
    """Parsed JSON, or a 400 naming `path` ("Malformed JSON")."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise APIError(400, "Invalid request", [{"path": path, "message": "Malformed JSON"}]) from None


def json_object(raw: bytes | str, path: str, not_object: str) -> dict[str, Any]:
    """A JSON object from a body or a multipart part (a kiosk report), or a
    400 naming `path`."""
    body = json_value(raw, path)
    if not isinstance(body, dict):
        raise APIError(400, "Invalid request", [{"path": path, "message": not_object}])
    return body


def json_body(request: Request, array: bool = False) -> Any:
    """The request's JSON object. Anything but `application/json` is refused:
    a JSON API that also accepted text/plain or form bodies would let another
    site post to it without a CORS preflight."""
    if request.content_type != "application/json":
        raise APIError(415, "Send the body as application/json")
    body = json_value(request.body or b"null", "")
    if array and not isinstance(body, list):
        raise APIError(400, "Invalid request", [{"path": "", "message": "The body must be a JSON array"}])
    if not array and not isinstance(body, dict):
        raise APIError(400, "Invalid request",
                       [{"path": "", "message": "The body must be a JSON object"}])
    return body


def validate_body(request: Request, schema: colander.SchemaNode) -> Any:
    return schema.deserialize(json_body(request, array=isinstance(schema.typ, colander.Sequence)))


def validate_query(request: Request, schema: colander.SchemaNode) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key in request.GET:
        values = request.GET.getall(key)
        params[key] = values[-1]
    return schema.deserialize(params)


SchemaSource = Any  # a schema class, a schema node, or a callable(registry) -> node


def schema_of(source: SchemaSource, registry: Any) -> colander.SchemaNode:
    if isinstance(source, colander.SchemaNode):
        return source.clone()
    if isinstance(source, type) and issubclass(source, colander.SchemaNode):
        return source()
    return source(registry)


def validated_view(view: Any, info: Any) -> Any:
    """View deriver: a view declared with `body=` and/or `query=` gets its
    request validated by those colander schemas before it runs (after the
    permission check), the results in `request.validated` and
    `request.validated_query`. The same declarations feed the OpenAPI
    document, so documentation and validation cannot drift apart."""
    body = info.options.get("body")
    query = info.options.get("query")
    if body is None and query is None:
        return view

    def wrapper(context: Any, request: Request) -> Any:
        if query is not None:
            request.validated_query = validate_query(request, schema_of(query, request.registry))
        if body is not None:
            request.validated = validate_body(request, schema_of(body, request.registry))
        return view(context, request)

    return wrapper


# View options the deriver reads; `responses` lists the success statuses for
# the API description, `multipart` names the file fields of upload endpoints.
validated_view.options = ("body", "query", "responses", "multipart", "summary", "media", "security")


def includeme(config: Any) -> None:
    config.add_view_deriver(validated_view)
