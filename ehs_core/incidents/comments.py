"""Comments on a report (convention as in `incidents.filing`)."""

from __future__ import annotations

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.incidents.models import Comment, Incident


def list_comments(request: Request, incident: Incident) -> list[Comment]:
    """The incident's comments, oldest first (transition notes included)."""
    return list(request.dbsession.execute(
        select(Comment).where(Comment.incident_id == incident.id)
        .order_by(Comment.created_at, Comment.id)).scalars())


def add_comment(request: Request, incident: Incident, body: str) -> Comment:
    """A comment by the caller; comments are not part of the audit trail
    (the comment list is their own record)."""
    comment = Comment(incident_id=incident.id, author_id=request.identity.user_id,
                      body=body, created_at=utcnow())
    request.dbsession.add(comment)
    request.dbsession.flush()
    return comment
