"""The investigation of an incident and its root causes (convention as in
`incidents.filing`: the request is the unit of work, data is validated,
refusals are domain errors). Each change publishes InvestigationUpdated or
RootCauseChanged; the audit trail is written from those."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core import audit
from ehs_core.db import utcnow
from ehs_core.errors import Invalid
from ehs_core.events import InvestigationUpdated, RootCauseChanged, actor, publish
from ehs_core.incidents.models import Incident
from ehs_core.investigation import forget_loaded
from ehs_core.investigation.models import Investigation, RootCause
from ehs_core.users.models import User

# JSON field -> column
INVESTIGATION_FIELDS = {"leadId": "lead_id", "method": "method", "summary": "summary",
                        "completed": "completed"}


def put_investigation(request: Request, incident: Incident,
                      data: dict[str, Any]) -> tuple[Investigation, bool]:
    """Start the incident's investigation or change it; returns
    (investigation, created). A new lead must be an active person of the
    organization, as an action's assignee must (a deactivated person reads
    no mail and cannot sign in); a lead deactivated since stays while the
    rest is edited."""
    forget_loaded(request)
    dbsession = request.dbsession
    item = dbsession.execute(select(Investigation).where(
        Investigation.incident_id == incident.id)).scalar()
    lead_id = data.get("leadId")
    if lead_id is not None and (item is None or lead_id != item.lead_id):
        lead = dbsession.get(User, lead_id)
        if lead is None or not lead.active or lead.organization_id != incident.organization_id:
            raise Invalid("leadId", "Unknown or inactive user")
    created = item is None
    if created:
        item = Investigation(incident_id=incident.id, completed=False, created_at=utcnow())
        dbsession.add(item)
    before = {key: getattr(item, attr) for key, attr in INVESTIGATION_FIELDS.items()}
    for key, value in data.items():
        setattr(item, INVESTIGATION_FIELDS[key], value)
    item.updated_at = utcnow()
    # The lead's copy the queues read (Incident.investigation_lead_id).
    if incident.investigation_lead_id != item.lead_id:
        incident.investigation_lead_id = item.lead_id
    dbsession.flush()
    changes = audit.diff({} if created else before, data)
    if created or changes:
        publish(request, InvestigationUpdated(request, incident_id=incident.id, investigation=item,
                                              created=created, changes=changes,
                                              actor_id=actor(request)))
    return item, created


def add_root_cause(request: Request, incident: Incident, data: dict[str, Any]) -> RootCause:
    """A root cause with its "five whys"."""
    forget_loaded(request)
    item = RootCause(incident_id=incident.id, created_at=utcnow(), category=data["category"],
                     description=data["description"], whys=list(data["whys"]))
    request.dbsession.add(item)
    request.dbsession.flush()
    publish(request, RootCauseChanged(request, incident_id=incident.id, root_cause=item, change="created",
                                      changes=audit.diff({}, data), actor_id=actor(request)))
    return item


def update_root_cause(request: Request, item: RootCause, data: dict[str, Any]) -> RootCause:
    forget_loaded(request)
    before = {key: getattr(item, key) for key in data}
    for key, value in data.items():
        setattr(item, key, value)
    changes = audit.diff(before, data)
    if changes:
        publish(request, RootCauseChanged(request, incident_id=item.incident_id, root_cause=item,
                                          change="updated", changes=changes, actor_id=actor(request)))
    return item


def remove_root_cause(request: Request, item: RootCause) -> None:
    forget_loaded(request)
    publish(request, RootCauseChanged(request, incident_id=item.incident_id, root_cause=item,
                                      change="deleted",
                                      changes={"category": {"old": item.category, "new": None},
                                               "description": {"old": item.description, "new": None}},
                                      actor_id=actor(request)))
    request.dbsession.delete(item)
