"""The JSON face of webhooks (admins only); the operations live in `services`."""

from __future__ import annotations

from typing import Any

from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.security import Permission
from ehs_core.webhooks import services
from ehs_core.webhooks.schemas import EndpointCreateSchema, EndpointUpdateSchema

ADMIN = Permission.manage_users  # admins only, as people and settings are


@view_config(route_name="webhooks", request_method="GET", renderer="json", permission=ADMIN)
def list_endpoints(request: Request) -> list[dict[str, Any]]:
    return [services.endpoint_json(e) for e in services.list_endpoints(request)]


@view_config(route_name="webhooks", request_method="POST", renderer="json", permission=ADMIN,
             body=EndpointCreateSchema, responses=(201,))
def create_endpoint(request: Request) -> dict[str, Any]:
    """The answer carries the signing secret; it is never shown again."""
    endpoint = services.create_endpoint(request, request.validated)
    request.response.status = 201
    return services.endpoint_json(endpoint) | {"secret": endpoint.secret}


@view_config(route_name="webhook", request_method="PATCH", renderer="json", permission=ADMIN,
             body=EndpointUpdateSchema)
def update_endpoint(request: Request) -> dict[str, Any]:
    return services.endpoint_json(
        services.update_endpoint(request, int(request.matchdict["id"]), request.validated))


@view_config(route_name="webhook", request_method="DELETE", permission=ADMIN, responses=(204,))
def delete_endpoint(request: Request) -> HTTPNoContent:
    services.delete_endpoint(request, int(request.matchdict["id"]))
    return HTTPNoContent()


@view_config(route_name="webhook.deliveries", request_method="GET", renderer="json", permission=ADMIN)
def list_deliveries(request: Request) -> list[dict[str, Any]]:
    deliveries = services.list_deliveries(request, int(request.matchdict["id"]))
    return [services.delivery_json(d) for d in deliveries]
