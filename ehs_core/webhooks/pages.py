"""Webhooks, as a page (/admin/webhooks, admins only): the endpoints, their
state and why one was switched off, a form to add one (its secret shown on
the answer, once), switching one off and on, removing it, and each one's
deliveries (status, attempts, last error, times). Every form adapts
`webhooks.services` with the API's schemas."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.request import Request

from ehs_core.errors import DomainError, NotFound
from ehs_core.ui.forms import TEXT, errors_of, json_values
from ehs_core.webhooks import services
from ehs_core.webhooks.kinds import kinds
from ehs_core.webhooks.schemas import EndpointCreateSchema, EndpointUpdateSchema
from ehs_core.webhooks.views import ADMIN

ENDPOINT = r"/admin/webhooks/{id:\d{1,9}}"


def overview(request: Request, errors: dict[str, str] | None = None, values: dict[str, Any] | None = None,
             created: Any = None) -> dict[str, Any]:
    return {"endpoints": services.list_endpoints(request), "kinds": sorted(kinds(request.registry).values(),
                                                                           key=lambda k: k.name),
            "errors": errors or {}, "values": values or {"events": []}, "created": created}


def webhook_list(request: Request) -> dict[str, Any]:
    return overview(request)


def add_endpoint(request: Request) -> Any:
    """Answered with the page itself, not a redirect: the secret is on it
    this once."""
    values = json_values(request.POST, {"url": TEXT, "description": TEXT})
    values["events"] = request.POST.getall("events")
    if not values.get("description"):
        values.pop("description", None)
    try:
        endpoint = services.create_endpoint(request, EndpointCreateSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return overview(request, errors_of(exc), values)
    request.response.status = 201
    return overview(request, created=endpoint)


def _endpoint_id(request: Request) -> int:
    return int(request.matchdict["id"])


def change_endpoint(request: Request) -> Any:
    """Switch it off or on."""
    try:
        active = request.POST.get("active")
        if active not in ("true", "false"):
            raise DomainError("Nothing to change")
        services.update_endpoint(request, _endpoint_id(request),
                                 EndpointUpdateSchema().deserialize({"active": active == "true"}))
    except NotFound:
        raise
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return overview(request, errors_of(exc))
    return HTTPFound(request.route_path("page.webhooks", _query={"notice": "saved"}))


def remove_endpoint(request: Request) -> Any:
    services.delete_endpoint(request, _endpoint_id(request))
    return HTTPFound(request.route_path("page.webhooks", _query={"notice": "saved"}))


def endpoint_deliveries(request: Request) -> dict[str, Any]:
    endpoint_id = _endpoint_id(request)
    return {"endpoint": services.get_endpoint(request, endpoint_id),
            "deliveries": services.list_deliveries(request, endpoint_id)}


def includeme(config: Configurator) -> None:
    config.add_route("page.webhooks", "/admin/webhooks")
    config.add_route("page.webhook", ENDPOINT)
    config.add_route("page.webhook_delete", ENDPOINT + "/delete")
    view = config.add_view
    view(webhook_list, route_name="page.webhooks", request_method="GET",
         renderer="ehs_core:templates/webhooks/list.html", permission=ADMIN)
    view(add_endpoint, route_name="page.webhooks", request_method="POST",
         renderer="ehs_core:templates/webhooks/list.html", permission=ADMIN)
    view(endpoint_deliveries, route_name="page.webhook", request_method="GET",
         renderer="ehs_core:templates/webhooks/deliveries.html", permission=ADMIN)
    view(change_endpoint, route_name="page.webhook", request_method="POST",
         renderer="ehs_core:templates/webhooks/list.html", permission=ADMIN)
    view(remove_endpoint, route_name="page.webhook_delete", request_method="POST", permission=ADMIN)
    config.add_nav_item("webhooks", "Webhooks", "page.webhooks", permission=ADMIN, order=84)
