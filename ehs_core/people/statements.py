"""Who may read a witness's statement, and so its photo among the
incident's files: the one rule the files (`ehs_core.attachments`) and the
people (`ehs_core.people.services`) both apply, in a module that depends on
neither's services (issue #39 item 4: a statement is for supervisors and
above and the one who wrote the entry down)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from sqlalchemy import ColumnElement, func, select

from ehs_core.attachments.models import Attachment
from ehs_core.people.models import IncidentPerson
from ehs_core.security import Identity, Role, role_at_least


def sees_all_people(identity: Identity | None) -> bool:
    """Supervisors and above see every person named on an incident they see."""
    return bool(identity and identity.is_user and identity.role is not None
                and role_at_least(identity.role, Role.supervisor))


def statement_by_column() -> ColumnElement[Any]:
    """`AttachmentRow.statement_by`, correlated to the attachment."""
    return select(func.coalesce(IncidentPerson.created_by_id, 0)).where(
        IncidentPerson.statement_attachment_id == Attachment.id).limit(1).scalar_subquery()


def may_see_statement_by(request: Request, author_id: int | None) -> bool:
    """May the caller see a file that is the photo of a statement whose
    entry `author_id` wrote (None: no statement's photo, anyone who sees the
    incident may)? The same rule as the statement's words."""
    if author_id is None or sees_all_people(request.identity):
        return True
    identity = request.identity
    return bool(identity and identity.is_user and author_id == identity.user_id)


def statement_file_hidden(request: Request, attachment_id: int) -> bool:
    """Whether a file of the incident is the photo of a statement the caller
    may not read (its download answers 404, as a missing file)."""
    if sees_all_people(request.identity):
        return False
    authors = request.dbsession.execute(select(IncidentPerson.created_by_id).where(
        IncidentPerson.statement_attachment_id == attachment_id)).scalars().all()
    return any(not may_see_statement_by(request, author or 0) for author in authors)
