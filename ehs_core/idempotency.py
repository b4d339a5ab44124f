"""Idempotency keys (`clientId`) of what hangs off an incident: a comment
or an upload sent again after a dropped connection is stored once, and the
second request answered with the first (as a report's clientId: see
`incidents.filing`)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import advisory_lock


def stored_under(request: Request, model: Any, incident_id: int, client_id: str) -> Any:
    """The incident's row of `model` (a comment, an attachment) stored under
    `client_id`, if any. Concurrent senders of one key are serialised until
    commit (`advisory_lock`), so the second finds the first's row instead
    of meeting the unique index."""
    advisory_lock(request.dbsession, f"client-id:{model.__tablename__}:{incident_id}:{client_id}")
    return request.dbsession.execute(select(model).where(
        model.incident_id == incident_id, model.client_id == client_id)).scalar()
