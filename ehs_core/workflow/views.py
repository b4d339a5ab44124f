from __future__ import annotations

import colander
from pyramid.request import Request
from pyramid.view import view_config

from ehs_core import audit
from ehs_core.db import utcnow
from ehs_core.errors import APIError
from ehs_core.events import IncidentTransitioned, publish
from ehs_core.incidents.models import Comment, Incident, Status
from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.serialize import incident_json
from ehs_core.schemas import Choice, field, text
from ehs_core.security import Permission
from ehs_core.workflow import blocked_reason, may_make
from ehs_core.workflow.table import Effect, find


class TransitionSchema(colander.MappingSchema):
    to = field(Choice(Status))
    note = text(20000, missing=None, nullable=True)


@view_config(route_name="incident.transitions", request_method="POST", renderer="json",
             permission=Permission.view_incident, body=TransitionSchema)
def transition(context: IncidentContext, request: Request) -> dict:
    data = request.validated
    # Lock the incident so two moves at once cannot both pass their checks.
    incident = request.dbsession.get(Incident, context.incident.id, with_for_update=True,
                                     populate_existing=True)
    source = incident.status
    move = find(source, data["to"])
    if move is None:
        raise APIError(409, f"An incident cannot move from {source} to {data['to']}")
    if not may_make(request, move):
        raise APIError(403, f"Moving from {source} to {data['to']} needs the role {move.minimum_role}")
    reason = blocked_reason(request, incident, move)
    if reason:
        raise APIError(409, reason)
    now = utcnow()
    changes = {"status": {"old": source, "new": move.target.value}}
    incident.status = move.target
    if move.effect is Effect.set_closed_at:
        changes["closedAt"] = {"old": None, "new": audit.jsonable(now)}
        incident.closed_at = now
    elif move.effect is Effect.clear_closed_at:
        changes["closedAt"] = {"old": audit.jsonable(incident.closed_at), "new": None}
        incident.closed_at = None
    incident.updated_at = now
    note = data.get("note")
    if note:
        request.dbsession.add(Comment(incident_id=incident.id, author_id=request.identity.user_id,
                                      body=note, transition_to=move.target))
        changes["note"] = {"old": None, "new": note}
    audit.record(request, incident.id, "incident.transitioned", changes)
    publish(request, IncidentTransitioned(request, incident=incident, source=source,
                                          target=move.target.value, note=note))
    return incident_json(request, incident)
