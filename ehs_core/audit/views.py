from __future__ import annotations

from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.audit.timeline import audit_entries
from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.serialize import iso, person, user_names
from ehs_core.security import Permission


@view_config(route_name="incident.timeline", request_method="GET", renderer="json",
             permission=Permission.view_incident)
def timeline(context: IncidentContext, request: Request) -> list[dict]:
    entries = audit_entries(request, context.incident)
    names = user_names(request, {e.actor_id for e in entries})
    return [{"id": e.id, "at": iso(e.at), "actor": person(names, e.actor_id), "action": e.action,
             "changes": e.changes} for e in entries]
