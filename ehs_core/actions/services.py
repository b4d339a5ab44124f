"""Corrective actions: adding, following up, verifying, listing (convention
as in `incidents.filing`: the request is the unit of work and
`request.identity` the caller, data is validated, refusals are domain
errors). ActionCreated and ActionUpdated carry the audit trail and the
assignee's mail."""

from __future__ import annotations

import functools
from typing import Any

from pyramid.request import Request
from sqlalchemy import Integer, bindparam, func, select
from sqlalchemy.sql.elements import ColumnElement

from ehs_core import audit
from ehs_core.actions import today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.actions.schemas import ActionFilter, Scope
from ehs_core.db import constant, count_up_to, utcnow
from ehs_core.errors import Conflict, Forbidden, Invalid
from ehs_core.events import ActionCreated, ActionUpdated, actor, publish
from ehs_core.incidents.models import Incident, Status
from ehs_core.investigation.models import RootCause
from ehs_core.security import Permission, Role, role_at_least
from ehs_core.users.models import User

# JSON field -> column
FIELDS = {"title": "title", "description": "description", "kind": "kind",
          "assigneeId": "assignee_id", "dueDate": "due_date", "rootCauseId": "root_cause_id",
          "status": "status"}
# What an assignee who is not a supervisor may set (spec "Action status").
ASSIGNEE_STATUSES = (ActionStatus.open, ActionStatus.in_progress, ActionStatus.done)


def check_references(request: Request, incident_id: int, data: dict[str, Any]) -> None:
    """The assignee is an active user; the root cause is the same incident's."""
    if data.get("assigneeId") is not None:
        user = request.dbsession.get(User, data["assigneeId"])
        if user is None or not user.active:
            raise Invalid("assigneeId", "Unknown or inactive user")
    if data.get("rootCauseId") is not None:
        cause = request.dbsession.get(RootCause, data["rootCauseId"])
        if cause is None or cause.incident_id != incident_id:
            raise Invalid("rootCauseId", "The root cause must belong to the same incident")


def create_action(request: Request, incident: Incident, data: dict[str, Any]) -> CorrectiveAction:
    """A new open action on an incident that is not closed."""
    if incident.status == Status.closed:
        raise Conflict("A closed incident takes no new actions; reopen it first")
    check_references(request, incident.id, data)
    now = utcnow()
    action = CorrectiveAction(incident_id=incident.id, status=ActionStatus.open, created_at=now,
                              updated_at=now)
    for key, attr in FIELDS.items():
        if key in data:
            setattr(action, attr, data[key])
    request.dbsession.add(action)
    request.dbsession.flush()
    created = audit.diff({}, data | {"status": ActionStatus.open})
    publish(request, ActionCreated(request, incident=incident, action=action, changes=created,
                                   actor_id=actor(request)))
    return action


def update_action(request: Request, incident: Incident, action: CorrectiveAction,
                  data: dict[str, Any]) -> CorrectiveAction:
    """Change an action: supervisors anything (verifying needs a safety
    manager), the assignee only the status, and only between open,
    in_progress and done."""
    identity = request.identity
    status = data.get("status")
    if role_at_least(identity.role, Role.supervisor):
        if status == ActionStatus.verified and action.status != ActionStatus.verified \
                and not role_at_least(identity.role, Role.safety_manager):
            raise Forbidden("Only a safety manager can verify an action")
    else:  # the assignee
        if set(data) - {"status"}:
            raise Forbidden("As the assignee you can change only the status")
        if status is not None and status not in ASSIGNEE_STATUSES:
            raise Forbidden("As the assignee you can set only open, in_progress or done")
        if action.status not in ASSIGNEE_STATUSES:
            raise Forbidden("This action is already verified or cancelled")
    check_references(request, action.incident_id, data)
    before = {key: getattr(action, attr) for key, attr in FIELDS.items()}
    for key, value in data.items():
        setattr(action, FIELDS[key], value)
    changes = audit.diff(before, data)
    if "status" in changes:
        if status == ActionStatus.done:
            action.done_at = utcnow()
        elif status in PENDING:
            action.done_at = None
    if changes:
        action.updated_at = utcnow()
        publish(request, ActionUpdated(request, incident=incident, action=action, changes=changes,
                                       actor_id=actor(request)))
    return action


def actions_matching(request: Request, scope: str, chosen: str | None) -> Any:
    """The caller's actions (`mine`) or everyone's (`all`, supervisors and
    above), narrowed by `chosen` (open, overdue, done, or done and awaiting a
    safety manager's verification): the one selection the list, its pages and
    its count share."""
    identity = request.identity
    stmt = select(CorrectiveAction, Incident).join(Incident, Incident.id == CorrectiveAction.incident_id)
    stmt = stmt.where(Incident.organization_id == identity.account.organization_id)
    if scope == Scope.all:
        if not request.has_permission(Permission.view_all_actions):
            raise Forbidden("Listing all actions needs the supervisor role")
    else:
        stmt = stmt.where(CorrectiveAction.assignee_id == identity.user_id)
    if chosen == ActionFilter.open:
        stmt = stmt.where(CorrectiveAction.status.in_(PENDING))
    elif chosen == ActionFilter.overdue:
        stmt = stmt.where(CorrectiveAction.status.in_(PENDING),
                          CorrectiveAction.due_date < today(request.registry))
    elif chosen == ActionFilter.done:
        stmt = stmt.where(CorrectiveAction.status.in_((ActionStatus.done, ActionStatus.verified)))
    elif chosen == ActionFilter.awaiting_verification:
        stmt = stmt.where(CorrectiveAction.status == ActionStatus.done)
    return stmt


def list_actions(request: Request, scope: str, chosen: str | None, limit: int | None = None,
                 offset: int = 0) -> list[tuple[CorrectiveAction, Incident]]:
    """The matching actions soonest due first (spec: `GET /api/actions`
    "sorted by due date"); `limit` and `offset` give the pages' slices."""
    stmt = actions_matching(request, scope, chosen).order_by(
        CorrectiveAction.due_date.is_(None), CorrectiveAction.due_date, CorrectiveAction.id)
    if limit is not None:
        stmt = stmt.limit(limit).offset(offset)
    return [(action, incident) for action, incident in request.dbsession.execute(stmt).all()]


def actions_page(request: Request, scope: str, chosen: str | None, limit: int,
                 offset: int) -> tuple[list[tuple[CorrectiveAction, Incident]], int]:
    """A page of `list_actions` and how many actions match in all, read in
    one statement (the total is a window count of the rows the sort reads
    anyway: a count of its own joined every incident of the organization
    again). A page past the end has no row to carry the total: 0 then."""
    stmt = actions_matching(request, scope, chosen).add_columns(func.count().over()).order_by(
        CorrectiveAction.due_date.is_(None), CorrectiveAction.due_date, CorrectiveAction.id)
    rows = request.dbsession.execute(stmt.limit(limit).offset(offset)).all()
    return [(action, incident) for action, incident, _ in rows], rows[0][2] if rows else 0


def count_actions(request: Request, scope: str, chosen: str | None) -> int:
    """How many actions `list_actions` would list."""
    matching = actions_matching(request, scope, chosen).with_only_columns(CorrectiveAction.id)
    return request.dbsession.execute(select(func.count()).select_from(matching.subquery())).scalar_one()


@functools.cache
def open_actions_count(up_to: int | None = None) -> ColumnElement[int]:
    """The actions still to do of the person named by the bound parameter
    `me`, as a scalar SQL expression made once (the menu's badge, see
    ui.directives.badge_parameters), counting at most `up_to` of them."""
    return count_up_to(select(CorrectiveAction.id).where(
        CorrectiveAction.assignee_id == bindparam("me", type_=Integer),
        CorrectiveAction.status.in_([constant(status.value) for status in PENDING])), up_to)


def add_evidence(request: Request, incident: Incident, action: CorrectiveAction, upload: Any) -> Any:
    """A photo or PDF showing the action was done, kept with the incident's
    files and named as the action's evidence; the same checks as any file
    (`attachments.storage.save_upload`, which raises Refused)."""
    from ehs_core.attachments.storage import save_upload

    # Lock the incident: concurrent uploads must not exceed its file limit.
    locked = request.dbsession.get(Incident, incident.id, with_for_update=True)
    return save_upload(request, locked, upload, request.identity.user_id, action_id=action.id)
