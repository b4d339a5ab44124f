"""What the obligation endpoints take (and the OpenAPI document shows)."""

from __future__ import annotations

import colander

from ehs_core.obligations.services import Filter
from ehs_core.schemas import Choice, DateTime, field, text


class ObligationQuerySchema(colander.MappingSchema):
    status = field(Choice(Filter), missing=Filter.open)


class DoneSchema(colander.MappingSchema):
    note = text(2000, missing=None, nullable=True)
    doneAt = field(DateTime(nullable=True, not_future=True), missing=None)


class WaiveSchema(colander.MappingSchema):
    reason = text(2000, min_length=1)


ITEM = {"type": "object", "required": ["id", "kind", "title", "incidentNumber", "dueAt", "status",
                                       "doneAt", "doneBy", "note"], "properties": {
    "id": {"type": "integer"},
    "kind": {"type": "string", "description": "the kind a plugin declared (add_obligation_kind)"},
    "title": {"type": "string"},
    "incidentNumber": {"type": ["integer", "null"]},
    "siteId": {"type": ["integer", "null"]},
    "dueAt": {"type": "string", "format": "date-time", "description": "on the site's clock"},
    "status": {"enum": ["open", "overdue", "done", "waived"]},
    "doneAt": {"type": ["string", "null"], "format": "date-time"},
    "doneBy": {"type": ["object", "null"], "description": "{id, name}"},
    "note": {"type": ["string", "null"], "description": "how it was done, or why it was waived"},
    "fulfilledBy": {"type": "string", "description": "how this kind is fulfilled"},
}}
LIST_ANSWER = {"type": "object", "required": ["items"], "properties": {
    "items": {"type": "array", "items": ITEM}}}
