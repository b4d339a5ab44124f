"""What the workflow adds to an incident's detail: `transitions` (the moves
the caller may make, each with `blockedReason`) and `can` (what the caller
may do with it), contributed through `add_incident_section` like any other
part. The moves are worked out once per incident and request: `can.transition`
reads the same list the `transitions` section shows."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request

from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import IncidentContext, known_context
from ehs_core.security import Permission
from ehs_core.workflow import transitions_for


def workflow_moves(request: Request) -> dict[tuple[int, str], list[dict[str, str | None]]]:
    """`request.workflow_moves`: each incident's moves in this request."""
    return {}


def moves(request: Request, incident: Incident) -> list[dict[str, str | None]]:
    """transitions_for(...), computed once per incident and request."""
    cache = request.workflow_moves
    key = (incident.id, incident.status)
    if key not in cache:
        cache[key] = transitions_for(request, incident)
    return cache[key]


def context_of(request: Request, incident: Incident) -> IncidentContext:
    """The context already made for this incident in this request (the
    route's, whose ACL is loaded); else a new one. An incident without a
    number was filed in this request and is not numbered yet: nothing hangs
    off it, so its ACL needs no query for assignees."""
    return known_context(request, incident) or IncidentContext(request, incident,
                                                               fresh=incident.number is None)


def can_flags(request: Request, incident: Incident) -> dict[str, bool]:
    context = context_of(request, incident)
    supervisor = request.has_permission(Permission.update_incident, context)
    investigate = bool(request.has_permission(Permission.manage_investigation, context))  # asked once
    return {
        "update": bool(supervisor),
        "transition": any(t["blockedReason"] is None for t in moves(request, incident)),
        "comment": bool(request.has_permission(Permission.comment_incident, context)),
        "upload": bool(request.has_permission(Permission.upload_attachment, context)),
        "investigate": investigate,
        "addRootCause": investigate,
        "addAction": bool(supervisor) and incident.status != "closed",
    }


def transitions_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    return {incident.id: moves(request, incident) for incident in incidents}


def can_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    return {incident.id: can_flags(request, incident) for incident in incidents}
