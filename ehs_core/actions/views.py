"""The JSON face of corrective actions; the operations live in `services`."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.actions import actions_json, evidence_json, services
from ehs_core.actions.resources import ActionContext
from ehs_core.actions.schemas import (
    ActionCreateSchema,
    ActionQuerySchema,
    ActionUpdateSchema,
)
from ehs_core.attachments import uploaded_file
from ehs_core.incidents.resources import IncidentContext
from ehs_core.security import Permission


@view_config(route_name="incident.actions", request_method="POST", renderer="json",
             permission=Permission.update_incident, body=ActionCreateSchema,
             responses=(201,))
def create_action(context: IncidentContext, request: Request) -> dict[str, Any]:
    action = services.create_action(request, context.incident, request.validated)
    request.response.status = 201
    return actions_json(request, [action])[0]


@view_config(route_name="action", request_method="PATCH", renderer="json",
             permission=Permission.edit_action, body=ActionUpdateSchema)
def update_action(context: ActionContext, request: Request) -> dict[str, Any]:
    action = services.update_action(request, context.incident_context.incident, context.action,
                                     request.validated)
    return actions_json(request, [action])[0]


@view_config(route_name="actions", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=ActionQuerySchema)
def list_actions(request: Request) -> list[dict[str, Any]]:
    query = request.validated_query
    rows = services.list_actions(request, query["scope"], query["filter"])
    incidents = {incident.id: incident for _, incident in rows}
    return actions_json(request, [action for action, _ in rows], incidents)


@view_config(route_name="action.evidence", request_method="POST", renderer="json",
             permission=Permission.edit_action, responses=(201,), multipart={"file": "file"})
def add_evidence(context: ActionContext, request: Request) -> dict[str, Any]:
    """A photo or PDF showing the action was done (the assignee's proof,
    read by whoever verifies it), in the field `file`."""
    item = services.add_evidence(request, context.incident_context.incident, context.action,
                                 uploaded_file(request))
    request.response.status = 201
    return evidence_json(item)
