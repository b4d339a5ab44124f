"""Moving an incident through the workflow table (convention as in
`incidents.filing`): checks the move, the caller's role and every condition
and guard, applies the table's effects, keeps the note as a comment and
publishes IncidentTransitioned."""

from __future__ import annotations

from pyramid.request import Request

from ehs_core import audit
from ehs_core.db import utcnow
from ehs_core.errors import Conflict, Forbidden
from ehs_core.events import IncidentTransitioned, actor, publish
from ehs_core.incidents.models import Comment, Incident
from ehs_core.workflow import blocked_reason, may_make
from ehs_core.workflow.table import Effect, find


def move_incident(request: Request, incident: Incident, target: str, note: str | None) -> Incident:
    """Move `incident` to `target`; returns the incident, locked and fresh.
    Refuses with Conflict (no such move, or a condition not met yet) or
    Forbidden (the move needs a higher role)."""
    # Lock the incident so two moves at once cannot both pass their checks.
    incident = request.dbsession.get(Incident, incident.id, with_for_update=True,
                                     populate_existing=True)
    source = incident.status
    move = find(source, target)
    if move is None:
        raise Conflict(f"An incident cannot move from {source} to {target}")
    if not may_make(request, move):
        raise Forbidden(f"Moving from {source} to {target} needs the role {move.minimum_role}")
    reason = blocked_reason(request, incident, move)
    if reason:
        raise Conflict(reason)
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
    if note:
        request.dbsession.add(Comment(incident_id=incident.id, author_id=request.identity.user_id,
                                      body=note, transition_to=move.target))
        changes["note"] = {"old": None, "new": note}
    publish(request, IncidentTransitioned(request, incident=incident, source=source,
                                          target=move.target.value, note=note, changes=changes,
                                          actor_id=actor(request)))
    return incident
