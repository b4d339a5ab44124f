"""Corrective actions: assigned, followed up, verified; notices and the daily
digest of what is due."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import ColumnElement, select

from ehs_core.actions.models import PENDING, CorrectiveAction
from ehs_core.attachments import attachment_json
from ehs_core.attachments.models import Attachment
from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.models import Incident
from ehs_core.incidents.serialize import person, user_names
from ehs_core.rowsjson import DATE, INSTANT, columns_of, decoder, json_rows
from ehs_core.serialize import iso
from ehs_core.sites.zones import server_zone  # due dates are judged in the server's zone
from ehs_core.users.models import User


def today(registry: Registry) -> dt.date:
    return dt.datetime.now(server_zone(registry)).date()


def is_overdue(action: CorrectiveAction, on: dt.date) -> bool:
    return action.status in PENDING and action.due_date is not None and action.due_date < on


def actions_json(request: Request, actions: list[CorrectiveAction],
                 incidents: dict[int, Incident] | None = None,
                 names: dict[int, str] | None = None, with_evidence: bool = True) -> list[dict[str, Any]]:
    """`names`: the assignees' names when already read (else one query);
    `with_evidence`: each action's evidence files (one query), which the
    incident's detail leaves to its own list of files."""
    if names is None:
        names = user_names(request, {a.assignee_id for a in actions})
    on = today(request.registry)
    evidence = evidence_of(request, [a.id for a in actions]) if with_evidence else None
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
        if evidence is not None:
            item["evidence"] = [evidence_json(file) for file in evidence.get(action.id, [])]
        if incidents is not None:
            incident = incidents[action.incident_id]
            item["incident"] = {"number": incident.number, "reference": incident.reference,
                                "title": incident.title, "status": incident.status}
        items.append(item)
    return items


def evidence_json(item: Attachment) -> dict[str, Any]:
    """A file kept as an action's evidence, as the incident's files show it,
    with the action it proves."""
    return attachment_json(item) | {"actionId": item.action_id}


def evidence_of(request: Request, action_ids: list[int]) -> dict[int, list[Attachment]]:
    """The photos and PDFs kept as evidence of each action, oldest first."""
    if not action_ids:
        return {}
    found: dict[int, list[Attachment]] = {}
    for item in request.dbsession.execute(select(Attachment).where(Attachment.action_id.in_(action_ids))
                                          .order_by(Attachment.id)).scalars():
        found.setdefault(item.action_id, []).append(item)
    return found


class ActionRow(NamedTuple):
    """An action as an incident's JSON shows it, with its assignee's name."""

    id: int
    title: str
    description: str | None
    kind: str
    assignee_id: int | None
    due_date: dt.date | None
    root_cause_id: int | None
    status: str
    created_at: Any
    updated_at: Any
    done_at: Any
    assignee_name: str | None


_decode = decoder(ActionRow, due_date=DATE, created_at=INSTANT, updated_at=INSTANT, done_at=INSTANT)


def actions_column() -> ColumnElement[Any]:
    """The incident's actions and their assignees' names, read with the incident."""
    assignee = select(User.name).where(User.id == CorrectiveAction.assignee_id).scalar_subquery()
    return select(json_rows(*columns_of(ActionRow, CorrectiveAction, assignee_name=assignee))).where(
        CorrectiveAction.incident_id == Incident.id).scalar_subquery()


def actions_section(request: Request, incident: Incident, value: Any) -> list[dict[str, Any]]:
    rows = _decode(value)
    names = {row.assignee_id: row.assignee_name for row in rows if row.assignee_id is not None}
    return actions_json(request, rows, names=names, with_evidence=False)


def includeme(config: Configurator) -> None:
    from ehs_core.actions.digest import daily_schedule, send_digests

    config.add_route("incident.actions", INCIDENT + "/actions", factory=FACTORY)
    config.add_route("actions", "/api/actions")
    config.add_route("action", r"/api/actions/{id:\d{1,9}}",
                     factory="ehs_core.actions.resources.action_factory")
    config.add_route("action.evidence", r"/api/actions/{id:\d{1,9}}/evidence",
                     factory="ehs_core.actions.resources.action_factory")
    config.add_incident_section("actions", column=actions_column, decode=actions_section,
                                detail_only=True, fresh=list)
    config.add_mail_template("action_assigned", "ehs_core.mail:templates/action_assigned.txt")
    config.add_mail_template("action_digest", "ehs_core.mail:templates/action_digest.txt")
    config.add_periodic_job("actions.digest", send_digests, daily_schedule(config.registry))
    config.scan(".views")
    config.scan(".notices")
    config.include(".pages")  # /actions, /actions/<id>, adding from the incident page
