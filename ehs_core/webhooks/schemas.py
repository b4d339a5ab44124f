"""Bodies of the webhook endpoints' API."""

from __future__ import annotations

import colander

from ehs_core.schemas import Bool, StrList, field, text


class EndpointCreateSchema(colander.MappingSchema):
    url = text(2000, min_length=1)
    events = field(StrList(max_items=50, max_length=100))
    description = text(500, missing=None, nullable=True)


class EndpointUpdateSchema(colander.MappingSchema):
    url = text(2000, min_length=1, missing=colander.drop)
    events = field(StrList(max_items=50, max_length=100), missing=colander.drop)
    description = text(500, missing=colander.drop, nullable=True)
    active = field(Bool(), missing=colander.drop)
