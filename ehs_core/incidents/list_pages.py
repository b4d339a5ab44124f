"""The incident list's page: filters, search and paging over the API's own
listing (`listing.list_page`), the same schema and visibility, its CSV in
words for people (`export`), and "Go to INC-0042"."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request

from ehs_core import refdata
from ehs_core.incidents import export, listing
from ehs_core.incidents.models import IncidentType, Severity, Status, reference
from ehs_core.incidents.pages import (
    LIST_FILTERS,
    active_sites,
)
from ehs_core.incidents.serialize import location_and_people
from ehs_core.security import Permission
from ehs_core.ui.directives import rendered_slots
from ehs_core.ui.forms import (
    errors_of,
)
from ehs_core.ui.rendering import (
    number,
)

_ = TranslationStringFactory("ehs")




def filter_options(request: Request) -> dict[str, Any]:
    """The site and area filters' options as (value, label), areas grouped
    by site and named by their path (`sites.services.area_path`), in its order: plain
    tuples, so the list page does not look up each of a hundred options'
    attributes (kept per worker with the sites)."""
    sites = active_sites(request)
    areas = []
    for site in sites:
        if site["areas"]:
            areas.append((site["name"], [(str(area["id"]), area["path"]) for area in site["areas"]]))
    return {"sites": [(str(s["id"]), s["name"]) for s in sites], "areas": areas}


def filters_values(request: Request) -> dict[str, Any]:
    """What the list's filter form shows: the choices made and every option
    (the sites' and areas' kept with the reference data, `ehs_core.refdata`)."""
    return {"types": list(IncidentType), "severities": list(Severity), "statuses": list(Status),
            "filter_options": refdata.cached(request, "incident_list_filters", filter_options),
            "sort": request.GET.get("sort", "")}


def list_query_params(request: Request) -> dict[str, Any]:
    """The page's query as the API's list schema takes it: every filter
    value that was given (several values for one filter are kept), paging
    and search."""
    params: dict[str, Any] = {}
    for key in request.GET:
        values = [v for v in request.GET.getall(key) if v != ""]
        if values:
            params[key] = values if len(values) > 1 else values[0]
    return params


def incident_list(request: Request) -> dict[str, Any]:
    params = list_query_params(request)
    schema = listing.list_schema(request.registry)
    known = {node.name for node in schema.children}
    query_params = {k: v for k, v in params.items() if k in known}
    errors: dict[str, str] = {}
    try:
        query = schema.deserialize(query_params)
    except colander.Invalid as exc:
        errors = errors_of(exc)
        query = schema.deserialize({})
    # The table shows none of the sections (OSHA cases, kiosk channel...).
    page = listing.list_page(request, query, sections=False)
    sites = active_sites(request)
    # A search with more matches than it counts (listing.COUNT_BOUND) says
    # "more than N" and pages on without a last page number.
    pages = max(1, -(-page.total // page.page_size)) if page.exact else None
    base = [(k, v) for k, v in request.GET.items() if k not in ("page", "notice") and v != ""]
    incident_path = request.route_path("page.incidents") + "/"
    zones = {s["id"]: s["timezone"] for s in sites}
    names = location_and_people(request, page.items)
    return {
        "items": page.items,
        "site_names": names["site"], "area_names": names["area"], "reference": reference,
        "page": page.page, "pages": pages, "total": page.total, "page_size": page.page_size,
        "export_limit": export.MAX_ROWS,
        "total_exact": page.exact, "has_next": page.page < pages if pages else True,
        "total_text": number(page.total),
        "errors": errors, "selected": {key: request.GET.getall(key) for key in LIST_FILTERS},
        "q": request.GET.get("q", ""), "sites": sites, "zones": zones,
        # Each row's link: the page route's path, the number appended.
        "incident_path": incident_path,
        "query_string": urlencode(base),
        "page_url": lambda n: request.route_path("page.incidents", _query=[*base, ("page", n)]),
        "export_url": request.route_path("page.incidents_export", _query=[(k, v) for k, v in base if k != "q"]
                                         + ([("q", request.GET["q"])] if request.GET.get("q") else [])),
        "tools": rendered_slots(request, "ui.incident_list_tools", query_params),
    }


def incident_list_page(request: Request) -> Any:
    """The whole page, or only the results when htmx asks for them. The
    menu's plain /incidents opens on the sites the person works at (issue
    #36 item 9), as the filter a person can untick; any other address,
    "Clear filters" too, lists what the spec lets them see."""
    if not request.GET and request.identity.user is not None and request.identity.user.site_ids:
        return HTTPFound(request.route_path("page.incidents", _query=[
            ("siteId", site_id) for site_id in request.identity.user.site_ids]))
    if request.headers.get("HX-Request") == "true" and request.headers.get("HX-Target") == "results":
        request.override_renderer = "ehs_core:templates/incidents/results.html"
        return incident_list(request)
    return incident_list(request) | filters_values(request)


def export_for_people(request: Request) -> Any:
    """The list's "Export these as CSV": the API's rows in people's words,
    every time in its site's zone (issue #36 item 7; `export.csv_response`)."""
    return export.csv_response(request, for_people=True)


def go_to_incident(request: Request) -> HTTPFound:
    """"Go to INC-0042": the number alone is enough."""
    raw = request.GET.get("number", "")
    digits = raw.strip().upper().removeprefix("INC-").removeprefix("INC").strip().lstrip("#")
    if digits.isdigit() and len(digits) <= 9:
        return HTTPFound(request.route_path("page.incident", number=int(digits)))
    return HTTPFound(request.route_path("page.incidents", _query={"q": raw}))


def includeme(config: Configurator) -> None:
    config.add_route("page.incidents", "/incidents")
    config.add_route("page.incident_go", "/incidents/go")
    config.add_route("page.incidents_export", "/incidents/export.csv")
    signed_in = Permission.signed_in
    config.add_view(incident_list_page, route_name="page.incidents", request_method="GET",
                    renderer="ehs_core:templates/incidents/list.html", permission=signed_in)
    config.add_view(go_to_incident, route_name="page.incident_go", request_method="GET", permission=signed_in)
    config.add_view(export_for_people, route_name="page.incidents_export", request_method="GET",
                    permission=signed_in, query=listing.list_schema)
    config.add_nav_item("incidents", "Incidents", "page.incidents", permission=signed_in, order=20)
