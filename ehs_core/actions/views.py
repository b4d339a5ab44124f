from __future__ import annotations

from typing import Any

from pyramid.authorization import Allow
from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core import audit
from ehs_core.actions import actions_json, today
from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.actions.schemas import (
    ActionCreateSchema,
    ActionFilter,
    ActionQuerySchema,
    ActionUpdateSchema,
    Scope,
)
from ehs_core.db import utcnow
from ehs_core.errors import APIError, invalid
from ehs_core.events import ActionCreated, ActionUpdated, publish
from ehs_core.incidents.models import Incident, Status
from ehs_core.incidents.resources import IncidentContext, child_of_incident
from ehs_core.investigation.models import RootCause
from ehs_core.security import Permission, Role, role_at_least, role_principal
from ehs_core.users.models import User

# JSON field -> column
FIELDS = {"title": "title", "description": "description", "kind": "kind",
          "assigneeId": "assignee_id", "dueDate": "due_date", "rootCauseId": "root_cause_id",
          "status": "status"}
# What an assignee who is not a supervisor may set (spec "Action status").
ASSIGNEE_STATUSES = (ActionStatus.open, ActionStatus.in_progress, ActionStatus.done)


class ActionContext:
    def __init__(self, incident_context: IncidentContext, action: CorrectiveAction) -> None:
        self.incident_context = incident_context
        self.action = action
        self.__acl__ = [(Allow, role_principal(Role.supervisor), Permission.edit_action)]
        if action.assignee_id is not None:
            self.__acl__.append((Allow, f"user:{action.assignee_id}", Permission.edit_action))


def action_factory(request: Request) -> ActionContext:
    action, incident_context = child_of_incident(request, CorrectiveAction)
    return ActionContext(incident_context, action)


def check_references(request: Request, incident_id: int, data: dict[str, Any]) -> None:
    if data.get("assigneeId") is not None:
        user = request.dbsession.get(User, data["assigneeId"])
        if user is None or not user.active:
            raise invalid("assigneeId", "Unknown or inactive user")
    if data.get("rootCauseId") is not None:
        cause = request.dbsession.get(RootCause, data["rootCauseId"])
        if cause is None or cause.incident_id != incident_id:
            raise invalid("rootCauseId", "The root cause must belong to the same incident")


@view_config(route_name="incident.actions", request_method="POST", renderer="json",
             permission=Permission.update_incident, body=ActionCreateSchema,
             responses=(201,))
def create_action(context: IncidentContext, request: Request) -> dict[str, Any]:
    data = request.validated
    incident = context.incident
    if incident.status == Status.closed:
        raise APIError(409, "A closed incident takes no new actions; reopen it first")
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
    audit.record(request, incident.id, "action.created", created | {"id": {"old": None, "new": action.id}})
    publish(request, ActionCreated(request, incident=incident, action=action))
    request.response.status = 201
    return actions_json(request, [action])[0]


@view_config(route_name="action", request_method="PATCH", renderer="json",
             permission=Permission.edit_action, body=ActionUpdateSchema)
def update_action(context: ActionContext, request: Request) -> dict[str, Any]:
    data = request.validated
    action = context.action
    identity = request.identity
    status = data.get("status")
    if role_at_least(identity.role, Role.supervisor):
        if status == ActionStatus.verified and action.status != ActionStatus.verified \
                and not role_at_least(identity.role, Role.safety_manager):
            raise APIError(403, "Only a safety manager can verify an action")
    else:  # the assignee
        if set(data) - {"status"}:
            raise APIError(403, "As the assignee you can change only the status")
        if status is not None and status not in ASSIGNEE_STATUSES:
            raise APIError(403, "As the assignee you can set only open, in_progress or done")
        if action.status not in ASSIGNEE_STATUSES:
            raise APIError(403, "This action is already verified or cancelled")
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
        audit.record(request, action.incident_id, "action.updated",
                     changes | {"id": {"old": action.id, "new": action.id}})
        publish(request, ActionUpdated(request, incident=context.incident_context.incident,
                                       action=action, changes=changes))
    return actions_json(request, [action])[0]


@view_config(route_name="actions", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=ActionQuerySchema)
def list_actions(request: Request) -> list[dict[str, Any]]:
    query = request.validated_query
    identity = request.identity
    stmt = select(CorrectiveAction, Incident).join(Incident, Incident.id == CorrectiveAction.incident_id)
    stmt = stmt.where(Incident.organization_id == identity.user.organization_id)
    if query["scope"] == Scope.all:
        if not request.has_permission(Permission.view_all_actions):
            raise APIError(403, "Listing all actions needs the supervisor role")
    else:
        stmt = stmt.where(CorrectiveAction.assignee_id == identity.user_id)
    chosen = query["filter"]
    if chosen == ActionFilter.open:
        stmt = stmt.where(CorrectiveAction.status.in_(PENDING))
    elif chosen == ActionFilter.overdue:
        stmt = stmt.where(CorrectiveAction.status.in_(PENDING),
                          CorrectiveAction.due_date < today(request.registry))
    elif chosen == ActionFilter.done:
        stmt = stmt.where(CorrectiveAction.status.in_((ActionStatus.done, ActionStatus.verified)))
    stmt = stmt.order_by(CorrectiveAction.due_date.is_(None), CorrectiveAction.due_date,
                         CorrectiveAction.id)
    rows = request.dbsession.execute(stmt).all()
    incidents = {incident.id: incident for _, incident in rows}
    return actions_json(request, [action for action, _ in rows], incidents)
