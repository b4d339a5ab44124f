from __future__ import annotations

from typing import Any

import colander
from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core import audit
from ehs_core.db import utcnow
from ehs_core.errors import invalid
from ehs_core.incidents.resources import IncidentContext, child_of_incident
from ehs_core.investigation import investigation_json, root_cause_json
from ehs_core.investigation.models import Investigation, RootCause
from ehs_core.schemas import Bool, Int, StrList, drop, field, text
from ehs_core.security import Permission
from ehs_core.users.models import User


class InvestigationSchema(colander.MappingSchema):
    leadId = field(Int(nullable=True), missing=drop)
    method = text(100, missing=drop, nullable=True)
    summary = text(20000, missing=drop, nullable=True)
    completed = field(Bool(), missing=drop)


class RootCauseSchema(colander.MappingSchema):
    category = text(100, min_length=1)
    description = text(20000, min_length=1)
    whys = field(StrList(max_items=20), missing=())


class RootCauseUpdateSchema(colander.MappingSchema):
    category = text(100, min_length=1, missing=drop)
    description = text(20000, min_length=1, missing=drop)
    whys = field(StrList(max_items=20), missing=drop)


class RootCauseContext:
    def __init__(self, incident_context: IncidentContext, root_cause: RootCause) -> None:
        self.incident_context = incident_context
        self.root_cause = root_cause
        # The incident's own rules decide (supervisors manage investigations).
        self.__acl__ = incident_context.__acl__


def root_cause_factory(request: Request) -> RootCauseContext:
    item, incident_context = child_of_incident(request, RootCause)
    return RootCauseContext(incident_context, item)


@view_config(route_name="incident.investigation", request_method="PUT", renderer="json",
             permission=Permission.manage_investigation, body=InvestigationSchema,
             responses=(200, 201))
def put_investigation(context: IncidentContext, request: Request) -> dict[str, Any]:
    data = request.validated
    dbsession = request.dbsession
    incident = context.incident
    if data.get("leadId") is not None and dbsession.get(User, data["leadId"]) is None:
        raise invalid("leadId", "Unknown user")
    item = dbsession.execute(select(Investigation).where(
        Investigation.incident_id == incident.id)).scalar()
    created = item is None
    if created:
        item = Investigation(incident_id=incident.id, completed=False, created_at=utcnow())
        dbsession.add(item)
    attrs = {"leadId": "lead_id", "method": "method", "summary": "summary", "completed": "completed"}
    before = {key: getattr(item, attr) for key, attr in attrs.items()}
    for key, value in data.items():
        setattr(item, attrs[key], value)
    item.updated_at = utcnow()
    dbsession.flush()
    changes = audit.diff({} if created else before, data)
    if created or changes:
        audit.record(request, incident.id,
                     "investigation.created" if created else "investigation.updated", changes)
    request.response.status = 201 if created else 200
    return investigation_json(item)


@view_config(route_name="incident.root_causes", request_method="POST", renderer="json",
             permission=Permission.manage_investigation, body=RootCauseSchema,
             responses=(201,))
def create_root_cause(context: IncidentContext, request: Request) -> dict[str, Any]:
    data = request.validated
    item = RootCause(incident_id=context.incident.id, created_at=utcnow(), category=data["category"],
                     description=data["description"], whys=list(data["whys"]))
    request.dbsession.add(item)
    request.dbsession.flush()
    audit.record(request, context.incident.id, "root_cause.created",
                 audit.diff({}, data) | {"id": {"old": None, "new": item.id}})
    request.response.status = 201
    return root_cause_json(item)


@view_config(route_name="root_cause", request_method="PATCH", renderer="json",
             permission=Permission.manage_investigation, body=RootCauseUpdateSchema)
def update_root_cause(context: RootCauseContext, request: Request) -> dict[str, Any]:
    data = request.validated
    item = context.root_cause
    before = {key: getattr(item, key) for key in data}
    for key, value in data.items():
        setattr(item, key, value)
    changes = audit.diff(before, data)
    if changes:
        audit.record(request, item.incident_id, "root_cause.updated",
                     changes | {"id": {"old": item.id, "new": item.id}})
    return root_cause_json(item)


@view_config(route_name="root_cause", request_method="DELETE", permission=Permission.manage_investigation,
             responses=(204,))
def delete_root_cause(context: RootCauseContext, request: Request) -> HTTPNoContent:
    item = context.root_cause
    audit.record(request, item.incident_id, "root_cause.deleted",
                 {"id": {"old": item.id, "new": None},
                  "category": {"old": item.category, "new": None},
                  "description": {"old": item.description, "new": None}})
    request.dbsession.delete(item)
    return HTTPNoContent()
