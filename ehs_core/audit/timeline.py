"""An incident's audit trail as the timeline endpoint and the incident page
show it: oldest first, each entry with its actor's name (none for an
anonymous report)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.audit.models import AuditEntry
from ehs_core.incidents.models import Incident
from ehs_core.incidents.serialize import user_names

# How each kind of entry reads on the page.
SUMMARIES = {
    "incident.created": "Reported",
    "incident.updated": "Details changed",
    "incident.transitioned": "Moved on",
    "investigation.updated": "Investigation updated",
    "root_cause.created": "Root cause added",
    "root_cause.updated": "Root cause changed",
    "root_cause.deleted": "Root cause removed",
    "action.created": "Corrective action added",
    "action.updated": "Corrective action changed",
    "attachment.created": "File added",
    "attachment.deleted": "File removed",
}


@dataclass(frozen=True)
class TimelineEntry:
    entry: AuditEntry
    actor_name: str | None

    @property
    def at(self) -> dt.datetime:
        return self.entry.at

    @property
    def actor(self) -> str | None:
        return self.actor_name

    @property
    def summary(self) -> str:
        """"Moved on: triage → investigation"; "Details changed: title, severity"."""
        changes: dict[str, Any] = self.entry.changes or {}
        text = SUMMARIES.get(self.entry.action, self.entry.action.replace(".", " ").replace("_", " "))
        status = changes.get("status")
        if self.entry.action == "incident.transitioned" and isinstance(status, dict):
            return f"{text}: {status.get('old')} → {status.get('new')}".replace("_", " ")
        if self.entry.action.endswith(".updated") and changes:
            if isinstance(status, dict) and len(changes) == 1:
                return f"{text}: {status.get('old')} → {status.get('new')}".replace("_", " ")
            return f"{text}: {', '.join(sorted(changes))}"
        return text


def audit_entries(request: Request, incident: Incident) -> list[AuditEntry]:
    return list(request.dbsession.execute(
        select(AuditEntry).where(AuditEntry.incident_id == incident.id)
        .order_by(AuditEntry.at, AuditEntry.id)).scalars())


def timeline_entries(request: Request, incident: Incident, entries: list[AuditEntry] | None = None,
                     names: dict[int, str] | None = None) -> list[TimelineEntry]:
    """`entries` and `names` when the caller has read them already (the
    incident page reads the names of commenters and actors at once)."""
    entries = audit_entries(request, incident) if entries is None else entries
    if names is None:
        names = user_names(request, {e.actor_id for e in entries})
    return [TimelineEntry(e, names.get(e.actor_id) if e.actor_id is not None else None) for e in entries]
