"""Extension points on incidents: sections added to an incident's JSON,
filters added to its list and export, and cheaper sources of the list's
total. The core registers its own parts through them too (filters by
type/severity/status/site; the detail's investigation, root causes,
actions and attachments)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import ColumnElement, Select, bindparam, select

from ehs_core import caches
from ehs_core.db import PlainRead, read_rows
from ehs_core.directives import register_once
from ehs_core.incidents.models import Incident

# provider(request, incidents) -> {incident.id: value}; one call for a whole
# page, so a section costs a constant number of queries. The list passes
# rows of plain columns named as `Incident`'s attributes (`listing.ROW`:
# what its JSON shows), not ORM objects.
SectionProvider = Callable[[Request, Sequence[Any]], dict[int, Any]]
# column() -> a scalar SQL expression correlated to `Incident` (made once);
# decode(request, incident, value) -> the section's value (`incident`: as
# the provider's).
SectionColumn = Callable[[], ColumnElement[Any]]
SectionDecode = Callable[[Request, Any, Any], Any]
FilterApply = Callable[[Select, Any, Request], Select]
# source(filters, organization) -> a scalar SQL expression giving exactly how
# many of the organization's incidents the filters keep, or NULL when it
# cannot tell (the list then counts them); or None to decline this set of
# filters. `filters`: each filter used, by name, with the bound parameters
# of its values (the list's own: its statement binds them once);
# `organization`: the bound organization id. Called once per set of filters.
TotalSource = Callable[[Mapping[str, Sequence[ColumnElement[Any]]], ColumnElement[int]],
                       ColumnElement[Any] | None]


@dataclass(frozen=True)
class IncidentSection:
    name: str
    provider: SectionProvider | None
    permission: str | None = None
    detail_only: bool = False
    fresh: Callable[[], Any] | None = None
    column: SectionColumn | None = None
    decode: SectionDecode | None = None


@dataclass(frozen=True)
class Reporter:
    """Who filed a report without an account, in the reader's words: the
    name they typed (None: they gave none) and what they reported through
    (a reporting link's name, say), as a plugin knows them."""

    name: str | None
    through: str | None


# words(request, section value) -> Reporter, or None when the section says
# nothing about this incident (a report from the web).
ReporterWords = Callable[[Request, Any], Reporter | None]


@dataclass(frozen=True)
class ReporterSource:
    section: str
    words: ReporterWords


@dataclass(frozen=True)
class IncidentFilter:
    name: str
    node: colander.SchemaNode
    apply: FilterApply


@dataclass(frozen=True)
class IncidentTotal:
    name: str
    source: TotalSource
    ready: Callable[[Request], bool] | None = None


@dataclass(frozen=True)
class BoundFilter:
    """A filter's `apply` whose SQL is the same for every value the filter
    takes, but for how many values it binds: `where(values)` is the
    condition on `values(value, request)` (the query value as the values to
    bind; by default the list a repeated parameter gives). The list keeps
    its statement, compiled, per set of such filters and how many values
    each binds, and only binds the values (`listing.list_page`).
    `where` is called with bound parameters in place of the values, so it
    must use them only as SQL values (`column.in_(values)`,
    `column >= values[0]`). Any other `apply` (a filter that joins, say)
    is called as it is, and the list's statement is built for the request."""

    where: Callable[[Sequence[Any]], ColumnElement[bool]]
    values: Callable[[Any, Request], Sequence[Any]] = lambda value, _request: value

    def __call__(self, query: Select, value: Any, request: Request) -> Select:
        return query.where(self.where(self.values(value, request)))

    def bound(self, query: Select, names: Sequence[str]) -> Select:
        """The filter with a bound parameter of each of these names in
        place of its values."""
        return query.where(self.where([bindparam(name) for name in names]))


def add_incident_section(config: Configurator, name: str, provider: SectionProvider | None = None, *,
                         permission: str | None = None, detail_only: bool = False,
                         fresh: Callable[[], Any] | None = None,
                         column: SectionColumn | None = None,
                         decode: SectionDecode | None = None) -> None:
    """Directive: add `name` to incident JSON (list and detail, or detail only),
    shown to callers who have `permission` (on the root) when one is given.

    The value comes from `provider(request, incidents)`, or, better, from
    `column()`: a scalar SQL expression correlated to `Incident` (e.g. a
    count, or `ehs_core.rowsjson.json_rows` of the rows that hang off it),
    turned into the value by `decode(request, incident, value)`. Every
    column section of a page is read in one statement, so a section costs
    no statement of its own.

    `fresh()` gives the section's value for a report the API has just filed
    in this request, which nothing can have been attached to yet; the answer
    to a new report then spares the provider's query (creating is the
    busiest write)."""
    if (provider is None) == (column is None):
        raise ValueError(f"incident section {name!r}: give a provider or a column, not both")
    section = IncidentSection(name, config.maybe_dotted(provider), permission, detail_only, fresh,
                              config.maybe_dotted(column), config.maybe_dotted(decode))

    def register() -> None:
        config.registry.setdefault("incident_sections", []).append(section)

    register_once(config, "ehs.incident_section", name, register)


def add_reporter_source(config: Configurator, section: str, words: ReporterWords) -> None:
    """Directive: the incident section `section` (registered with
    `add_incident_section`, a column section to be in the export) says
    who filed a report that has no reporter account: `words(request,
    value)` gives the `Reporter` (the name they typed, what they reported
    through) or None. The incident page's "Reported by", its history's
    first entry and the CSV export's reporter columns show it (issue #36
    item 5), where the core knows no plugin's channel by name."""
    source = ReporterSource(section, config.maybe_dotted(words))

    def register() -> None:
        config.registry.setdefault("reporter_sources", []).append(source)

    register_once(config, "ehs.reporter_source", section, register)


def reporter_of(request: Request, sections: Mapping[str, Any]) -> Reporter | None:
    """The `Reporter` the registered sources find in an incident's section
    values (its JSON, or the export's decoded columns), the first that
    answers; None for a report they know nothing of."""
    for source in request.registry.get("reporter_sources", ()):
        if sections.get(source.section) is not None:
            found = source.words(request, sections[source.section])
            if found is not None:
                return found
    return None


def reporter_columns(request: Request) -> list[tuple[IncidentSection, ColumnElement[Any]]]:
    """The column sections the reporter sources read, shown to this caller,
    with their columns (for the export, which reads no incident JSON)."""
    wanted = {source.section for source in request.registry.get("reporter_sources", ())}
    return [(section, section.column()) for section in shown_sections(request, True)
            if section.name in wanted and section.column is not None]


def add_incident_filter(config: Configurator, name: str, node: colander.SchemaNode,
                        apply: FilterApply) -> None:
    """Directive: a query parameter `name` (validated by `node`) that narrows
    the incident list and export."""
    node = node.clone()
    node.name = name
    item = IncidentFilter(name, node, config.maybe_dotted(apply))

    def register() -> None:
        config.registry.setdefault("incident_filters", []).append(item)

    register_once(config, "ehs.incident_filter", name, register)


def add_incident_total(config: Configurator, name: str, source: TotalSource, *,
                       ready: Callable[[Request], bool] | None = None) -> None:
    """Directive: offer the incident list a cheaper exact total (`source`,
    see `TotalSource`) for the lists of callers who see every incident of
    their organization, narrowed only by `BoundFilter`s (no `q`): sums a
    plugin keeps as incidents change, say, where the list would count every
    match (an index scan of thousands of entries at 100,000 incidents).

    The total must be exact: the expression must equal the count of the
    filtered incidents in the statement's own snapshot, or be NULL, and
    the list then counts in the same statement (`COALESCE(source, count)`:
    PostgreSQL evaluates the count only when the source is NULL).
    `ready(request)` false declines for this request (the sums lag the
    request's own uncommitted changes, say). The first registered source
    that answers a set of filters gives its total; the core never imports
    a plugin, it only asks what is registered here."""
    item = IncidentTotal(name, config.maybe_dotted(source), config.maybe_dotted(ready))

    def register() -> None:
        config.registry.setdefault("incident_totals", []).append(item)

    register_once(config, "ehs.incident_total", name, register)


def ready_totals(request: Request) -> tuple[IncidentTotal, ...]:
    """The total sources registered that may answer this request."""
    return tuple(item for item in request.registry.get("incident_totals", ())
                 if item.ready is None or item.ready(request))


def offered_total(totals: Sequence[IncidentTotal], filters: Mapping[str, Sequence[ColumnElement[Any]]],
                  organization: ColumnElement[int]) -> ColumnElement[Any] | None:
    """The first of `totals` that answers these filters (see `TotalSource`), or None."""
    for item in totals:
        found = item.source(filters, organization)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class SectionColumns:
    """The column sections a list shows, and the columns that read them,
    to be selected with the page's rows (`listing.list_page`): sections
    that share a column (the kiosk's channel and link) read it once."""

    sections: tuple[IncidentSection, ...]
    columns: tuple[ColumnElement[Any], ...]
    positions: tuple[int, ...]  # each section's column

    def read(self, rows: Sequence[Any], start: int) -> dict[int, dict[str, Any]]:
        """Each row's sections, by the row's id, from its columns from `start` on."""
        named = [(s.name, start + p) for s, p in zip(self.sections, self.positions, strict=True)]
        return {row.id: {name: row[p] for name, p in named} for row in rows}


NO_COLUMNS = SectionColumns((), (), ())


def shown_sections(request: Request, detail: bool) -> list[IncidentSection]:
    """The sections this caller is shown in the list or the detail."""
    return [section for section in request.registry.get("incident_sections", [])
            if (detail or not section.detail_only)
            and not (section.permission and not request.has_permission(section.permission))]


def list_columns(request: Request) -> SectionColumns:
    """The columns of the column sections this caller's list shows."""
    sections = tuple(s for s in shown_sections(request, False) if s.column is not None)
    if not sections:
        return NO_COLUMNS
    factories = list(dict.fromkeys(s.column for s in sections))
    return SectionColumns(sections, tuple(column() for column in factories),
                          tuple(factories.index(s.column) for s in sections))


def sections_for(request: Request, incidents: Sequence[Any], detail: bool, fresh: bool = False,
                 read: dict[int, dict[str, Any]] | None = None) -> dict[int, dict[str, Any]]:
    """Every section's values; `fresh`: the incidents were filed in this
    request; `read`: the column sections already read with the incidents
    (`SectionColumns.read`), by id. The column sections are read first, in
    one statement (none when `read` has them all), so a provider may use
    what they decoded (the investigation's causes, say). `incidents` are
    `Incident`s, or rows with their attributes' names (`listing.ROW`)."""
    extra: dict[int, dict[str, Any]] = {incident.id: {} for incident in incidents}
    if not incidents:
        return extra
    shown = shown_sections(request, detail)
    given = read.get(incidents[0].id, {}) if read else {}
    columns = [s for s in shown if s.column is not None and not (fresh and s.fresh is not None)
               and s.name not in given]
    values = _read_columns(request, incidents, tuple(columns)) if columns else {}
    if read:
        values = {i: {**found, **values.get(i, {})} for i, found in read.items()} if values else read
    for section in shown:
        name = section.name
        if fresh and section.fresh is not None:
            for incident in incidents:
                extra[incident.id][name] = section.fresh()
        elif section.column is not None:
            decode = section.decode
            for incident in incidents:
                value = values[incident.id][name]
                extra[incident.id][name] = decode(request, incident, value) if decode else value
        else:
            values_of = section.provider(request, incidents)
            for incident in incidents:
                extra[incident.id][section.name] = values_of.get(incident.id)
    return extra


def _read_columns(request: Request, incidents: Sequence[Any],
                  sections: tuple[IncidentSection, ...]) -> dict[int, dict[str, Any]]:
    """The column sections of these incidents, in one statement."""
    # Sections that share a column (the kiosk's channel and link) read it once.
    factories = list(dict.fromkeys(s.column for s in sections))
    statement = select(Incident.id, *(column() for column in factories)).where(
        Incident.id.in_(bindparam("ids", expanding=True)))
    positions = [factories.index(s.column) for s in sections]
    rows = read_rows(request, statement, {"ids": [i.id for i in incidents]})
    return {incident_id: {s.name: values[p] for s, p in zip(sections, positions, strict=True)}
            for incident_id, *values in rows}


@dataclass(frozen=True)
class DetailRead:
    """One incident as its detail reads it in one statement
    (`read_one_with_sections`): its columns, the raw value of each column
    section by name, and what was registered to be read with it
    (`read_with_detail`: the workflow's facts; on the page, the timeline
    and the panels' columns), by name."""

    columns: tuple[Any, ...]
    sections: dict[str, Any]
    read_with: dict[str, Any]


# Registered columns read with every incident detail, and with the page only.
WITH_DETAIL, WITH_PAGE = "incident_detail_columns", "incident_page_columns"


def read_with_detail(config: Configurator, name: str, column: SectionColumn, *,
                     page_only: bool = False) -> None:
    """Have the detail's statement (`read_one_with_sections`) read `column()`,
    correlated to `Incident`, with the incident (`page_only`: on the incident
    page, not the JSON detail); its value is `DetailRead.read_with[name]`,
    carried by the request's `IncidentContext`. Registered while the app is
    configured, so each kind of detail has one statement."""
    config.registry.setdefault(WITH_PAGE if page_only else WITH_DETAIL, []).append((name, column))


def read_one_with_sections(request: Request, key: Any,
                           build: Callable[[], tuple[Sequence[ColumnElement[Any]], ColumnElement[bool]]],
                           parameters: dict[str, Any], page: bool = False) -> DetailRead | None:
    """One incident's columns, the column sections of its detail and the
    columns registered with `read_with_detail`, in one statement.

    `build()` gives the columns (the incident's id first) and the condition
    that finds the incident (naming bound parameters whose values are in
    `parameters`), the same for the same `key`. Answers None when no row matches. A section shown only
    with a permission is left to `sections_for`, which checks it on the
    request's context (there is none yet while the context factory reads)."""
    registry = request.registry
    sections = tuple(s for s in registry.get("incident_sections", ())
                     if s.column is not None and s.permission is None)
    also = (*registry.get(WITH_DETAIL, ()), *(registry.get(WITH_PAGE, ()) if page else ()))
    factories = list(dict.fromkeys([s.column for s in sections] + [column for _, column in also]))

    def make() -> tuple[int, PlainRead]:
        columns, condition = build()
        return len(columns), PlainRead(select(*columns, *(column() for column in factories)).where(condition))

    # One statement per shape (`key`, the sections and what is read with them).
    start, read = caches.named(registry, "incident detail statements", 64).made((key, sections, also), make)
    row = read.first(request, parameters)
    if row is None:
        return None
    return DetailRead(row[:start], {s.name: row[start + factories.index(s.column)] for s in sections},
                      {name: row[start + factories.index(column)] for name, column in also})


def filters(request: Request) -> list[IncidentFilter]:
    return list(request.registry.get("incident_filters", []))


def includeme(config: Configurator) -> None:
    config.add_directive("add_incident_section", add_incident_section)
    config.add_directive("add_incident_filter", add_incident_filter)
    config.add_directive("add_incident_total", add_incident_total)
    config.add_directive("add_reporter_source", add_reporter_source)
    config.add_directive("read_with_detail", read_with_detail)
