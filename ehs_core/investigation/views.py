"""The JSON face of investigations; the operations live in `services`."""

from __future__ import annotations

from typing import Any

from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.incidents.resources import IncidentContext, child_of_incident
from ehs_core.investigation import investigation_json, root_cause_json, services
from ehs_core.investigation.models import RootCause
from ehs_core.investigation.schemas import InvestigationSchema, RootCauseSchema, RootCauseUpdateSchema
from ehs_core.security import Permission


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
    item, created = services.put_investigation(request, context.incident, request.validated)
    request.response.status = 201 if created else 200
    return investigation_json(item)


@view_config(route_name="incident.root_causes", request_method="POST", renderer="json",
             permission=Permission.manage_investigation, body=RootCauseSchema,
             responses=(201,))
def create_root_cause(context: IncidentContext, request: Request) -> dict[str, Any]:
    item = services.add_root_cause(request, context.incident, request.validated)
    request.response.status = 201
    return root_cause_json(item)


@view_config(route_name="root_cause", request_method="PATCH", renderer="json",
             permission=Permission.manage_investigation, body=RootCauseUpdateSchema)
def update_root_cause(context: RootCauseContext, request: Request) -> dict[str, Any]:
    item = services.update_root_cause(request, context.root_cause, request.validated)
    return root_cause_json(item)


@view_config(route_name="root_cause", request_method="DELETE", permission=Permission.manage_investigation,
             responses=(204,))
def delete_root_cause(context: RootCauseContext, request: Request) -> HTTPNoContent:
    services.remove_root_cause(request, context.root_cause)
    return HTTPNoContent()
