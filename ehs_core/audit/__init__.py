"""The audit trail: who created or changed what on an incident, read back as
the incident's timeline. Entries are written by listeners on the events the
operations publish (`audit/listeners.py`, as Kinto's history plugin does),
never by the operations themselves."""

from __future__ import annotations

import datetime as dt
import decimal
from enum import Enum
from typing import Any

from pyramid.config import Configurator
from sqlalchemy.orm import Session

from ehs_core.audit.models import AuditEntry


def jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Changed fields as {field: {old, new}} (JSON values)."""
    return {key: {"old": jsonable(before.get(key)), "new": jsonable(value)}
            for key, value in after.items() if jsonable(before.get(key)) != jsonable(value)}


def record(dbsession: Session, incident_id: int, action: str, changes: dict[str, Any],
           actor_id: int | None) -> AuditEntry:
    """Add an entry. `actor_id` comes from the event: None where the actor
    must not be recorded (anonymous reports, kiosk links)."""
    entry = AuditEntry(incident_id=incident_id, action=action, actor_id=actor_id,
                       changes={k: v for k, v in changes.items()})
    dbsession.add(entry)
    return entry


def includeme(config: Configurator) -> None:
    config.scan(".views")
    config.scan(".listeners")
