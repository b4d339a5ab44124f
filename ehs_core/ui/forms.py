"""Forms on pages, validated by the same colander schemas as the JSON API.

A browser sends every field as text; `json_values` turns the posted form into
the JSON values the API would receive (numbers for ids, booleans for check
boxes, null for an empty optional field) without judging them, and the
schema then accepts or refuses them exactly as it would a JSON body. Its
issues come back keyed by field name, to be shown next to each field.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import colander
from pyramid.request import Request

from ehs_core.errors import APIError

# How a form field becomes a JSON value.
TEXT, OPTIONAL_TEXT, INT, OPTIONAL_INT, BOOL = "text", "optional_text", "int", "optional_int", "bool"


def json_values(form: Mapping[str, Any], spec: dict[str, str]) -> dict[str, Any]:
    """Only the fields of `spec` that were posted (a missing field stays
    missing, so the schema's own defaults and `required` apply)."""
    values: dict[str, Any] = {}
    for name, kind in spec.items():
        if kind == BOOL:
            values[name] = form.get(name) in ("on", "true", "1", "yes")
            continue
        if name not in form:
            continue
        raw = form.get(name)
        raw = raw if isinstance(raw, str) else ""
        if kind in (INT, OPTIONAL_INT):
            raw = raw.strip()
            if raw == "":
                values[name] = None if kind == OPTIONAL_INT else ""
            elif re.fullmatch(r"-?\d{1,12}", raw):
                values[name] = int(raw)
            else:
                values[name] = raw  # the schema says what is wrong with it
        elif kind == OPTIONAL_TEXT:
            values[name] = raw if raw.strip() else None
        else:
            values[name] = raw
    return values


def local_to_iso(value: Any, zone: dt.tzinfo) -> Any:
    """A datetime-local field ("2026-03-01T08:15") read in the site's zone,
    as the ISO instant with offset the API takes; anything else is passed on
    for the schema to refuse in its own words."""
    if not isinstance(value, str):
        return value
    try:
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.isoformat()


def issues_by_field(issues: list[dict[str, str]] | None, message: str | None = None) -> dict[str, str]:
    """{field: message}; an issue without a field is filed under "_"."""
    errors: dict[str, str] = {}
    for issue in issues or []:
        errors.setdefault(issue.get("path") or "_", issue.get("message", ""))
    if not errors and message:
        errors["_"] = message
    return errors


def errors_of(exc: Exception) -> dict[str, str]:
    if isinstance(exc, colander.Invalid):
        return {path or "_": text for path, text in sorted(exc.asdict().items())}
    if isinstance(exc, APIError):
        return issues_by_field(exc.issues, exc.message)
    issues = getattr(exc, "issues", None)
    return issues_by_field(issues, str(exc))


def validate(request: Request, schema: colander.SchemaNode, values: dict[str, Any]) -> dict[str, Any]:
    """The schema's result; raises colander.Invalid like the API does."""
    return schema.deserialize(values)
