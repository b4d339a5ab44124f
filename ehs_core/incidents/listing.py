"""Listing reports: the caller's visible incidents, narrowed by the text
search `q` (`search`) and every registered filter (the core's and the
plugins'), one page at a time with the total. The JSON list, the CSV export
and the web pages all read through `list_query` and `list_page`.

A search's total is exact up to COUNT_BOUND matches; beyond, the page says
"more than `total`" (`Page.exact` false) instead of counting every match.

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
from sqlalchemy import Select, func, literal, select

from ehs_core.incidents import extensions, search
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import sees_everything, visible_incidents
from ehs_core.incidents.schemas import IncidentQuerySchema

# How far a search counts its matches. Counting all of them means reading
# every one (27,000 rows for a word in a quarter of 100,000 incidents, ~50 ms
# on PostgreSQL); up to here it costs about as much as the page.
COUNT_BOUND = 1000


@dataclass(frozen=True)
class Page:
    """One page of the list: the incidents and how many match in all:
    exactly `total`, or, when `exact` is false (a search with more than
    COUNT_BOUND matches, not on its last page), more than `total`."""

    items: list[Incident]
    page: int
    page_size: int
    total: int
    exact: bool = True


def list_schema(registry: Registry) -> colander.SchemaNode:
    """The list/export query: paging and `q`, plus every registered filter."""
    schema = IncidentQuerySchema()
    for item in registry.get("incident_filters", []):
        schema.add(item.node.clone())
    return schema


def list_query(request: Request, query: dict[str, Any], words: search.Lookup | None = None) -> Select:
    """The incidents of the caller's organization they may see, narrowed by
    `q` (title, description, location or number) and the filters. `q` is
    checked row by row (`search.walking`), fit for any plan; with `words`
    (`search.look_up` of `q`) it is read through the word index (the same
    answers), only for a count or a sort that is not by the number index's
    order."""
    identity = request.identity
    stmt = select(Incident).where(Incident.organization_id == identity.account.organization_id)
    stmt = visible_incidents(stmt, identity)
    if query.get("q"):
        stmt = stmt.where(words.condition if words is not None else search.walking(query["q"]))
    for item in extensions.filters(request):
        if query.get(item.name) is not None:
            stmt = item.apply(stmt, query[item.name], request)
    return stmt


def only_searched(request: Request, query: dict[str, Any]) -> bool:
    """The caller sees every incident of the organization and no filter
    narrows them (`q` may)."""
    return (sees_everything(request.identity)
            and all(query.get(item.name) is None for item in extensions.filters(request)))


def unfiltered(request: Request, query: dict[str, Any]) -> bool:
    """The caller sees every incident of the organization and narrows nothing."""
    return not query.get("q") and only_searched(request, query)


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
            Incident.organization_id == request.identity.account.organization_id)).scalar()
    return request.dbsession.execute(
        select(func.count()).select_from(stmt.with_only_columns(Incident.id).subquery())).scalar()


def counted_up_to(request: Request, stmt: Select, limit: int) -> int:
    """How many incidents the query matches, counting no further than `limit`."""
    found = stmt.with_only_columns(literal(1), maintain_column_froms=True).limit(limit).subquery()
    return request.dbsession.execute(select(func.count()).select_from(found)).scalar()


def page_of(request: Request, stmt: Select, order: Any, limit: int, offset: int) -> list[Incident]:
    """Incidents of the query in `order`: narrow rows (the id) through the
    plan, then the page's incidents whole."""
    ids = stmt.with_only_columns(Incident.id).order_by(order).limit(limit).offset(offset).subquery()
    return list(request.dbsession.execute(
        select(Incident).join(ids, ids.c.id == Incident.id).order_by(Incident.number.desc())).scalars())


def searched_page(request: Request, query: dict[str, Any], stmt: Select) -> Page:
    """A page of a text search, and its total counted up to COUNT_BOUND.

    One statement reads at most COUNT_BOUND + 1 matches through the text
    index, counts them and sorts them by number for the page. When that is
    all of them (a word in 3 incidents, or in a reporter's 22), it is the
    page and the exact total: nothing walks the number index through every
    newer incident that does not match. When there are more, that page is
    only of the first matches found, and the matches are common: the newest
    are near the top of the number index, and walking it (checking each row:
    `search.walking`) finds the page after about pageSize / (share of
    matches) incidents; one more row than the page tells whether another
    page follows, and the last page knows the exact total. An empty page
    (no match, or past the end) counts on its own, exactly up to the bound
    and as it always did beyond.

    When the word counts already say that more than COUNT_BOUND of the
    caller's incidents match (`search.Lookup.at_least`: the caller sees the
    whole organization and only `q` narrows it), the first statement could
    only confirm it, at the cost of the word's whole bitmap (~8 ms for
    `forklift` at 100,000 incidents): the page walks the number index
    straight away, with the same answer."""
    page, size = query["page"], query["pageSize"]
    offset = (page - 1) * size
    words = search.look_up(request, query["q"])
    indexed = list_query(request, query, words)
    if not (words.at_least > COUNT_BOUND and only_searched(request, query)):
        first = indexed.with_only_columns(Incident.id, Incident.number).limit(COUNT_BOUND + 1).subquery()
        window = (select(first.c.id, func.count().over().label("counted"))
                  .order_by(first.c.number.desc()).limit(size).offset(offset).subquery())
        found = request.dbsession.execute(
            select(Incident, window.c.counted).join(window, window.c.id == Incident.id)
            .order_by(Incident.number.desc())).all()
        counted = found[0][1] if found else counted_up_to(request, indexed, COUNT_BOUND + 1)
        if counted <= COUNT_BOUND:
            return Page([row[0] for row in found], page, size, counted)
    rows = page_of(request, stmt, Incident.number.desc(), size + 1, offset)
    if len(rows) > size:
        return Page(rows[:size], page, size, max(COUNT_BOUND, offset + size), exact=False)
    if rows:
        return Page(rows, page, size, offset + len(rows))
    return Page(rows, page, size, list_total(request, query, indexed, rows))


def list_page(request: Request, query: dict[str, Any]) -> Page:
    """A page of the caller's list, newest number first, with the total."""
    stmt = list_query(request, query)
    page, size = query["page"], query["pageSize"]
    if query.get("q"):
        return searched_page(request, query, stmt)
    # (The names shown with it are the worker's reference data.)
    rows = list(request.dbsession.execute(
        stmt.order_by(Incident.number.desc()).limit(size).offset((page - 1) * size)).scalars())
    return Page(rows, page, size, list_total(request, query, stmt, rows))
