"""Listing reports: the caller's visible incidents, narrowed by the text
search `q` (`search`) and every registered filter (the core's and the
plugins'), one page at a time with the total. The JSON list, the CSV export
and the web pages all read through `list_query` and `list_page`.

A search's total is exact up to COUNT_BOUND matches; beyond, the page says
"more than `total`" (`Page.exact` false) instead of counting every match.

A page's incidents are rows of plain columns (`ROW`, named as `Incident`'s
attributes), read with the list's sections (`extensions.list_columns`) and,
when it must be counted, its total, in one statement.

Convention as in `incidents.filing`: the request is the unit of work (the
caller is `request.identity`, the filters come from `request.registry`);
`query` is the validated query (see `list_schema`).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any

import colander
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Row,
    Select,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    select,
    union_all,
)

from ehs_core import caches
from ehs_core.db import PlainRead, read_rows
from ehs_core.incidents import extensions, search, serialize
from ehs_core.incidents.extensions import BoundFilter, IncidentTotal, SectionColumns
from ehs_core.incidents.models import Incident, Severity
from ehs_core.incidents.resources import sees_everything, visible_incidents
from ehs_core.incidents.schemas import IncidentQuerySchema, ListOrder

# How far a search counts its matches: counting all of them means reading
# every one; up to here it costs about as much as the page.
COUNT_BOUND = 1000

# What a page reads of each incident: the columns its JSON and the list
# page show (`serialize.COLUMNS`: `serialize.incidents_json`), named as
# `Incident`'s attributes. A page's rows hold these first, then the
# sections' columns. The table's own columns, not the ORM's attributes: the
# driver's result matches the columns of a statement to those of its cached
# compiled form, by identity for these and by building an SQL comparison
# for each of the attributes' annotated copies.
ROW = tuple(Incident.__table__.c[name] for name in serialize.COLUMNS)

# A severity's rank: low 0 ... critical 3.
SEVERITY_RANK = case({severity.value: rank for rank, severity in enumerate(Severity)},
                     value=Incident.severity)
# Each order of the list (`sort`), the newest report first where it leaves a
# tie. The newest first walks the number index (the filters' indexes end
# with the number), the oldest first the same backwards, and what happened
# most recently first the (organization, occurred) index; the most severe
# first reads each severity newest first (`by_severity`).
NEWEST_FIRST = (Incident.number.desc(),)
ORDERS = {
    ListOrder.newest: NEWEST_FIRST,
    ListOrder.oldest: (Incident.number.asc(),),
    ListOrder.occurred: (Incident.occurred_at.desc(), Incident.number.desc()),
    ListOrder.severity: (SEVERITY_RANK.desc(), Incident.number.desc()),
}


def order_of(query: dict[str, Any]) -> tuple[Any, ...]:
    """The list's ORDER BY for a validated query (its `sort`)."""
    return ORDERS[query.get("sort") or ListOrder.newest]


@dataclass(frozen=True)
class Page:
    """One page of the list: the incidents (rows whose first columns are
    `ROW`) and how many match in all: exactly `total`, or, when `exact` is
    false (a search with more than COUNT_BOUND matches, not on its last
    page), more than `total`. `sections`: the column sections read with
    the rows (for `serialize.incidents_json`), by incident id."""

    items: list[Row[Any]]
    page: int
    page_size: int
    total: int
    exact: bool = True
    sections: dict[int, dict[str, Any]] = field(default_factory=dict)


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
        stmt = stmt.where(words.condition if words is not None else search.walking(
            query["q"], request.dbsession.get_bind().dialect.name))
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


def total_of(request: Request, query: dict[str, Any], stmt: Select) -> ColumnElement[int]:
    """How many incidents the list has in all, as a scalar subquery that
    does not depend on the row it is read with (PostgreSQL runs it once, as
    an InitPlan), so the page's statement can carry it: a statement of its
    own cost the filtered list more in the driver than the count did in
    PostgreSQL. Numbers are given out from 1 without gaps and incidents are
    never deleted, so when nothing is filtered out the count is the
    organization's highest number (one index lookup); otherwise the
    matches are counted, exactly (an index-only scan of the filters' index
    where one serves). Counting the rows instead costs a scan that grows
    with the table."""
    return _total(stmt, unfiltered(request, query), request.identity.account.organization_id)


def _total(stmt: Select, whole: bool, organization: Any,
           offered: ColumnElement[Any] | None = None) -> ColumnElement[int]:
    """`total_of`; `whole`: nothing is filtered out of the organization's
    incidents (`organization`: its id, or a bound parameter); `offered`: a
    registered source's total (`extensions.add_incident_total`), NULL when
    it cannot tell, counted then: PostgreSQL's COALESCE evaluates its
    arguments in turn, and an uncorrelated subquery (an InitPlan) only
    when it is first needed, so the count runs only when the source is NULL."""
    if whole:
        counted = select(func.coalesce(func.max(Incident.number), 0)).where(
            Incident.organization_id == organization)
    else:
        counted = select(func.count()).select_from(stmt.with_only_columns(Incident.id).subquery())
    counted = counted.correlate(None).scalar_subquery()
    if offered is None:
        return counted
    return cast(func.coalesce(offered, counted), BigInteger)


def list_total(request: Request, query: dict[str, Any], stmt: Select, rows: list[Row[Any]]) -> int:
    """How many incidents the list has in all (`total_of`), on its own: for
    a page with no rows to carry it. When nothing is filtered out, the first
    row of the first page has the highest number."""
    if unfiltered(request, query) and query["page"] == 1 and rows:
        return rows[0].number
    return read_rows(request, select(total_of(request, query, stmt))).scalar()


def counted_up_to(request: Request, stmt: Select, limit: int) -> int:
    """How many incidents the query matches, counting no further than `limit`."""
    found = stmt.with_only_columns(literal(1), maintain_column_froms=True).limit(limit).subquery()
    return read_rows(request, select(func.count()).select_from(found)).scalar()


def page_statement(stmt: Select, order: tuple[Any, ...], limit: int, offset: int, columns: SectionColumns,
                   *extra: ColumnElement[Any]) -> Select:
    """The rows of `stmt` in `order` (`ROW`, the sections' `columns`, then
    `extra`). PostgreSQL works out every column of the rows an OFFSET skips
    (a section's subquery for each), so past the first page the plan
    narrows the ids first and reads only the page's rows whole."""
    if offset == 0:
        return stmt.with_only_columns(*ROW, *columns.columns, *extra).order_by(*order).limit(limit)
    return page_of(stmt, order, limit, offset, columns, *extra)


def page_of(stmt: Select, order: tuple[Any, ...], limit: int, offset: int, columns: SectionColumns,
            *extra: ColumnElement[Any]) -> Select:
    """Incidents of the query in `order`: narrow rows (the id) through the
    plan, then the page's incidents whole (as `page_statement`)."""
    ids = stmt.with_only_columns(Incident.id).order_by(*order).limit(limit).offset(offset).subquery()
    return (select(*ROW, *columns.columns, *extra).join(ids, ids.c.id == Incident.id)
            .order_by(*order))


def searched_page(request: Request, query: dict[str, Any], stmt: Select, columns: SectionColumns) -> Page:
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
    only confirm it, by building the word's whole bitmap: the page walks the
    number index straight away, with the same answer."""
    page, size = query["page"], query["pageSize"]
    offset = (page - 1) * size
    if search.plain_word(query["q"]) and only_searched(request, query) and _on_postgresql(request):
        found = newest_page(request, query, columns)
        if found is not None:
            return found
    words = search.look_up(request, query["q"])
    indexed = list_query(request, query, words)
    if not (words.at_least > COUNT_BOUND and only_searched(request, query)):
        first = indexed.with_only_columns(Incident.id, Incident.number).limit(COUNT_BOUND + 1).subquery()
        window = (select(first.c.id, func.count().over().label("counted"))
                  .order_by(first.c.number.desc()).limit(size).offset(offset).subquery())
        found = read_rows(request, select(*ROW, *columns.columns, window.c.counted)
                          .join(window, window.c.id == Incident.id)
                          .order_by(Incident.number.desc())).all()
        counted = found[0][-1] if found else counted_up_to(request, indexed, COUNT_BOUND + 1)
        if counted <= COUNT_BOUND:
            return Page(found, page, size, counted, sections=columns.read(found, len(ROW)))
    rows = read_rows(request, page_of(stmt, NEWEST_FIRST, size + 1, offset, columns)).all()
    if len(rows) > size:
        rows = rows[:size]
        return Page(rows, page, size, max(COUNT_BOUND, offset + size), exact=False,
                    sections=columns.read(rows, len(ROW)))
    if rows:
        return Page(rows, page, size, offset + len(rows), sections=columns.read(rows, len(ROW)))
    return Page(rows, page, size, list_total(request, query, indexed, rows))


def newest_page(request: Request, query: dict[str, Any], columns: SectionColumns) -> Page | None:
    """`searched_page` in one statement (`search.newest`) for a plain word
    searched by a caller who sees everything, with no filter: the same page
    and total, or None when that statement cannot tell (no row came back, or
    the few words' matches together are more than COUNT_BOUND) and the page
    must be read the long way. The statement is made once per sections,
    page and size (and the bounds it is written with), kept in the registry."""
    page, size = query["page"], query["pageSize"]
    offset = (page - 1) * size
    kept = caches.named(request.registry, "incident newest pages", 1000)
    key = (columns.sections, size, offset, COUNT_BOUND, search.MAX_WORDS, search.WINDOW_GATE, search.WINDOWS)

    def make() -> Any:
        found = search.newest(size, offset, COUNT_BOUND).subquery("found")
        return (select(*ROW, *columns.columns, found.c.counted).select_from(found)
                .outerjoin(Incident.__table__, found.c.id == Incident.id).order_by(Incident.number.desc()))

    statement = kept.made(key, make)
    rows = read_rows(request, statement, {"q": query["q"],
                                          "organization_id": request.identity.account.organization_id}).all()
    if not rows:
        return None
    if rows[0].id is None:  # no incident has a word containing it
        return Page([], page, size, 0)
    counted = rows[0][-1]
    if counted is not None:
        return Page(rows, page, size, counted, sections=columns.read(rows, len(ROW))) \
            if counted <= COUNT_BOUND else None
    if len(rows) > size:
        rows = rows[:size]
        return Page(rows, page, size, max(COUNT_BOUND, offset + size), exact=False,
                    sections=columns.read(rows, len(ROW)))
    return Page(rows, page, size, offset + len(rows), sections=columns.read(rows, len(ROW)))


def sorted_page(request: Request, query: dict[str, Any], columns: SectionColumns) -> Page:
    """A page of the list in another order than the newest report first
    (`order_of`), with its exact total in the same statement; a text search
    reads its matches through the word index (`search.look_up`), since the
    newest-first shortcuts (`searched_page`, `kept_page`) walk the number
    index, which this order does not follow."""
    words = search.look_up(request, query["q"]) if query.get("q") else None
    stmt = list_query(request, query, words)
    page, size = query["page"], query["pageSize"]
    order, offset, total = order_of(query), (page - 1) * size, total_of(request, query, stmt)
    if query.get("sort") == ListOrder.severity:
        ids = by_severity(stmt, size, offset)
        statement = select(*ROW, *columns.columns, total).join(ids, ids.c.id == Incident.id).order_by(*order)
    else:
        statement = page_statement(stmt, order, size, offset, columns, total)
    rows = read_rows(request, statement).all()
    if not rows:
        return Page(rows, page, size, list_total(request, query, stmt, rows))
    return Page(rows, page, size, rows[0][-1], sections=columns.read(rows, len(ROW)))


def by_severity(stmt: Select, limit: int, offset: int) -> Any:
    """The ids of `stmt`'s page in `ListOrder.severity`'s order, as a
    subquery: each severity's first `offset + limit` matches newest first
    (the (organization, severity, number) index read backwards, or the
    filters' own), then the page of those in order. Sorting every match by
    the severity's rank would read every match for one page."""
    parts = [select(part.subquery()) for part in (
        stmt.with_only_columns(Incident.id, Incident.number, literal(rank).label("rank"))
        .where(Incident.severity == severity.value)
        .order_by(Incident.number.desc()).limit(offset + limit)
        for rank, severity in enumerate(Severity))]
    found = union_all(*parts).subquery()
    return (select(found.c.id).order_by(found.c.rank.desc(), found.c.number.desc())
            .limit(limit).offset(offset).subquery())


def _on_postgresql(request: Request) -> bool:
    return request.dbsession.get_bind().dialect.name == "postgresql"


def list_page(request: Request, query: dict[str, Any], sections: bool = True) -> Page:
    """A page of the caller's list, newest number first unless `sort` says
    otherwise (`sorted_page`), with the total; `sections`: read the column
    sections the list shows with the rows (the list page shows none)."""
    columns = extensions.list_columns(request) if sections else extensions.NO_COLUMNS
    if (query.get("sort") or ListOrder.newest) != ListOrder.newest:
        return sorted_page(request, query, columns)
    if query.get("q"):
        return searched_page(request, query, list_query(request, query), columns)
    page, size = query["page"], query["pageSize"]
    kept = kept_page(request, query, columns)
    if kept is not None:
        rows, total = kept
    else:
        stmt = list_query(request, query)
        # The first row of the first page has the total when nothing is filtered out.
        extra = () if unfiltered(request, query) and page == 1 else (total_of(request, query, stmt),)
        rows = read_rows(request, page_statement(stmt, NEWEST_FIRST, size, (page - 1) * size,
                                                 columns, *extra)).all()
        total = bool(extra)
    if not rows:
        return Page(rows, page, size, list_total(request, query, list_query(request, query), rows))
    return Page(rows, page, size, rows[0][-1] if total else rows[0].number,
                sections=columns.read(rows, len(ROW)))


# The list's statements, by what decides their SQL text (see `kept_page`),
# in the app's cache of that name (`ehs_core.caches`), the least used first out.
KEPT = "incident list statements"
MOST_KEPT = 500

# The filters (one value each) whose incidents an index reads newest first,
# for a caller who sees everything: (organization, number), (organization,
# type, number), (organization, severity, number), (organization, status,
# number), (organization, site, type, number) (models.Incident). Their kept
# statement has the page's size in its SQL instead of a bound LIMIT, so that
# PostgreSQL plans it once for every value: psycopg prepares a statement run
# often, and PostgreSQL then keeps a generic plan unless it looks dearer than
# planning for each request's values, and PostgreSQL costs a bound LIMIT as
# a share of the matching rows, far above a page: every list was planned
# again, planning taking longer than the reading. Here the plan is to walk
# that index, whatever the values. Other filters keep the bound LIMIT and a
# plan per request on purpose: one generic plan for status and type walked
# the type's index for "reported illnesses", a handful of incidents, through
# every illness, and a reporter's list walked the number index; a plan for
# the values reads only what matches.
IN_NUMBER_ORDER = frozenset({frozenset(), frozenset({"type"}), frozenset({"severity"}),
                             frozenset({"status"}), frozenset({"siteId", "type"})})


@dataclass(frozen=True)
class _Kept:
    read: PlainRead
    row: type  # the rows' class: `ROW`'s names, then the sections' columns and the total
    total: bool  # the last column is the total


def kept_page(request: Request, query: dict[str, Any],
              columns: SectionColumns) -> tuple[list[Any], bool] | None:
    """A page's rows (as `list_page` reads them: `ROW`, the sections'
    `columns`, then the total unless the first row's number is the total)
    through a statement kept per set of filters, and whether they carry the
    total; None when a filter used is not a `BoundFilter` (its SQL may
    depend on its value: a join, say);

    Building the page's select and SQLAlchemy's cache key of it each
    request, running it through SQLAlchemy's execution, its result and
    psycopg's column descriptions cost more than PostgreSQL's work: the
    statement is built once per kind of caller (sees everything, sees their
    own), first page or not, sections shown, and filters with how many
    values each binds, and runs on the DBAPI cursor (`PlainRead`, as the
    signed-in identity does), with only the values bound: the caller's
    organization (and id), the filters' values, the page's limit and
    offset. The same SQL as the statement built for the request, the same
    rows; for a caller who sees everything, its total may come from a
    source a plugin registered for the filters used
    (`extensions.add_incident_total`: sums kept as incidents change),
    counted in the same statement when that source cannot tell. A list
    built for its request (a filter that is not a `BoundFilter`, `q`)
    counts."""
    identity = request.identity
    parameters: dict[str, Any] = {"organization": identity.account.organization_id}
    used: list[tuple[Any, int]] = []
    for item in extensions.filters(request):
        value = query.get(item.name)
        if value is None:
            continue
        if not isinstance(item.apply, BoundFilter):
            return None
        values = item.apply.values(value, request)
        for index, bound in enumerate(values):
            parameters[f"f{len(used)}_{index}"] = bound
        used.append((item, len(values)))
    if sees_everything(identity):
        kind = "all"
    elif identity is not None and identity.is_user:
        kind, parameters["user"] = "own", identity.user_id
    else:
        kind = "none"
    page, size = query["page"], query["pageSize"]
    if page > 1:
        parameters["offset"] = (page - 1) * size
    # The page's size in the SQL where one plan suits every value (see
    # IN_NUMBER_ORDER), else bound with the values.
    in_order = (kind == "all" and all(n == 1 for _, n in used)
                and frozenset(item.name for item, _ in used) in IN_NUMBER_ORDER)
    if not in_order:
        parameters["limit"] = size
        size = None
    # Who may give the total instead of counting (`extensions.add_incident_total`).
    totals = extensions.ready_totals(request) if kind == "all" and used else ()
    key = (kind, page == 1, columns.sections, tuple((item.name, n) for item, n in used), totals, size)
    kept = caches.named(request.registry, KEPT, MOST_KEPT).made(
        key, lambda: _kept_statement(request, kind, page == 1, size, columns, used, totals))
    rows = kept.read.all(request, parameters)
    return [kept.row._make(row) for row in rows], kept.total


def _kept_statement(request: Request, kind: str, first: bool, size: int | None, columns: SectionColumns,
                    used: list[tuple[Any, int]], totals: tuple[IncidentTotal, ...] = ()) -> _Kept:
    """The statement of `kept_page`'s key, with bound parameters for the
    values; its total from the first of `totals` that answers the filters
    used (for a caller who sees everything), else counted.

    `size`: the page's size written into the SQL (`IN_NUMBER_ORDER`), or
    None: bound with the values."""
    organization = bindparam("organization", type_=Integer)
    stmt = select(Incident).where(Incident.organization_id == organization)
    stmt = visible_incidents(stmt, request.identity, bindparam("user", type_=Integer))
    names = [[f"f{position}_{index}" for index in range(n)] for position, (_, n) in enumerate(used)]
    for (item, _), bound in zip(used, names, strict=True):
        stmt = item.apply.bound(stmt, bound)
    whole = kind == "all" and not used
    filters = {item.name: [bindparam(name) for name in bound]
               for (item, _), bound in zip(used, names, strict=True)}
    offered = extensions.offered_total(totals, filters, organization) if totals else None
    extra = () if whole and first else (_total(stmt, whole, organization, offered),)
    limit = bindparam("limit", type_=Integer) if size is None else literal_column(str(int(size)))
    order = NEWEST_FIRST
    if first:
        statement = page_statement(stmt, order, limit, 0, columns, *extra)
    else:
        statement = page_of(stmt, order, limit, bindparam("offset", type_=Integer), columns, *extra)
    names = [column.key for column in ROW] + [f"section_{i}" for i in range(len(columns.columns))]
    # A filtered list of what a person may see (their reports and their
    # actions' incidents) is planned for each request's values, not
    # prepared: once psycopg prepared it, PostgreSQL kept a generic plan for
    # it that walked the status's index through every closed incident,
    # where a plan for the values reads only the reporter's own.
    read = PlainRead(statement)
    return _Kept(read, namedtuple("ListRow", names + ["total"] * bool(extra)), bool(extra))
