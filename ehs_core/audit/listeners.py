"""The audit trail, written from the events the operations publish (Kinto's
history plugin): one listener per event, each naming the entry's action and
the changes it keeps. The actor is the event's `actor_id`, so an anonymous
report or a kiosk link records nobody, whichever face filed it."""

from __future__ import annotations

from typing import Any

from pyramid.events import subscriber

from ehs_core import audit
from ehs_core.events import (
    ActionCreated,
    ActionUpdated,
    AttachmentAdded,
    AttachmentRemoved,
    IncidentCreated,
    IncidentTransitioned,
    IncidentUpdated,
    InvestigationUpdated,
    PersonChanged,
    RootCauseChanged,
)


def _id(old: int | None, new: int | None) -> dict[str, Any]:
    return {"id": {"old": old, "new": new}}


@subscriber(IncidentCreated)
def incident_created(event: IncidentCreated) -> None:
    audit.record(event.request.dbsession, event.incident.id, "incident.created", event.changes,
                 event.actor_id)


@subscriber(IncidentUpdated)
def incident_updated(event: IncidentUpdated) -> None:
    audit.record(event.request.dbsession, event.incident.id, "incident.updated", event.changes,
                 event.actor_id)


@subscriber(IncidentTransitioned)
def incident_transitioned(event: IncidentTransitioned) -> None:
    audit.record(event.request.dbsession, event.incident.id, "incident.transitioned", event.changes,
           event.actor_id)


@subscriber(InvestigationUpdated)
def investigation_updated(event: InvestigationUpdated) -> None:
    action = "investigation.created" if event.created else "investigation.updated"
    audit.record(event.request.dbsession, event.incident_id, action, event.changes, event.actor_id)


@subscriber(RootCauseChanged)
def root_cause_changed(event: RootCauseChanged) -> None:
    item = event.root_cause
    if event.change == "deleted":  # the id first, then what was removed
        changes = _id(item.id, None) | event.changes
    else:
        changes = event.changes | _id(None if event.change == "created" else item.id, item.id)
    audit.record(event.request.dbsession, event.incident_id, f"root_cause.{event.change}", changes,
           event.actor_id)


@subscriber(ActionCreated)
def action_created(event: ActionCreated) -> None:
    audit.record(event.request.dbsession, event.incident.id, "action.created",
           event.changes | _id(None, event.action.id), event.actor_id)


@subscriber(ActionUpdated)
def action_updated(event: ActionUpdated) -> None:
    audit.record(event.request.dbsession, event.incident.id, "action.updated",
           event.changes | _id(event.action.id, event.action.id), event.actor_id)


@subscriber(AttachmentAdded)
def attachment_added(event: AttachmentAdded) -> None:
    item = event.attachment
    audit.record(event.request.dbsession, event.incident_id, "attachment.created",
           {"id": {"old": None, "new": item.id}, "filename": {"old": None, "new": item.filename},
            "contentType": {"old": None, "new": item.content_type}}, event.actor_id)


@subscriber(AttachmentRemoved)
def attachment_removed(event: AttachmentRemoved) -> None:
    item = event.attachment
    audit.record(event.request.dbsession, event.incident_id, "attachment.deleted",
           {"id": {"old": item.id, "new": None}, "filename": {"old": item.filename, "new": None}},
           event.actor_id)


@subscriber(PersonChanged)
def person_changed(event: PersonChanged) -> None:
    """Entries `person.created|updated|deleted`, read by supervisors and above
    only (`ehs_core.people.may_read_trail`): they name the people involved."""
    item = event.person
    if event.change == "deleted":
        changes = _id(item.id, None) | event.changes
    else:
        changes = event.changes | _id(None if event.change == "created" else item.id, item.id)
    audit.record(event.request.dbsession, event.incident_id, f"person.{event.change}", changes,
                 event.actor_id)
