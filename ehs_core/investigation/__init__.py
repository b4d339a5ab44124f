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


def loaded(request: Request, incidents: list[Incident],
           ) -> tuple[dict[int, Investigation], dict[int, list[RootCause]]]:
    """The incidents' investigations and root causes (by id), read once per
    request: the detail's sections and the investigation workspace on the
    incident page show the same rows."""
    memo = request.environ.setdefault("ehs.investigations", {})
    missing = [i.id for i in incidents if i.id not in memo]
    if missing:
        found: dict[int, tuple[Investigation | None, list[RootCause]]] = {
            incident_id: (None, []) for incident_id in missing}
        for row in request.dbsession.execute(select(Investigation).where(
                Investigation.incident_id.in_(missing))).scalars():
            found[row.incident_id] = (row, found[row.incident_id][1])
        for row in request.dbsession.execute(select(RootCause).where(
                RootCause.incident_id.in_(missing)).order_by(RootCause.id)).scalars():
            found[row.incident_id][1].append(row)
        memo.update(found)
    return ({i.id: memo[i.id][0] for i in incidents if memo[i.id][0] is not None},
            {i.id: memo[i.id][1] for i in incidents})


def forget_loaded(request: Request) -> None:
    """After a change to an investigation or its causes in this request."""
    request.environ.pop("ehs.investigations", None)


def investigation_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    investigations, _ = loaded(request, incidents)
    return {incident_id: investigation_json(row) for incident_id, row in investigations.items()}


def root_causes_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    _, causes = loaded(request, incidents)
    return {incident_id: [root_cause_json(row) for row in rows] for incident_id, rows in causes.items()}


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
