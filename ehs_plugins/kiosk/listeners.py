"""What the kiosk adds to incidents: `channel` and `kiosk { id, name }`."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.incidents.models import Incident
from ehs_plugins.kiosk.models import KioskLink, KioskReport


def _links(request: Request, incidents: list[Incident]) -> dict[int, tuple[KioskReport, KioskLink]]:
    cache = request.environ.setdefault("kiosk.sections", {})
    key = tuple(sorted(i.id for i in incidents))
    if key not in cache:
        rows = request.dbsession.execute(
            select(KioskReport, KioskLink).join(KioskLink, KioskLink.id == KioskReport.kiosk_id)
            .where(KioskReport.incident_id.in_(key)))
        cache[key] = {report.incident_id: (report, link) for report, link in rows}
    return cache[key]


def channel_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    found = _links(request, incidents)
    return {i.id: "kiosk" if i.id in found else "web" for i in incidents}


def kiosk_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    return {incident_id: {"id": link.id, "name": link.name, "reporterName": report.reporter_name}
            for incident_id, (report, link) in _links(request, incidents).items()}
