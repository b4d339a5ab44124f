"""Comments on a report (convention as in `incidents.filing`)."""

from __future__ import annotations

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.errors import Conflict, Unprocessable
from ehs_core.events import CommentCreated, actor, publish
from ehs_core.idempotency import stored_under
from ehs_core.incidents.models import Comment, Incident


def list_comments(request: Request, incident: Incident) -> list[Comment]:
    """The incident's comments, oldest first (transition notes included)."""
    return list(request.dbsession.execute(
        select(Comment).where(Comment.incident_id == incident.id)
        .order_by(Comment.created_at, Comment.id)).scalars())


def add_comment(request: Request, incident: Incident, body: str,
                client_id: str | None = None) -> tuple[Comment, bool]:
    """A comment by the caller; returns (comment, created). Comments are not
    part of the audit trail (the comment list is their own record). With a
    `client_id` the same comment sent again (a retry after a dropped
    connection) gives back the stored one: only to its author and only for
    the same text (else Conflict / Unprocessable, as a report's clientId)."""
    author_id = request.identity.user_id
    if client_id is not None:
        existing = stored_under(request, Comment, incident.id, client_id)
        if existing is not None:
            if existing.author_id != author_id:
                raise Conflict("This clientId was already used")
            if existing.body != body:
                raise Unprocessable("This clientId was already used for a different comment")
            return existing, False
    comment = Comment(incident_id=incident.id, author_id=author_id, body=body, created_at=utcnow(),
                      client_id=client_id)
    request.dbsession.add(comment)
    request.dbsession.flush()
    publish(request, CommentCreated(request, incident=incident, comment=comment, actor_id=actor(request)))
    return comment, True
