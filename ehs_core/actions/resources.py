"""Who may touch a corrective action: supervisors and its assignee edit it;
whoever may see its incident sees it (the incident's own ACL), so the JSON
API and the action page answer 404 and 403 alike."""

from __future__ import annotations

from typing import Any

from pyramid.authorization import Allow
from pyramid.httpexceptions import HTTPNotFound
from pyramid.request import Request

from ehs_core.actions.models import CorrectiveAction
from ehs_core.incidents.resources import IncidentContext, child_of_incident, context_for
from ehs_core.security import Permission, Role, role_principal


class ActionContext:
    def __init__(self, incident_context: IncidentContext, action: CorrectiveAction) -> None:
        self.incident_context = incident_context
        self.action = action
        acl: list[tuple[Any, ...]] = [(Allow, role_principal(Role.supervisor), Permission.edit_action)]
        if action.assignee_id is not None:
            acl.append((Allow, f"user:{action.assignee_id}", Permission.edit_action))
        # Seeing and commenting follow the incident (reporter, assignees, supervisors).
        self.__acl__ = acl + list(incident_context.__acl__)


def action_factory(request: Request) -> ActionContext:
    action, incident_context = child_of_incident(request, CorrectiveAction)
    return ActionContext(incident_context, action)


def action_context(request: Request, action_id: int) -> ActionContext:
    """The context of an action named in a form (several at once): 404 when
    it is missing or its incident is not the caller's to see."""
    action = request.dbsession.get(CorrectiveAction, action_id)
    if action is None:
        raise HTTPNotFound()
    return ActionContext(context_for(request, action.incident_id), action)
