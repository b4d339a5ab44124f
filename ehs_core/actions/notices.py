"""Mail the assignee of a new (or reassigned) corrective action."""

from __future__ import annotations

from pyramid.events import subscriber

from ehs_core.events import ActionCreated, ActionUpdated
from ehs_core.investigation.models import RootCause
from ehs_core.mail import Localized, send_mail, translate
from ehs_core.ui.rendering import day
from ehs_core.users.models import User


def _notify(event: ActionCreated | ActionUpdated) -> None:
    action, incident, request = event.action, event.incident, event.request
    user = request.dbsession.get(User, action.assignee_id) if action.assignee_id else None
    if user is None or not user.active:
        return
    cause = request.dbsession.get(RootCause, action.root_cause_id) if action.root_cause_id else None
    # What is to be done, why (the cause it answers) and by when: the mail
    # alone is enough to start (issue #36 item 13).
    due_date = action.due_date
    send_mail(request, user.email, "action_assigned", name=user.name, title=action.title,
              reference=incident.reference, incident_title=incident.title, number=incident.number,
              action_id=action.id, description=action.description or "",
              cause=f"{cause.category}: {cause.description}" if cause else "",
              why=translate("Why: ${cause}", mapping={"cause": f"{cause.category}: {cause.description}"})
              if cause else "",
              due=Localized(lambda localizer: day(due_date)) if due_date else translate("no due date"))


@subscriber(ActionCreated)
def notify_assignee(event: ActionCreated) -> None:
    _notify(event)


@subscriber(ActionUpdated)
def notify_new_assignee(event: ActionUpdated) -> None:
    if "assigneeId" in event.changes:
        _notify(event)
