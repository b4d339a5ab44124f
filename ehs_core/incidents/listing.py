"""Listing reports: the caller's visible incidents, narrowed by the text
search `q` and every registered filter (the core's and the plugins'), one
page at a time with the total. The JSON list, the CSV export and the web
pages all read through `list_query` and `list_page`.

Convention as in `incidents.filing`: the request is the unit of work (the
caller is `request.identity`, the filters come from `request.registry`);
`query` is the validated query (see `list_schema`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import colander
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import Select, func, or_, select

from ehs_core.incidents import extensions
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import sees_everything, visible_incidents
from ehs_core.incidents.schemas import IncidentQuerySchema
from ehs_core.incidents.serialize import name_columns, remember_names


@dataclass(frozen=True)
class Page:
    """One page of the list: the incidents and how many match in all."""

    items: list[Incident]
    page: int
    page_size: int
    total: int


def list_schema(registry: Registry) -> colander.SchemaNode:
    """The list/export query: paging and `q`, plus every registered filter."""
    schema = IncidentQuerySchema()
    for item in registry.get("incident_filters", []):
        schema.add(item.node.clone())
    return schema


def list_query(request: Request, query: dict[str, Any]) -> Select:
    """The incidents of the caller's organization they may see, narrowed by
    `q` (title, description, location or number) and the filters."""
    identity = request.identity
    stmt = select(Incident).where(Incident.organization_id == identity.user.organization_id)
    stmt = visible_incidents(stmt, identity)
    text = query.get("q")
    if text:
        terms = [Incident.title.icontains(text, autoescape=True),
                 Incident.description.icontains(text, autoescape=True),
                 Incident.location_detail.icontains(text, autoescape=True)]
        number = text.upper().removeprefix("INC-").strip()
        if number.isdigit() and len(number) <= 9:
            terms.append(Incident.number == int(number))
        stmt = stmt.where(or_(*terms))
    for item in extensions.filters(request):
        if query.get(item.name) is not None:
            stmt = item.apply(stmt, query[item.name], request)
    return stmt


def unfiltered(request: Request, query: dict[str, Any]) -> bool:
    """The caller sees every incident of the organization and narrows nothing."""
    return (sees_everything(request.identity) and not query.get("q")
            and all(query.get(item.name) is None for item in extensions.filters(request)))


def list_total(request: Request, query: dict[str, Any], stmt: Select, rows: list[Incident]) -> int:
    """How many incidents the list has in all. Numbers are given out from 1
    without gaps and incidents are never deleted, so when nothing is filtered
    out the count is the organization's highest number: the first row of the
    first page, or one index lookup. Counting the rows instead costs a scan
    that grows with the table."""
    if unfiltered(request, query):
        if query["page"] == 1 and rows:
            return rows[0].number
        return request.dbsession.execute(select(func.coalesce(func.max(Incident.number), 0)).where(
            Incident.organization_id == request.identity.user.organization_id)).scalar()
    return request.dbsession.execute(
        select(func.count()).select_from(stmt.with_only_columns(Incident.id).subquery())).scalar()


def searched_page(request: Request, query: dict[str, Any], stmt: Select) -> tuple[list[Incident], int]:
    """A page of a text search and its total in one pass over the matches.
    Every match has to be read for the total anyway (the trigram indexes
    find candidates, each is checked against the text); sorting them by
    number (an expression, so not by walking the number index, which reads
    every newer incident that does not match) costs little on top, where a
    second query for the page would read them all again."""
    page, size = query["page"], query["pageSize"]
    # Narrow rows (id, number) through the count and the sort; the page's
    # incidents are read whole afterwards.
    matches = (stmt.with_only_columns(Incident.id, func.count().over().label("total"))
               .order_by((Incident.number + 0).desc()).limit(size).offset((page - 1) * size).subquery())
    found = request.dbsession.execute(
        select(Incident, *name_columns(), matches.c.total).join(matches, matches.c.id == Incident.id)
        .order_by(Incident.number.desc())).all()
    if not found:  # past the last page: nothing to read the total from
        return [], list_total(request, query, stmt, [])
    return remember_names(request, (row[:4] for row in found)), found[0][4]


def list_page(request: Request, query: dict[str, Any]) -> Page:
    """A page of the caller's list, newest number first, with the total."""
    stmt = list_query(request, query)
    page, size = query["page"], query["pageSize"]
    if query.get("q"):
        rows, total = searched_page(request, query, stmt)
    else:
        # The names come with the page (serialize.name_columns): one query fewer.
        rows = remember_names(request, request.dbsession.execute(
            stmt.add_columns(*name_columns())
            .order_by(Incident.number.desc()).limit(size).offset((page - 1) * size)))
        total = list_total(request, query, stmt, rows)
    return Page(rows, page, size, total)
