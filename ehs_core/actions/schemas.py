from __future__ import annotations

import datetime as dt
from enum import StrEnum

import colander

from ehs_core.actions.models import ActionStatus
from ehs_core.schemas import Choice, Date, Int, drop, field, text

# A due date before the service's era is a typing slip (year 1), not a plan.
SERVICE_ERA = dt.date(1970, 1, 1)


class ActionCreateSchema(colander.MappingSchema):
    title = text(200, min_length=1)
    description = text(20000, missing=None, nullable=True)
    kind = text(50, missing=None, nullable=True)
    assigneeId = field(Int(nullable=True), missing=None)
    dueDate = field(Date(nullable=True, earliest=SERVICE_ERA), missing=None)
    rootCauseId = field(Int(nullable=True), missing=None)


class ActionUpdateSchema(colander.MappingSchema):
    title = text(200, min_length=1, missing=drop)
    description = text(20000, missing=drop, nullable=True)
    kind = text(50, missing=drop, nullable=True)
    assigneeId = field(Int(nullable=True), missing=drop)
    dueDate = field(Date(nullable=True, earliest=SERVICE_ERA), missing=drop)
    rootCauseId = field(Int(nullable=True), missing=drop)
    status = field(Choice(ActionStatus), missing=drop)


class Scope(StrEnum):
    mine = "mine"
    all = "all"


class ActionFilter(StrEnum):
    open = "open"
    overdue = "overdue"
    done = "done"
    awaiting_verification = "awaiting_verification"
    all = "all"


class ActionQuerySchema(colander.MappingSchema):
    scope = field(Choice(Scope), missing=Scope.mine)
    filter = field(Choice(ActionFilter), missing=ActionFilter.all)
