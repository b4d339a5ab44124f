"""The JSON face of obligations; the operations live in `services`."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.db import utcnow
from ehs_core.incidents.serialize import person, user_names
from ehs_core.obligations import services
from ehs_core.obligations.schemas import ITEM, LIST_ANSWER, DoneSchema, ObligationQuerySchema, WaiveSchema
from ehs_core.security import Permission
from ehs_core.serialize import iso
from ehs_core.sites.zones import local_time


def owed_json(request: Request, owed: list[services.Owed]) -> list[dict[str, Any]]:
    """Times on the site's clock (the establishment's, `sites.zones`)."""
    names = user_names(request, {o.obligation.done_by_id for o in owed})
    now = utcnow()
    items = []
    for item in owed:
        obligation = item.obligation
        items.append({
            "id": obligation.id, "kind": obligation.kind, "title": obligation.title,
            "incidentNumber": item.incident_number, "siteId": obligation.site_id,
            "dueAt": iso(local_time(obligation.due_at, item.timezone, request.registry)),
            "status": item.status(now),
            "doneAt": iso(local_time(obligation.done_at, item.timezone, request.registry)
                          if obligation.done_at is not None else None),
            "doneBy": person(names, obligation.done_by_id), "note": obligation.note,
            "fulfilledBy": item.kind.fulfilled_by,
        })
    return items


@view_config(route_name="obligations", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=ObligationQuerySchema, answer=LIST_ANSWER,
             summary="What is owed to regulators that the caller handles: open (soonest due first), "
                     "overdue, done or waived")
def list_obligations(request: Request) -> dict[str, Any]:
    return {"items": owed_json(request, services.list_owed(request, request.validated_query["status"]))}


@view_config(route_name="obligation.done", request_method="POST", renderer="json",
             permission=Permission.signed_in, body=DoneSchema, answer=ITEM,
             summary="Mark an obligation done: when (now unless `doneAt`), by the caller, with a note")
def mark_done(request: Request) -> dict[str, Any]:
    data = request.validated
    owed = services.mark_done(request, int(request.matchdict["id"]), data["note"], data["doneAt"])
    return owed_json(request, [owed])[0]


@view_config(route_name="obligation.waive", request_method="POST", renderer="json",
             permission=Permission.signed_in, body=WaiveSchema, answer=ITEM,
             summary="Waive an obligation, saying why (safety manager)")
def waive(request: Request) -> dict[str, Any]:
    owed = services.waive(request, int(request.matchdict["id"]), request.validated["reason"])
    return owed_json(request, [owed])[0]
