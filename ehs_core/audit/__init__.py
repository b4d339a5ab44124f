"""The audit trail: who created or changed what on an incident, read back as
the incident's timeline. Entries are written by listeners on the events the
operations publish (`audit/listeners.py`, as Kinto's history plugin does),
never by the operations themselves."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from enum import Enum
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import insert
from sqlalchemy.orm import Session

from ehs_core.audit.models import AuditEntry
from ehs_core.db import mark_written, utcnow
from ehs_core.directives import register_once

# May the caller read an entry of a restricted action?
MaySee = Callable[[Request], bool]


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


# Built once. Entries are only ever added and nothing in the request reads
# them back, so each is inserted as it is recorded, with a Core statement on
# the session's connection: an object in the session, flushed by the unit of
# work, cost a report more than the insert itself.
INSERT_ENTRY = insert(AuditEntry.__table__)


def record(dbsession: Session, incident_id: int, action: str, changes: dict[str, Any],
           actor_id: int | None) -> None:
    """Add an entry. `actor_id` comes from the event: None where the actor
    must not be recorded (anonymous reports, kiosk links)."""
    dbsession.flush()  # what the entry refers to is in the database first
    dbsession.connection().execute(INSERT_ENTRY, {
        "incident_id": incident_id, "action": action, "actor_id": actor_id, "changes": dict(changes),
        "at": utcnow()})
    mark_written(dbsession)


def add_restricted_audit_action(config: Configurator, action: str, may_see: MaySee) -> None:
    """Directive: entries of `action` appear on the timeline only to callers
    for whom `may_see(request)` is true. A plugin that keeps records fewer
    people may read (the OSHA plugin's injury cases, safety managers only)
    uses it to write them to the incident's one audit trail without showing
    them to everyone who may see the incident."""
    may_see = config.maybe_dotted(may_see)

    def register() -> None:
        config.registry.setdefault("audit.restricted_actions", {})[action] = may_see

    register_once(config, "ehs.restricted_audit_action", action, register)


def readable(request: Request, entries: list[AuditEntry]) -> list[AuditEntry]:
    """The entries the caller may read (see `add_restricted_audit_action`)."""
    restricted: dict[str, MaySee] = request.registry.get("audit.restricted_actions", {})
    # Asked only of the restricted actions the entries hold: most histories
    # have none, and each answer is a permission check.
    present = {entry.action for entry in entries}.intersection(restricted) if restricted else ()
    hidden = {action for action in present if not restricted[action](request)}
    return [entry for entry in entries if entry.action not in hidden] if hidden else entries


def includeme(config: Configurator) -> None:
    from ehs_core.audit.timeline import comments_column, history_column

    config.add_directive("add_restricted_audit_action", add_restricted_audit_action)
    # The incident page reads the comments and the history with its incident.
    config.read_with_detail("timeline.comments", comments_column, page_only=True)
    config.read_with_detail("timeline.history", history_column, page_only=True)
    config.scan(".views")
    config.scan(".listeners")
