"""Incident JSON, built for a whole page at once (names and plugin sections
in a constant number of queries)."""

from __future__ import annotations

import datetime as dt
import json
import unicodedata
from collections import Counter
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


def shown_names(request: Request, ids: set[int | None]) -> dict[int, str]:
    """The names of these users as the pages show them beside what people
    wrote (comments, history, action notes): a name that another person of
    the organization also bears is followed by the person's e-mail address
    ("Sue Safety (sue@acme.example)"). Names are not unique and anyone may
    change their own (/account/name): renaming oneself to the safety
    manager's name made one's past and future words read as theirs (ASVS
    5.0 16.2.1 asks that a log say who did what). Names count as one when
    they match once case, width and spacing are set aside (NFKC, casefold);
    letters of other scripts that look alike are not caught. Kept per
    worker like `user_names`; the JSON API keeps the plain names."""
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    if refdata.reference_version(request) is None:
        everyone = _shown_names(request)
    else:
        everyone = refdata.cached(request, "shown_names", _shown_names)
    return {i: everyone[i] for i in ids if i in everyone}


def name_key(name: str) -> str:
    """What two names that read as one share: NFKC, casefolded, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def _shown_names(request: Request) -> dict[int, str]:
    people = request.dbsession.execute(select(User.id, User.organization_id, User.name, User.email)).all()
    bearers = Counter((person.organization_id, name_key(person.name)) for person in people)
    return {person.id: (f"{person.name} ({person.email})"
                        if bearers[(person.organization_id, name_key(person.name))] > 1 else person.name)
            for person in people}


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
    the same names (`listing.ROW`: a list has no use for ORM objects).
    `fresh`: the incidents were filed in this request (see
    add_incident_section); `sections=False` leaves out the sections of the
    core's packages and plugins (a page that shows none of them need not
    send their queries); `read`: the column sections read with the rows
    (`listing.Page.sections`)."""
    return _items(request, incidents, detail, fresh, sections, read)


def _items(request: Request, incidents: Sequence[Any], detail: bool, fresh: bool, sections: bool,
           read: dict[int, dict[str, Any]] | None) -> list[dict[str, Any]]:
    if not incidents:
        return []
    found = location_and_people(request, incidents)
    sites, areas, names = found["site"], found["area"], found["user"]
    extra = sections_for(request, incidents, detail, fresh, read) if sections else {}
    items = []
    for incident in incidents:
        item = _own_part(incident)
        item["siteName"] = sites.get(incident.site_id)
        item["areaName"] = areas.get(incident.area_id)
        if incident.reporter_id is not None:
            item["reporter"] = {"id": incident.reporter_id, "name": names.get(incident.reporter_id)}
        item.update(extra[incident.id] if extra else {})
        items.append(item)
    return items


def incidents_json_text(request: Request, incidents: Sequence[Any],
                        read: dict[int, dict[str, Any]] | None = None) -> str:
    """`json.dumps(incidents_json(request, incidents, read=read))`."""
    return json.dumps(_items(request, incidents, False, False, True, read))


# The columns of an incident its JSON shows (the list reads them as rows:
# `listing.ROW`), the id first.
COLUMNS = ("id", "number", "title", "type", "severity", "status", "occurred_at", "occurred_offset_minutes",
           "site_id", "area_id", "location_detail", "description", "immediate_action", "anonymous",
           "reporter_id", "created_at", "updated_at", "closed_at")
def _own_part(incident: Any) -> dict[str, Any]:
    """An incident's JSON from its own columns, in the answer's order; the
    site's and area's names and the reporter are None (filled in by
    `incidents_json`), the sections not there yet."""
    number = incident.number
    created_at, updated_at, closed_at = incident.created_at, incident.updated_at, incident.closed_at
    return {
        "number": number,
        "reference": reference(number) if number is not None else None,
        "title": incident.title,
        "type": incident.type,
        "severity": incident.severity,
        "status": incident.status,
        "occurredAt": occurred_at(incident),
        "siteId": incident.site_id,
        "siteName": None,
        "areaId": incident.area_id,
        "areaName": None,
        "locationDetail": incident.location_detail,
        "description": incident.description,
        "immediateAction": incident.immediate_action,
        "anonymous": incident.anonymous,
        "reporter": None,
        "createdAt": iso(created_at),
        "updatedAt": iso(updated_at),
        "closedAt": iso(closed_at),
    }


def incident_json(request: Request, incident: Any, detail: bool = False,
                  fresh: bool = False, read: dict[str, Any] | None = None) -> dict[str, Any]:
    """`read`: the incident's column sections as read with it
    (`IncidentPage.sections`)."""
    return incidents_json(request, [incident], detail, fresh,
                          read=None if read is None else {incident.id: read})[0]
