"""The investigation of an incident and its root causes."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.models import Incident
from ehs_core.investigation.models import Investigation, RootCause
from ehs_core.serialize import iso


def investigation_json(item: Investigation) -> dict[str, Any]:
    return {"id": item.id, "leadId": item.lead_id, "method": item.method, "summary": item.summary,
            "completed": item.completed, "createdAt": iso(item.created_at),
            "updatedAt": iso(item.updated_at)}


def root_cause_json(item: RootCause) -> dict[str, Any]:
    return {"id": item.id, "category": item.category, "description": item.description,
            "whys": list(item.whys or []), "createdAt": iso(item.created_at)}


def investigation_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    ids = [i.id for i in incidents]
    rows = request.dbsession.execute(select(Investigation).where(Investigation.incident_id.in_(ids)))
    return {row.incident_id: investigation_json(row) for row in rows.scalars()}


def root_causes_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    found: dict[int, list] = {i.id: [] for i in incidents}
    rows = request.dbsession.execute(select(RootCause).where(
        RootCause.incident_id.in_(list(found))).order_by(RootCause.id))
    for row in rows.scalars():
        found[row.incident_id].append(root_cause_json(row))
    return found


def includeme(config: Configurator) -> None:
    config.add_route("incident.investigation", INCIDENT + "/investigation", factory=FACTORY)
    config.add_route("incident.root_causes", INCIDENT + "/root-causes", factory=FACTORY)
    config.add_route("root_cause", r"/api/root-causes/{id:\d{1,9}}",
                     factory="ehs_core.investigation.views.root_cause_factory")
    config.add_incident_section("investigation", investigation_section, detail_only=True,
                                fresh=lambda: None)
    config.add_incident_section("rootCauses", root_causes_section, detail_only=True, fresh=list)
    config.scan(".views")
    config.include(".pages")  # the workspace on /incidents/<number>
