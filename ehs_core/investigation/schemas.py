"""The bodies an investigation and its root causes take, for the JSON API
and the incident page alike."""

from __future__ import annotations

import colander

from ehs_core.schemas import Bool, Int, StrList, drop, field, text

# The "five whys" are a chain of answers; twenty is already a long one.
MAX_WHYS = 20


class InvestigationSchema(colander.MappingSchema):
    leadId = field(Int(nullable=True), missing=drop)
    method = text(100, missing=drop, nullable=True)
    summary = text(20000, missing=drop, nullable=True)
    completed = field(Bool(), missing=drop)


class RootCauseSchema(colander.MappingSchema):
    category = text(100, min_length=1)
    description = text(20000, min_length=1)
    whys = field(StrList(max_items=MAX_WHYS), missing=())


class RootCauseUpdateSchema(colander.MappingSchema):
    category = text(100, min_length=1, missing=drop)
    description = text(20000, min_length=1, missing=drop)
    whys = field(StrList(max_items=MAX_WHYS), missing=drop)
