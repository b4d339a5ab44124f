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
from ehs_core.serialize import iso
from ehs_core.sites.models import Area, Site
from ehs_core.sites.services import site_index
from ehs_core.users.models import User


def occurred_at(incident: Any) -> str:
    """The instant in the offset it was reported with (e.g. 2026-03-01T08:15:00+02:00)."""
    zone = dt.timezone(dt.timedelta(minutes=incident.occurred_offset_minutes))
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
    for incident in incidents:
        item = {
            "number": incident.number,
            "reference": reference(incident.number) if incident.number is not None else None,
            "title": incident.title,
            "type": incident.type,
            "severity": incident.severity,
            "status": incident.status,
            "occurredAt": occurred_at(incident),
            "siteId": incident.site_id,
            "siteName": sites.get(incident.site_id),
            "areaId": incident.area_id,
            "areaName": areas.get(incident.area_id),
            "locationDetail": incident.location_detail,
            "description": incident.description,
            "immediateAction": incident.immediate_action,
            "anonymous": incident.anonymous,
            "reporter": person(names, incident.reporter_id),
            "createdAt": iso(incident.created_at),
            "updatedAt": iso(incident.updated_at),
            "closedAt": iso(incident.closed_at),
        }
        item.update(extra.get(incident.id, ()))
        items.append(item)
    return items


def incident_json(request: Request, incident: Any, detail: bool = False,
                  fresh: bool = False, read: dict[str, Any] | None = None) -> dict[str, Any]:
    """`read`: the incident's column sections as read with it
    (`IncidentContext.sections`)."""
    return incidents_json(request, [incident], detail, fresh,
                          read=None if read is None else {incident.id: read})[0]
