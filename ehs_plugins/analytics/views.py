from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any

import colander
from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import or_, select

from ehs_core.errors import APIError, invalid
from ehs_core.incidents.models import IncidentType
from ehs_core.schemas import INT_MAX, INT_MIN, Bool, Choice, Date, JSONType, QueryInt, drop, field, text
from ehs_core.security import Permission, Role, role_at_least
from ehs_core.serialize import iso
from ehs_plugins.analytics import stats
from ehs_plugins.analytics.figures import injury_figures
from ehs_plugins.analytics.models import SavedView


def three_years_after(day: dt.date) -> dt.date:
    try:
        return day.replace(year=day.year + 3)
    except ValueError:  # 29 February
        return dt.date(day.year + 3, 3, 1)


class ViewPage(StrEnum):
    analytics = "analytics"
    incidents = "incidents"


# Statistics cover the service's own era; far-off dates are refused, not computed.
DATE_RANGE = colander.Range(min=dt.date(1970, 1, 1), max=dt.date(2999, 12, 31),
                            min_err="Must be in 1970 or later", max_err="Must be before 3000")


class AnalyticsQuery(colander.MappingSchema):
    to = field(Date(), validator=DATE_RANGE)
    siteId = field(QueryInt(), missing=None)
    type = field(Choice(IncidentType), missing=None)


def analytics_schema(registry: Any = None) -> colander.SchemaNode:
    schema = AnalyticsQuery()
    schema.add(field(Date(), name="from", validator=DATE_RANGE))
    return schema


class FilterValue(JSONType):
    """What a saved filter holds: the text, number or choices a list or
    analytics filter was given (a string, a whole number, true/false, or a
    list of up to 20 strings or numbers), so a view stays small and flat."""

    openapi_schema = {"oneOf": [
        {"type": "string", "maxLength": 200}, {"type": "integer"}, {"type": "boolean"},
        {"type": "array", "maxItems": 20, "items": {"oneOf": [
            {"type": "string", "maxLength": 200}, {"type": "integer"}]}}]}

    def check(self, node: colander.SchemaNode, value: Any) -> Any:
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and len(value) > 20:
            raise colander.Invalid(node, "At most 20 values")
        for item in items:
            if isinstance(item, bool) and not isinstance(value, list):
                continue
            if isinstance(item, str) and len(item) <= 200:
                continue
            if isinstance(item, int) and not isinstance(item, bool) and INT_MIN <= item <= INT_MAX:
                continue
            raise colander.Invalid(node, "Must be text of at most 200 characters, a whole number, "
                                         "true or false, or a list of up to 20 texts or numbers")
        return value


# The filters a view may save: the incident list's (core and plugins) and
# the analytics page's.
ANALYTICS_FILTERS = ("from", "to", "siteId", "type")


def view_create_schema(registry: Any) -> colander.SchemaNode:
    schema = ViewCreateSchema()
    filters = colander.SchemaNode(colander.Mapping(), name="filters", missing=drop)
    names = ["q", "sort", *(item.name for item in registry.get("incident_filters", [])), *ANALYTICS_FILTERS]
    for name in dict.fromkeys(names):
        filters.add(field(FilterValue(nullable=True), missing=drop, name=name))
    schema.add(filters)
    return schema


class ViewCreateSchema(colander.MappingSchema):
    page = field(Choice(ViewPage))
    name = text(200, min_length=1)
    shared = field(Bool(), missing=False)


class ViewQuery(colander.MappingSchema):
    page = field(Choice(ViewPage), missing=drop)


@view_config(route_name="stats.overview", request_method="GET", renderer="json",
             permission=Permission.signed_in)
def overview(request: Request) -> dict[str, Any]:
    return stats.overview(request)


def analytics_answer(request: Request, query: dict[str, Any]) -> dict[str, Any]:
    """The analytics figures of a validated `analytics_schema` query, as the
    caller may see them (the API and the dashboard page both answer with it)."""
    first, last = query["from"], query["to"]
    if last < first:
        raise invalid("to", "Must not be before from")
    if last >= three_years_after(first):
        raise invalid("to", "The period may span at most 3 years")
    identity = request.identity
    # Rates are for supervisors and above; the injury-record figures behind
    # them (recordable cases, days away, case counts) only for those who keep
    # the records, since in a small site or period they name a person
    # (spec: Incident.injuredCount is the only injury-record figure below
    # safety_manager; 29 CFR 1904.29(b)(6)-(10) privacy of case data).
    show_rates = role_at_least(identity.role, Role.supervisor)
    show_cases = role_at_least(identity.role, Role.safety_manager)
    return stats.analytics(request, first, last, query["siteId"], query["type"],
                           injury_figures(request.registry), show_rates, show_cases)


@view_config(route_name="stats.analytics", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=analytics_schema)
def analytics(request: Request) -> dict[str, Any]:
    return analytics_answer(request, request.validated_query)


def view_json(view: SavedView) -> dict[str, Any]:
    return {"id": view.id, "page": view.page, "name": view.name, "filters": view.filters,
            "shared": view.shared, "ownerId": view.owner_id, "createdAt": iso(view.created_at)}


@view_config(route_name="views", request_method="GET", renderer="json", permission=Permission.signed_in,
             query=ViewQuery)
def list_views(request: Request) -> list[dict[str, Any]]:
    query = request.validated_query
    stmt = select(SavedView).where(or_(SavedView.owner_id == request.identity.user_id,
                                       SavedView.shared.is_(True)))
    if "page" in query:
        stmt = stmt.where(SavedView.page == query["page"])
    return [view_json(v) for v in request.dbsession.execute(stmt.order_by(SavedView.name, SavedView.id))
            .scalars()]


@view_config(route_name="views", request_method="POST", renderer="json", permission=Permission.signed_in,
             body=view_create_schema,
             responses=(201,))
def create_view(request: Request) -> dict[str, Any]:
    data = request.validated
    if data["shared"] and not role_at_least(request.identity.role, Role.supervisor):
        raise APIError(403, "Sharing a view needs the supervisor role")
    view = SavedView(owner_id=request.identity.user_id, page=data["page"], name=data["name"],
                     filters=data.get("filters", {}), shared=data["shared"])
    request.dbsession.add(view)
    request.dbsession.flush()
    request.response.status = 201
    return view_json(view)


@view_config(route_name="view", request_method="DELETE", permission=Permission.signed_in,
             responses=(204,))
def delete_view(request: Request) -> HTTPNoContent:
    view = request.dbsession.get(SavedView, int(request.matchdict["id"]))
    identity = request.identity
    admin = role_at_least(identity.role, Role.admin)
    if view is None or not (view.shared or view.owner_id == identity.user_id or admin):
        raise APIError(404, "Not found")
    if view.owner_id != identity.user_id and not admin:
        raise APIError(403, "Only the owner or an admin can delete this view")
    request.dbsession.delete(view)
    return HTTPNoContent()
