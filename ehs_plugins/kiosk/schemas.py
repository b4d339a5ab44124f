from __future__ import annotations

import colander

from ehs_core.incidents.schemas import IncidentCreateSchema
from ehs_core.schemas import Bool, Int, drop, field, text


class LinkCreateSchema(colander.MappingSchema):
    name = text(200, min_length=1)
    siteId = field(Int(nullable=True), missing=None)


class LinkUpdateSchema(colander.MappingSchema):
    name = text(200, min_length=1, missing=drop)
    siteId = field(Int(nullable=True), missing=drop)
    revoked = field(Bool(), missing=drop)


def report_schema() -> colander.SchemaNode:
    """The incident create body without `anonymous`, plus `reporterName`."""
    schema = IncidentCreateSchema().clone()
    del schema["anonymous"]
    schema.add(text(200, missing=None, nullable=True, name="reporterName"))
    schema.changed_elsewhere = {
        "anonymous": "A report without reporterName is anonymous; there is no anonymous field"}
    return schema
