"""The pages of what is owed to regulators: the home queue "Owed to
regulators" (a dashboard card, soonest due first, the time left on the
site's clock) and /obligations, where each is marked done with a note or
waived with a reason. Both adapt `services` with the API's schemas."""

from __future__ import annotations

import datetime as dt
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.request import Request

from ehs_core.db import utcnow
from ehs_core.errors import DomainError
from ehs_core.obligations import kinds_for, services, waiver_role
from ehs_core.obligations.schemas import DoneSchema, WaiveSchema
from ehs_core.obligations.services import Filter, Owed
from ehs_core.security import Permission, role_at_least
from ehs_core.ui.forms import OPTIONAL_TEXT, TEXT, errors_of, json_values

# The home queue shows the soonest few; the page shows them all.
CARD_SIZE = 6
TABS = (Filter.open, Filter.overdue, Filter.done, Filter.waived)


def time_left(due: dt.datetime, now: dt.datetime) -> dict[str, Any]:
    """Days, hours and minutes until `due` (or since, when `overdue`)."""
    seconds = int(abs((due - now).total_seconds()))
    minutes = seconds // 60
    days, rest = divmod(minutes, 24 * 60)
    return {"overdue": due <= now, "days": days, "hours": rest // 60, "minutes": rest % 60}


def rows(request: Request, owed: list[Owed]) -> list[dict[str, Any]]:
    now = utcnow()
    role = request.identity.role
    return [{"owed": item, "obligation": item.obligation, "status": item.status(now),
             "left": time_left(item.obligation.due_at, now), "zone": item.timezone,
             "may_waive": role_at_least(role, waiver_role(item.kind))} for item in owed]


def owed_card(request: Request) -> dict[str, Any] | None:
    """The home queue, for whoever handles a kind of obligation (even when
    nothing is owed: the list of what was done is a click away)."""
    if not kinds_for(request.registry, request.identity.role):
        return None
    owed = services.list_owed(request, Filter.open, limit=CARD_SIZE + 1)
    return {"rows": rows(request, owed[:CARD_SIZE]), "more": len(owed) > CARD_SIZE}


def obligation_list(request: Request, errors: dict[str, str] | None = None,
                    values: dict[str, str] | None = None) -> dict[str, Any]:
    status = request.GET.get("status") or Filter.open
    if status not in {f.value for f in TABS}:
        status = Filter.open
    return {"rows": rows(request, services.list_owed(request, Filter(status))), "status": status,
            "tabs": TABS, "errors": errors or {}, "values": values or {}}


def _posted(request: Request, field: str, obligation_id: int) -> dict[str, Any]:
    """The form's field for this obligation (each row's form names its
    field after the obligation, so the labels stay unique on the page)."""
    raw = request.POST.get(f"{field}-{obligation_id}", request.POST.get(field))
    return {field: raw} if raw is not None else {}


def _close(request: Request, close: Any, field: str) -> Any:
    obligation_id = int(request.matchdict["id"])
    posted = _posted(request, field, obligation_id)
    try:
        close(obligation_id, posted)
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        found = errors_of(exc)
        message = found.get(field) or next(iter(found.values()), str(exc))
        return obligation_list(request, {f"{field}-{obligation_id}": message},
                               {f"{field}-{obligation_id}": posted.get(field) or ""})
    return HTTPFound(request.route_path("page.obligations", _query={"notice": "saved"}))


def mark_done(request: Request) -> Any:
    def close(obligation_id: int, posted: dict[str, Any]) -> None:
        data = DoneSchema().deserialize(json_values(posted, {"note": OPTIONAL_TEXT}))
        services.mark_done(request, obligation_id, data["note"])

    return _close(request, close, "note")


def waive(request: Request) -> Any:
    def close(obligation_id: int, posted: dict[str, Any]) -> None:
        data = WaiveSchema().deserialize(json_values(posted, {"reason": TEXT}))
        services.waive(request, obligation_id, data["reason"])

    return _close(request, close, "reason")


def includeme(config: Configurator) -> None:
    config.add_route("page.obligations", "/obligations")
    config.add_route("page.obligation_done", r"/obligations/{id:\d{1,9}}/done")
    config.add_route("page.obligation_waive", r"/obligations/{id:\d{1,9}}/waive")
    view = config.add_view
    view(obligation_list, route_name="page.obligations", request_method="GET",
         renderer="ehs_core:templates/obligations/list.html", permission=Permission.signed_in)
    view(mark_done, route_name="page.obligation_done", request_method="POST",
         renderer="ehs_core:templates/obligations/list.html", permission=Permission.signed_in)
    view(waive, route_name="page.obligation_waive", request_method="POST",
         renderer="ehs_core:templates/obligations/list.html", permission=Permission.signed_in)
    config.add_dashboard_card("obligations", "ehs_core:templates/obligations/card.html", owed_card,
                              permission=Permission.signed_in, order=5)
