"""The audit trail: who created or changed what on an incident, read back as
the incident's timeline."""

from __future__ import annotations

import datetime as dt
import decimal
from enum import Enum
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request

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


def record(request: Request, incident_id: int, action: str, changes: dict[str, Any],
           actor_id: int | type[Ellipsis] | None = ...) -> AuditEntry:
    """Add an entry; the actor defaults to the signed-in user. Pass
    `actor_id=None` where the actor must not be recorded (anonymous reports)."""
    if actor_id is ...:
        identity = request.identity
        actor_id = identity.user_id if identity is not None else None
    entry = AuditEntry(incident_id=incident_id, action=action, actor_id=actor_id,
                       changes={k: v for k, v in changes.items()})
    request.dbsession.add(entry)
    return entry


def includeme(config: Configurator) -> None:
    config.scan(".views")
