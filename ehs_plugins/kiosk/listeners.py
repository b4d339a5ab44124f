"""What the kiosk adds to incidents: `channel` and `kiosk { id, name }`."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.incidents.models import Incident
from ehs_plugins.kiosk.models import KioskLink, KioskReport


def _links(request: Request, incidents: list[Incident]) -> dict[int, dict[str, Any]]:
    """{incident id: its `kiosk` section} for the incidents filed through a
    kiosk link; one query shared by both sections (plain columns: a list page
    needs no ORM objects)."""
    cache = request.environ.setdefault("kiosk.sections", {})
    key = tuple(sorted(i.id for i in incidents))
    if key not in cache:
        rows = request.dbsession.execute(
            select(KioskReport.incident_id, KioskLink.id, KioskLink.name, KioskReport.reporter_name)
            .join(KioskLink, KioskLink.id == KioskReport.kiosk_id)
            .where(KioskReport.incident_id.in_(key)))
        cache[key] = {incident_id: {"id": link_id, "name": name, "reporterName": reporter_name}
                      for incident_id, link_id, name, reporter_name in rows}
    return cache[key]


def channel_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    found = _links(request, incidents)
    return {i.id: "kiosk" if i.id in found else "web" for i in incidents}


def kiosk_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    return {incident_id: dict(section) for incident_id, section in _links(request, incidents).items()}
