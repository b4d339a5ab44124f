"""The JSON face of the workflow; the operation is `transitions.move_incident`."""

from __future__ import annotations

from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.serialize import incident_json
from ehs_core.security import Permission
from ehs_core.workflow.schemas import TransitionSchema
from ehs_core.workflow.transitions import move_incident


@view_config(route_name="incident.transitions", request_method="POST", renderer="json",
             permission=Permission.view_incident, body=TransitionSchema)
def transition(context: IncidentContext, request: Request) -> dict:
    data = request.validated
    incident = move_incident(request, context.incident, data["to"], data.get("note"))
    return incident_json(request, incident)
