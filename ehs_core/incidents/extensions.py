"""Extension points on incidents: sections added to an incident's JSON and
filters added to its list and export. The core registers its own parts
through them too (filters by type/severity/status/site; the detail's
investigation, root causes, actions and attachments)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import Select

from ehs_core.directives import register_once
from ehs_core.incidents.models import Incident

# provider(request, incidents) -> {incident.id: value}; one call for a whole
# page, so a section costs a constant number of queries.
SectionProvider = Callable[[Request, list[Incident]], dict[int, Any]]
FilterApply = Callable[[Select, Any, Request], Select]


@dataclass(frozen=True)
class IncidentSection:
    name: str
    provider: SectionProvider
    permission: str | None = None
    detail_only: bool = False
    fresh: Callable[[], Any] | None = None


@dataclass(frozen=True)
class IncidentFilter:
    name: str
    node: colander.SchemaNode
    apply: FilterApply


def add_incident_section(config: Configurator, name: str, provider: SectionProvider, *,
                         permission: str | None = None, detail_only: bool = False,
                         fresh: Callable[[], Any] | None = None) -> None:
    """Directive: add `name` to incident JSON (list and detail, or detail only),
    shown to callers who have `permission` (on the root) when one is given.

    `fresh()` gives the section's value for a report the API has just filed
    in this request, which nothing can have been attached to yet; the answer
    to a new report then spares the provider's query (creating is the
    busiest write)."""
    section = IncidentSection(name, config.maybe_dotted(provider), permission, detail_only, fresh)

    def register() -> None:
        config.registry.setdefault("incident_sections", []).append(section)

    register_once(config, "ehs.incident_section", name, register)


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


def sections_for(request: Request, incidents: list[Incident], detail: bool,
                 fresh: bool = False) -> dict[int, dict[str, Any]]:
    """Every section's values; `fresh`: the incidents were filed in this request."""
    extra: dict[int, dict[str, Any]] = {incident.id: {} for incident in incidents}
    if not incidents:
        return extra
    for section in request.registry.get("incident_sections", []):
        if section.detail_only and not detail:
            continue
        if section.permission and not request.has_permission(section.permission):
            continue
        if fresh and section.fresh is not None:
            for incident in incidents:
                extra[incident.id][section.name] = section.fresh()
            continue
        values = section.provider(request, incidents)
        for incident in incidents:
            extra[incident.id][section.name] = values.get(incident.id)
    return extra


def filters(request: Request) -> list[IncidentFilter]:
    return list(request.registry.get("incident_filters", []))


def includeme(config: Configurator) -> None:
    config.add_directive("add_incident_section", add_incident_section)
    config.add_directive("add_incident_filter", add_incident_filter)
