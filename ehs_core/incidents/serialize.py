"""Incident JSON, built for a whole page at once (names and plugin sections
in a constant number of queries)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from pyramid.request import Request
from sqlalchemy import literal, select, union_all

from ehs_core import refdata
from ehs_core.incidents.extensions import sections_for
from ehs_core.incidents.models import reference
from ehs_core.serialize import iso  # noqa: F401 (views import it from here)
from ehs_core.sites.models import Area, Site
from ehs_core.sites.services import site_index
from ehs_core.users.models import User

# The zone of each offset incidents were reported with (at most one per
# minute of ±24 hours), made once rather than for each incident shown.
_OFFSET_ZONES: dict[int, dt.timezone] = {}


def occurred_at(incident: Any) -> str:
    """The instant in the offset it was reported with (e.g. 2026-03-01T08:15:00+02:00)."""
    minutes = incident.occurred_offset_minutes
    zone = _OFFSET_ZONES.get(minutes)
    if zone is None:
        zone = _OFFSET_ZONES[minutes] = dt.timezone(dt.timedelta(minutes=minutes))
    text = incident.occurred_at.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def user_names(request: Request, ids: set[int | None]) -> dict[int, str]:
    """The names of these users (deactivated ones too), from every user's
    name kept per worker (`ehs_core.refdata`, current after any change to a
    user); without a signed-in caller to key that by, in one query."""
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    if refdata.reference_version(request) is None:
        return dict(request.dbsession.execute(select(User.id, User.name).where(User.id.in_(ids))).all())
    everyone = refdata.cached(request, "user_names", _all_names)
    return {i: everyone[i] for i in ids if i in everyone}


def _all_names(request: Request) -> dict[int, str]:
    return dict(request.dbsession.execute(select(User.id, User.name)).all())


def location_and_people(request: Request, incidents: Sequence[Any]) -> dict[str, dict[int, str]]:
    """Names of the incidents' sites, areas and reporters: from the
    reference data each worker keeps (`ehs_core.refdata`: no statement for
    a signed-in caller), else in one query."""
    if refdata.reference_version(request) is not None:
        index = site_index(request)
        people = user_names(request, {i.reporter_id for i in incidents})
        return {"site": {i.site_id: index["site"][i.site_id]["name"] for i in incidents
                         if i.site_id in index["site"]},
                "area": {i.area_id: index["area"][i.area_id]["name"] for i in incidents
                         if i.area_id in index["area"]},
                "user": people}
    wanted = {
        "site": (Site, {i.site_id for i in incidents}),
        "area": (Area, {i.area_id for i in incidents if i.area_id is not None}),
        "user": (User, {i.reporter_id for i in incidents if i.reporter_id is not None}),
    }
    names: dict[str, dict[int, str]] = {kind: {} for kind in wanted}
    parts = [select(literal(kind).label("kind"), model.id, model.name).where(model.id.in_(ids))
             for kind, (model, ids) in wanted.items() if ids]
    for kind, key, name in request.dbsession.execute(union_all(*parts)):
        names[kind][key] = name
    return names


def person(names: dict[int, str], user_id: int | None) -> dict[str, Any] | None:
    return {"id": user_id, "name": names.get(user_id)} if user_id is not None else None


def incidents_json(request: Request, incidents: Sequence[Any], detail: bool = False,
                   fresh: bool = False, sections: bool = True,
                   read: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """`incidents`: `Incident`s, or the list's rows of plain columns with
    the same names (`listing.ROW`: loading ORM objects was a fifth of the
    list's time). `fresh`: the incidents were filed in this request (see
    add_incident_section); `sections=False` leaves out the sections of the
    core's packages and plugins (a page that shows none of them need not
    send their queries); `read`: the column sections read with the rows
    (`listing.Page.sections`)."""
    if not incidents:
        return []
    found = location_and_people(request, incidents)
    sites, areas, names = found["site"], found["area"], found["user"]
    extra = sections_for(request, incidents, detail, fresh, read) if sections else {}
    items = []
    # Each row's work written out once, in one pass: a page's 25 rows made
    # a fifth of the list's instructions.
    for incident in incidents:
        number, site_id, area_id = incident.number, incident.site_id, incident.area_id
        reporter_id = incident.reporter_id
        created_at, updated_at, closed_at = incident.created_at, incident.updated_at, incident.closed_at
        item = {
            "number": number,
            "reference": reference(number) if number is not None else None,
            "title": incident.title,
            "type": incident.type,
            "severity": incident.severity,
            "status": incident.status,
            "occurredAt": occurred_at(incident),
            "siteId": site_id,
            "siteName": sites.get(site_id),
            "areaId": area_id,
            "areaName": areas.get(area_id),
            "locationDetail": incident.location_detail,
            "description": incident.description,
            "immediateAction": incident.immediate_action,
            "anonymous": incident.anonymous,
            "reporter": None if reporter_id is None else {"id": reporter_id, "name": names.get(reporter_id)},
            # `iso`, inline (instants, never dates, here).
            "createdAt": None if created_at is None else created_at.isoformat().replace("+00:00", "Z"),
            "updatedAt": None if updated_at is None else updated_at.isoformat().replace("+00:00", "Z"),
            "closedAt": None if closed_at is None else closed_at.isoformat().replace("+00:00", "Z"),
        }
        if extra:
            item.update(extra[incident.id])
        items.append(item)
    return items


def incident_json(request: Request, incident: Any, detail: bool = False,
                  fresh: bool = False, read: dict[str, Any] | None = None) -> dict[str, Any]:
    """`read`: the incident's column sections as read with it
    (`IncidentContext.sections`)."""
    return incidents_json(request, [incident], detail, fresh,
                          read=None if read is None else {incident.id: read})[0]
