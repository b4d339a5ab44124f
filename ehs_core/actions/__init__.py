"""Corrective actions: assigned, followed up, verified; notices and the daily
digest of what is due."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.actions.models import PENDING, CorrectiveAction
from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.models import Incident
from ehs_core.incidents.serialize import person, user_names
from ehs_core.serialize import iso
from ehs_core.sites.zones import server_zone  # due dates are judged in the server's zone
from ehs_core.users.models import User


def today(registry: Registry) -> dt.date:
    return dt.datetime.now(server_zone(registry)).date()


def is_overdue(action: CorrectiveAction, on: dt.date) -> bool:
    return action.status in PENDING and action.due_date is not None and action.due_date < on


def actions_json(request: Request, actions: list[CorrectiveAction],
                 incidents: dict[int, Incident] | None = None,
                 names: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """`names`: the assignees' names when already read (else one query)."""
    if names is None:
        names = user_names(request, {a.assignee_id for a in actions})
    on = today(request.registry)
    items = []
    for action in actions:
        item = {
            "id": action.id, "title": action.title, "description": action.description,
            "kind": action.kind, "assigneeId": action.assignee_id,
            "assignee": person(names, action.assignee_id),
            "dueDate": action.due_date.isoformat() if action.due_date else None,
            "rootCauseId": action.root_cause_id, "status": action.status,
            "overdue": is_overdue(action, on), "createdAt": iso(action.created_at),
            "updatedAt": iso(action.updated_at), "doneAt": iso(action.done_at),
        }
        if incidents is not None:
            incident = incidents[action.incident_id]
            item["incident"] = {"number": incident.number, "reference": incident.reference,
                                "title": incident.title, "status": incident.status}
        items.append(item)
    return items


def actions_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    # The assignees' names come with the actions: one query, not two.
    assignee = select(User.name).where(User.id == CorrectiveAction.assignee_id).scalar_subquery()
    read = request.dbsession.execute(select(CorrectiveAction, assignee).where(
        CorrectiveAction.incident_id.in_([i.id for i in incidents])).order_by(CorrectiveAction.id)).all()
    rows = [action for action, _ in read]
    names = {action.assignee_id: name for action, name in read if action.assignee_id is not None}
    found: dict[int, list] = {i.id: [] for i in incidents}
    for action, item in zip(rows, actions_json(request, rows, names=names), strict=True):
        found[action.incident_id].append(item)
    return found


def includeme(config: Configurator) -> None:
    from ehs_core.actions.digest import daily_schedule, send_digests

    config.add_route("incident.actions", INCIDENT + "/actions", factory=FACTORY)
    config.add_route("actions", "/api/actions")
    config.add_route("action", r"/api/actions/{id:\d{1,9}}",
                     factory="ehs_core.actions.resources.action_factory")
    config.add_incident_section("actions", actions_section, detail_only=True, fresh=list)
    config.add_mail_template("action_assigned", "ehs_core.mail:templates/action_assigned.txt")
    config.add_mail_template("action_digest", "ehs_core.mail:templates/action_digest.txt")
    config.add_periodic_job("actions.digest", send_digests, daily_schedule(config.registry))
    config.scan(".views")
    config.scan(".notices")
    config.include(".pages")  # /actions, /actions/<id>, adding from the incident page
