from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Any

import colander

from ehs_core.incidents.models import IncidentType, Severity, Status
from ehs_core.schemas import Bool, Choice, Date, DateTime, Int, QueryInt, Several, Str, drop, field, text


class OccurredAt(DateTime):
    """When it happened: an instant with its UTC offset (the offset keeps the
    local time of the report), not in the future."""

    def __init__(self, nullable: bool = False) -> None:
        super().__init__(nullable, not_future=True)


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

    changed_elsewhere = {
        "status": "The status is changed through POST /api/incidents/{number}/transitions",
        "anonymous": "Whether a report is anonymous is fixed when it is filed",
        "clientId": "The clientId is fixed when the report is filed",
        "number": "The number is given by the service and never changes",
        "reference": "The reference is given by the service and never changes",
    }


class ListOrder(StrEnum):
    """How the list, its export and its page are sorted (`listing.ORDERS`)."""

    newest = "newest"  # the newest report first (by number): the default
    oldest = "oldest"  # the oldest report first
    occurred = "occurred"  # what happened most recently first
    severity = "severity"  # critical first, then high, medium, low; newest first within each


class IncidentQuerySchema(colander.MappingSchema):
    page = field(QueryInt(), missing=1, validator=colander.Range(min=1, max=1_000_000))
    pageSize = field(QueryInt(), missing=25, validator=colander.Range(min=1, max=100))
    q = text(200, missing=None)
    sort = field(Choice(ListOrder), missing=ListOrder.newest, description=(
        "newest (the default: the newest report first), oldest, occurred (what happened most recently "
        "first) or severity (critical first; the newest report first within a severity)"))


def enum_query(enum: type) -> colander.SchemaNode:
    """A list filter: repeat it for any of several values (?type=injury&type=illness)."""
    return field(Several(Choice(enum)), missing=None,
                 description="Repeat the parameter to match any of several values")


STATUS_QUERY = enum_query(Status)
TYPE_QUERY = enum_query(IncidentType)
SEVERITY_QUERY = enum_query(Severity)
SITE_QUERY = field(Several(QueryInt()), missing=None,
                   description="Repeat the parameter to match any of several sites")
AREA_QUERY = field(Several(QueryInt()), missing=None,
                   description="Repeat the parameter to match any of several areas")
DATE_QUERY = field(Date(), missing=None, description="a calendar day YYYY-MM-DD, in the server's zone")


class CommentSchema(colander.MappingSchema):
    body = text(20000, min_length=1)
    clientId = field(ClientId(nullable=True), missing=None,
                     description="Idempotency key: the same comment sent again is stored once (200 "
                                 "with the first)")
