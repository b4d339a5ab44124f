from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

import colander

from ehs_core.incidents.models import IncidentType, Severity, Status
from ehs_core.schemas import Bool, Choice, Date, Int, QueryInt, Str, drop, field, text

# Clocks differ a little between a phone and the server.
FUTURE_TOLERANCE = dt.timedelta(minutes=2)


class OccurredAt(Str):
    """An ISO 8601 instant that carries its UTC offset and is not in the future."""

    openapi = {"format": "date-time"}

    def check(self, node: colander.SchemaNode, value: Any) -> dt.datetime:
        raw = super().check(node, value)
        if not re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", raw):
            raise colander.Invalid(node, "Must be an ISO 8601 date and time with a UTC offset")
        try:
            moment = dt.datetime.fromisoformat(raw)
        except ValueError:
            raise colander.Invalid(node, "Must be an ISO 8601 date and time with a UTC offset") from None
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise colander.Invalid(node, "Must include a UTC offset such as +02:00 or Z")
        if moment - FUTURE_TOLERANCE > dt.datetime.now(dt.UTC):
            raise colander.Invalid(node, "Must not lie in the future")
        if moment.year < 1970:
            raise colander.Invalid(node, "Must be after 1970")
        return moment


class ClientId(Str):
    openapi = {"format": "uuid"}

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        raw = super().check(node, value)
        try:
            return str(uuid.UUID(raw))
        except ValueError:
            raise colander.Invalid(node, "Must be a UUID") from None


class IncidentCreateSchema(colander.MappingSchema):
    title = text(200, min_length=1)
    type = field(Choice(IncidentType))
    severity = field(Choice(Severity))
    occurredAt = field(OccurredAt())
    siteId = field(Int())
    areaId = field(Int(nullable=True), missing=None)
    locationDetail = text(2000, missing=None, nullable=True)
    description = text(20000, missing=None, nullable=True)
    immediateAction = text(20000, missing=None, nullable=True)
    anonymous = field(Bool(), missing=False)
    clientId = field(ClientId(nullable=True), missing=None)


class IncidentUpdateSchema(colander.MappingSchema):
    title = text(200, min_length=1, missing=drop)
    type = field(Choice(IncidentType), missing=drop)
    severity = field(Choice(Severity), missing=drop)
    occurredAt = field(OccurredAt(), missing=drop)
    siteId = field(Int(), missing=drop)
    areaId = field(Int(nullable=True), missing=drop)
    locationDetail = text(2000, missing=drop, nullable=True)
    description = text(20000, missing=drop, nullable=True)
    immediateAction = text(20000, missing=drop, nullable=True)


class IncidentQuerySchema(colander.MappingSchema):
    page = field(QueryInt(), missing=1, validator=colander.Range(min=1, max=1_000_000))
    pageSize = field(QueryInt(), missing=25, validator=colander.Range(min=1, max=100))
    q = text(200, missing=None)


def enum_query(enum: type) -> colander.SchemaNode:
    return field(Choice(enum), missing=None)


STATUS_QUERY = enum_query(Status)
TYPE_QUERY = enum_query(IncidentType)
SEVERITY_QUERY = enum_query(Severity)
SITE_QUERY = field(QueryInt(), missing=None)
DATE_QUERY = field(Date(), missing=None, description="a calendar day YYYY-MM-DD, in the server's zone")


class CommentSchema(colander.MappingSchema):
    body = text(20000, min_length=1)
