"""The analytics plugin's screens. For now: saved views of the incident
list, as a tool above the list (open one, save the current filters)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.request import Request

from ehs_core import refdata
from ehs_core.errors import DomainError, Forbidden
from ehs_core.security import Permission, Role, role_at_least
from ehs_plugins.analytics import saved_views
from ehs_plugins.analytics.views import view_create_schema  # the API's own schema

LIST = "incidents"


def saved_views_tool(request: Request, filters: dict[str, Any]) -> dict[str, Any]:
    """The list tool: the caller's views of the incident list as links, kept
    per worker until a saved view changes (`ehs_core.refdata`: the list page
    is the most visited page)."""
    views = saved_view_links(request)
    error = request.GET.get("view_error")
    if error and error not in VIEW_ERRORS:
        error = "filters"
    return {"views": views, "filters": filters, "error": error,
            "can_share": role_at_least(request.identity.role, Role.supervisor)}


def saved_view_links(request: Request) -> list[dict[str, Any]]:
    """The caller's saved views of the incident list ({name, shared, url}),
    kept per worker until a saved view changes (`ehs_core.refdata`): the
    list page and the dashboard show them."""
    return refdata.cached(request, ("saved_views", request.identity.user_id, LIST), _view_links)


def _view_links(request: Request) -> list[dict[str, Any]]:
    base = request.route_path("page.incidents")
    return [{"name": view.name, "shared": view.shared,
             "url": base + "?" + urlencode(view.filters, doseq=True)}
            for view in saved_views.visible_views(request, LIST)]


# What a refused view is told by, in the address after the redirect: a key
# the tool's template turns into its own words (saved_views.html). The
# address names which message, never writes it (anyone can craft one).
VIEW_ERRORS = ("name", "shared", "filters")


def view_error(exc: colander.Invalid | DomainError) -> str:
    if isinstance(exc, Forbidden):
        return "shared"  # saved_views.save_view's only refusal of a valid view
    paths = exc.asdict() if isinstance(exc, colander.Invalid) else {}
    return "name" if "name" in paths else "filters"


def save_list_view(request: Request) -> Any:
    """Save the list's current filters (posted as hidden fields) under a name."""
    filters: dict[str, Any] = {}
    for key in request.POST:
        if key.startswith("filter."):
            values = [v for v in request.POST.getall(key) if isinstance(v, str) and v]
            if values:
                filters[key.removeprefix("filter.")] = values if len(values) > 1 else values[0]
    data = {"page": LIST, "name": request.POST.get("name", ""), "filters": filters,
            "shared": request.POST.get("shared") == "on"}
    back = request.route_path("page.incidents") + ("?" + urlencode(filters, doseq=True) if filters else "")
    try:
        saved_views.save_view(request, view_create_schema(request.registry).deserialize(data))
    except (colander.Invalid, DomainError) as exc:
        return HTTPFound(back + ("&" if filters else "?") + urlencode({"view_error": view_error(exc)}))
    return HTTPFound(back + ("&" if filters else "?") + "notice=saved")


def includeme(config: Configurator) -> None:
    config.add_route("page.save_list_view", "/incidents/views")
    config.add_view(save_list_view, route_name="page.save_list_view", request_method="POST",
                    permission=Permission.signed_in)
    config.add_incident_list_tool("saved_views", "ehs_plugins.analytics:templates/saved_views.html",
                                  saved_views_tool, permission=Permission.signed_in)
