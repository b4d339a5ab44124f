"""Incident JSON, built for a whole page at once (names and plugin sections
in a constant number of queries)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.request import Request
from sqlalchemy import literal, select, union_all

from ehs_core.incidents.extensions import sections_for
from ehs_core.incidents.models import Incident
from ehs_core.serialize import iso
from ehs_core.sites.models import Area, Site
from ehs_core.users.models import User


def occurred_at(incident: Incident) -> str:
    """The instant in the offset it was reported with (e.g. 2026-03-01T08:15:00+02:00)."""
    zone = dt.timezone(dt.timedelta(minutes=incident.occurred_offset_minutes))
    text = incident.occurred_at.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def user_names(request: Request, ids: set[int | None]) -> dict[int, str]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    return dict(request.dbsession.execute(select(User.id, User.name).where(User.id.in_(ids))).all())


# Names read with a page of incidents (see `name_columns`), by kind and id.
NAMES = "ehs.incident_names"


def name_columns() -> tuple[Any, Any, Any]:
    """The site's, area's and reporter's names as columns of an incident
    query, so a list page reads them with its incidents instead of in a
    query of their own (`remember_names` keeps them for `incidents_json`)."""
    return (select(Site.name).where(Site.id == Incident.site_id).scalar_subquery().label("site_name"),
            select(Area.name).where(Area.id == Incident.area_id).scalar_subquery().label("area_name"),
            select(User.name).where(User.id == Incident.reporter_id).scalar_subquery()
            .label("reporter_name"))


def remember_names(request: Request, rows: Any) -> list[Incident]:
    """The incidents of rows (incident, site name, area name, reporter name),
    their names kept for this request's `location_and_people`."""
    names = request.environ.setdefault(NAMES, {"site": {}, "area": {}, "user": {}})
    incidents = []
    for incident, site_name, area_name, reporter_name in rows:
        names["site"][incident.site_id] = site_name
        if incident.area_id is not None:
            names["area"][incident.area_id] = area_name
        if incident.reporter_id is not None:
            names["user"][incident.reporter_id] = reporter_name
        incidents.append(incident)
    return incidents


def location_and_people(request: Request, incidents: list[Incident]) -> dict[str, dict[int, str]]:
    """Names of the incidents' sites, areas and reporters, in one query."""
    wanted = {
        "site": (Site, {i.site_id for i in incidents}),
        "area": (Area, {i.area_id for i in incidents if i.area_id is not None}),
        "user": (User, {i.reporter_id for i in incidents if i.reporter_id is not None}),
    }
    names: dict[str, dict[int, str]] = {kind: {} for kind in wanted}
    # What this request has loaded already (the signed-in user, a new
    # report's site and area, the names read with a list page) is not asked
    # for again.
    dbsession = request.dbsession
    read = request.environ.get(NAMES, {})
    identity = request.identity
    if identity is not None and identity.is_user and identity.user_id in wanted["user"][1]:
        names["user"][identity.user_id] = identity.account.name
        wanted["user"][1].discard(identity.user_id)
    for kind, (model, ids) in wanted.items():
        for key in list(ids):
            if key in read.get(kind, {}):
                names[kind][key] = read[kind][key]
                ids.discard(key)
                continue
            loaded = dbsession.identity_map.get(dbsession.identity_key(model, key))
            if loaded is not None and "name" in loaded.__dict__:
                names[kind][key] = loaded.__dict__["name"]
                ids.discard(key)
    parts = [select(literal(kind).label("kind"), model.id, model.name).where(model.id.in_(ids))
             for kind, (model, ids) in wanted.items() if ids]
    if parts:
        for kind, key, name in request.dbsession.execute(union_all(*parts)):
            names[kind][key] = name
    return names


def person(names: dict[int, str], user_id: int | None) -> dict[str, Any] | None:
    return {"id": user_id, "name": names.get(user_id)} if user_id is not None else None


def incidents_json(request: Request, incidents: list[Incident], detail: bool = False,
                   fresh: bool = False, sections: bool = True) -> list[dict[str, Any]]:
    """`fresh`: the incidents were filed in this request (see
    add_incident_section); `sections=False` leaves out the sections of the
    core's packages and plugins (a page that shows none of them need not
    send their queries)."""
    if not incidents:
        return []
    found = location_and_people(request, incidents)
    sites, areas, names = found["site"], found["area"], found["user"]
    extra = sections_for(request, incidents, detail, fresh) if sections else {}
    items = []
    for incident in incidents:
        item = {
            "number": incident.number,
            "reference": incident.reference,
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


def incident_json(request: Request, incident: Incident, detail: bool = False,
                  fresh: bool = False) -> dict[str, Any]:
    return incidents_json(request, [incident], detail, fresh)[0]
