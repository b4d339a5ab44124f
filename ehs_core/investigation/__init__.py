"""The investigation of an incident and its root causes."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import ColumnElement, select

from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.models import Incident
from ehs_core.investigation.models import Investigation, RootCause
from ehs_core.rowsjson import DOCUMENT, FLAG, INSTANT, columns_of, decoder, json_rows
from ehs_core.serialize import iso


def investigation_json(item: Investigation | InvestigationRow) -> dict[str, Any]:
    return {"id": item.id, "leadId": item.lead_id, "method": item.method, "summary": item.summary,
            "completed": item.completed, "createdAt": iso(item.created_at),
            "updatedAt": iso(item.updated_at)}


def root_cause_json(item: RootCause | RootCauseRow) -> dict[str, Any]:
    return {"id": item.id, "category": item.category, "description": item.description,
            "whys": list(item.whys or []), "createdAt": iso(item.created_at)}


class InvestigationRow(NamedTuple):
    """An investigation as the detail and the workspace read it."""

    id: int
    incident_id: int
    lead_id: int | None
    method: str | None
    summary: str | None
    completed: bool
    created_at: Any
    updated_at: Any


class RootCauseRow(NamedTuple):
    """A root cause as the detail and the workspace read it."""

    id: int
    incident_id: int
    category: str
    description: str
    whys: list[str] | None
    created_at: Any


_investigations = decoder(InvestigationRow, completed=FLAG, created_at=INSTANT, updated_at=INSTANT)
_causes = decoder(RootCauseRow, whys=DOCUMENT, created_at=INSTANT)


def investigation_reads(request: Request) -> dict[str, dict[int, Any]]:
    """`request.investigation_reads`: what this request read, by incident
    id ("investigations", "causes"): the detail's sections and the
    workspace on the incident page show the same rows."""
    return {"investigations": {}, "causes": {}}


def loaded(request: Request, incidents: list[Incident],
           ) -> tuple[dict[int, InvestigationRow], dict[int, list[RootCauseRow]]]:
    """The incidents' investigations and root causes (by id), read once per
    request (with the detail's sections when it has them)."""
    investigations = request.investigation_reads["investigations"]
    causes = request.investigation_reads["causes"]
    missing = [i.id for i in incidents if i.id not in investigations or i.id not in causes]
    if missing:
        rows = request.dbsession.execute(
            select(Incident.id, investigation_column(), root_causes_column()).where(Incident.id.in_(missing)))
        for incident_id, investigation, found in rows:
            remember(request, incident_id, investigation=investigation, causes=found)
    return ({i.id: investigations[i.id] for i in incidents if investigations[i.id] is not None},
            {i.id: causes[i.id] for i in incidents})


def remember(request: Request, incident_id: int, **values: Any) -> None:
    """Keep what a column section read (`investigation=`, `causes=`)."""
    if "investigation" in values:
        found = _investigations(values["investigation"])
        request.investigation_reads["investigations"][incident_id] = found[0] if found else None
    if "causes" in values:
        request.investigation_reads["causes"][incident_id] = _causes(values["causes"])


def forget_loaded(request: Request) -> None:
    """After a change to an investigation or its causes in this request."""
    for kept in request.investigation_reads.values():
        kept.clear()


@functools.cache
def investigation_column() -> ColumnElement[Any]:
    return select(json_rows(*columns_of(InvestigationRow, Investigation))).where(
        Investigation.incident_id == Incident.id).scalar_subquery()


@functools.cache
def root_causes_column() -> ColumnElement[Any]:
    return select(json_rows(*columns_of(RootCauseRow, RootCause))).where(
        RootCause.incident_id == Incident.id).scalar_subquery()


def investigation_section(request: Request, incident: Incident, value: Any) -> dict[str, Any] | None:
    remember(request, incident.id, investigation=value)
    row = request.investigation_reads["investigations"][incident.id]
    return investigation_json(row) if row is not None else None


def root_causes_section(request: Request, incident: Incident, value: Any) -> list[dict[str, Any]]:
    remember(request, incident.id, causes=value)
    return [root_cause_json(row) for row in request.investigation_reads["causes"][incident.id]]


def includeme(config: Configurator) -> None:
    config.add_request_method(investigation_reads, reify=True)
    config.add_route("incident.investigation", INCIDENT + "/investigation", factory=FACTORY)
    config.add_route("incident.root_causes", INCIDENT + "/root-causes", factory=FACTORY)
    config.add_route("root_cause", r"/api/root-causes/{id:\d{1,9}}",
                     factory="ehs_core.investigation.views.root_cause_factory")
    config.add_incident_section("investigation", column=investigation_column, decode=investigation_section,
                                detail_only=True, fresh=lambda: None)
    config.add_incident_section("rootCauses", column=root_causes_column, decode=root_causes_section,
                                detail_only=True, fresh=list)
    config.scan(".views")
    config.include(".pages")  # the workspace on /incidents/<number>
