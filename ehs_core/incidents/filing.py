"""Filing and correcting reports: the one place a report is stored, numbered,
recognised as a retry (`clientId`) and placed on a site, whichever face
(the JSON API, a kiosk link, the web pages) takes it.

Convention of the service modules (`filing`, `listing`, `comments`,
`attachments.storage`, `workflow.transitions`, `investigation.services`,
`actions.services`, `users.services`, `sites.services`): an operation takes the
request as its unit of work (`request.dbsession`, the transaction
`request.tm` for after-commit work, `request.registry` for settings and
extensions; the caller is `request.identity`) and data already validated by
the colander schemas, returns domain objects (rows), and refuses with the
domain errors of `ehs_core.errors` (`Invalid`, `Conflict` …), never an HTTP
exception or a response. Rendering (JSON, HTML) is the caller's business.
Each operation publishes its typed event (`ehs_core.events`); the audit trail
and mail are listeners on those events.
"""

from __future__ import annotations

import logging
from typing import Any

from pyramid.request import Request
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session, make_transient_to_detached

from ehs_core import audit
from ehs_core.db import mark_written, utcnow
from ehs_core.errors import Conflict, Invalid, Unprocessable
from ehs_core.events import IncidentCreated, IncidentUpdated, actor, publish
from ehs_core.incidents.models import Incident
from ehs_core.incidents.numbering import give_number
from ehs_core.sites.services import area_entry, site_entry

log = logging.getLogger(__name__)

# JSON field -> column, for the fields a report is created and updated with.
FIELDS = {
    "title": "title", "type": "type", "severity": "severity", "siteId": "site_id",
    "areaId": "area_id", "locationDetail": "location_detail", "description": "description",
    "immediateAction": "immediate_action",
}


def check_location(request: Request, site_id: int, area_id: int | None, new: bool) -> None:
    """The site exists (and, for a new report, is not archived) and the area
    belongs to it; raises Invalid naming the field. Read from the sites each
    worker keeps for a signed-in caller (`site_entry`: no statement)."""
    site = site_entry(request, site_id)
    if site is None:
        raise Invalid("siteId", "Unknown site")
    if new and site["archived"]:
        raise Invalid("siteId", "This site is archived; it takes no new reports")
    if area_id is not None:
        area = area_entry(request, area_id)
        if area is None or area["siteId"] != site_id:
            raise Invalid("areaId", "The area must belong to the incident's site")
        if new and area["archived"]:
            raise Invalid("areaId", "This area is archived; it takes no new reports")


def offset_minutes(moment: Any) -> int:
    """The UTC offset a moment was reported with, in minutes."""
    return int(moment.utcoffset().total_seconds() // 60)


def set_occurred_at(incident: Incident, moment: Any) -> None:
    incident.occurred_at = moment
    incident.occurred_offset_minutes = offset_minutes(moment)


# Built once per dialect (building a statement and its cache key for every
# report cost as much as running it): INSERT … ON CONFLICT (organization_id,
# client_id) DO NOTHING RETURNING id.
STORE_REPORT = {
    name: insert(Incident.__table__).on_conflict_do_nothing(index_elements=["organization_id", "client_id"])
    .returning(Incident.__table__.c.id)
    for name, insert in (("postgresql", postgresql_insert), ("sqlite", sqlite_insert))
}


def store_report(dbsession: Session, values: dict[str, Any]) -> Incident | None:
    """Insert a report (`values` names every column but the id) and return it
    as a persistent object of the session, or None when the organization
    already holds a report under its clientId. One Core statement, `INSERT …
    ON CONFLICT DO NOTHING RETURNING id` (PostgreSQL and SQLite): a
    duplicate clientId is answered by the database in the same statement,
    with no savepoint around an ORM insert to roll back to (the once-only
    filing of a retried report, interface spec). The object is made from
    the values it was stored with, as the ORM's insert made it."""
    dbsession.flush()
    row_id = dbsession.connection().execute(STORE_REPORT[dbsession.get_bind().dialect.name],
                                            values).scalar()
    if row_id is None:
        return None
    mark_written(dbsession)
    incident = Incident(id=row_id, **values)
    make_transient_to_detached(incident)
    dbsession.add(incident)
    return incident


def find_by_client_id(dbsession: Session, organization_id: int, client_id: str | None) -> Incident | None:
    """The report the organization already holds under this clientId, if any."""
    if not client_id:
        return None
    return dbsession.execute(select(Incident).where(
        Incident.organization_id == organization_id, Incident.client_id == client_id)).scalar()


def user_filer(anonymous: bool, user_id: int | None) -> str:
    """The identity a user's report is filed under, for clientId replays: an
    anonymous report names no user (spec: not linked to any reporter)."""
    return "user" if anonymous or user_id is None else f"user:{user_id}"


def file_incident(request: Request, data: dict[str, Any], organization_id: int,
                  reporter_id: int | None, filer: str | None = None) -> tuple[Incident, bool]:
    """Store and number a report; returns (incident, created). A
    report with a used clientId gives back the stored one (even if its site
    was archived since); answer it only after `check_replay` with the
    caller's own `filer` (default: the user's, see `user_filer`; a kiosk
    link passes its own). The report takes its number here, inside the
    transaction that files it (`numbering`). `reporter_id` is None
    for a kiosk link; an anonymous report records no reporter whoever sends
    it."""
    dbsession = request.dbsession
    try:
        check_location(request, data["siteId"], data.get("areaId"), new=True)
    except Invalid:
        existing = find_by_client_id(dbsession, organization_id, data.get("clientId"))
        if existing is not None:
            return existing, False  # a retry, answered even if the site was archived since
        raise
    client_id = data.get("clientId")
    now = utcnow()
    values = {attr: data.get(key) for key, attr in FIELDS.items()} | {
        "organization_id": organization_id, "status": "reported", "number": None,
        "anonymous": data["anonymous"], "client_id": client_id,
        "client_filer": (filer or user_filer(data["anonymous"], reporter_id)) if client_id else None,
        "reporter_id": None if data["anonymous"] else reporter_id,
        "occurred_at": data["occurredAt"], "occurred_offset_minutes": offset_minutes(data["occurredAt"]),
        "created_at": now, "updated_at": now, "closed_at": None,
    }
    incident = store_report(dbsession, values)
    if incident is None:
        # The unique (organization, clientId) constraint recognised a retry,
        # also between two concurrent requests with one clientId: PostgreSQL
        # holds the second insert until the first commits, then skips it.
        existing = find_by_client_id(dbsession, organization_id, client_id)
        if existing is None:
            raise RuntimeError("a report was not stored and no report holds its clientId")
        return existing, False
    # Numbered here, in the filing transaction, before anything names it:
    # the event's listeners (audit, notices, tallies) and the answer see the
    # number (see `numbering`).
    number_incident(request, incident)
    created = audit.diff({}, {key: data.get(key) for key in (*FIELDS, "occurredAt", "anonymous")})
    # An anonymous report records no actor, here or anywhere: the event
    # carries the reporter (None) as the actor to the audit listener.
    publish(request, IncidentCreated(request, incident=incident, changes=created,
                                     actor_id=incident.reporter_id))
    return incident, True


def number_incident(request: Request, incident: Incident) -> None:
    """Give a filed report its number, locking the organization's counter
    until commit; a report that has one keeps it (a caller that numbers
    again after `file_incident` changes nothing)."""
    if incident.number is not None:
        return
    give_number(request.dbsession, incident)
    log.info("incident %s filed", incident.reference)


def replay_allowed(incident: Incident, data: dict[str, Any]) -> bool:
    """A retry repeats the report exactly; a different report under a used
    clientId is a client bug, not a retry (Stripe, IETF idempotency draft)."""
    return (all(getattr(incident, attr) == data.get(key) for key, attr in FIELDS.items())
            and incident.occurred_at == data["occurredAt"] and incident.anonymous == data["anonymous"])


def filed_by(incident: Incident, filer: str) -> bool:
    """Whether `filer` (see `user_filer`) filed this report under its clientId."""
    return incident.client_filer is not None and incident.client_filer == filer


def check_replay(incident: Incident, data: dict[str, Any], filed_by_sender: bool) -> None:
    """A stored report comes back to a retry only for the identity that
    filed it (anyone else learns nothing beyond "used": Conflict) and only
    for the same report (else Unprocessable)."""
    if not filed_by_sender:
        raise Conflict("This clientId was already used")
    if not replay_allowed(incident, data):
        raise Unprocessable("This clientId was already used for a different report")


def update_incident(request: Request, incident: Incident, data: dict[str, Any]) -> dict[str, Any]:
    """Correct a report's fields; returns the changes ({field: {old, new}},
    empty when nothing changed). Moving to another site clears the area
    unless a new one is given."""
    site_id = data.get("siteId", incident.site_id)
    if "siteId" in data and site_id != incident.site_id and "areaId" not in data:
        data["areaId"] = None
    area_id = data.get("areaId", incident.area_id)
    if "siteId" in data or "areaId" in data:
        check_location(request, site_id, area_id, new=False)
    before = {key: getattr(incident, attr) for key, attr in FIELDS.items()}
    before["occurredAt"] = incident.occurred_at
    for key, attr in FIELDS.items():
        if key in data:
            setattr(incident, attr, data[key])
    after = {key: data[key] for key in data}
    if "occurredAt" in data:
        set_occurred_at(incident, data["occurredAt"])
        after["occurredAt"] = data["occurredAt"]
    changes = audit.diff(before, after)
    if "occurredAt" in changes and data["occurredAt"] == before["occurredAt"]:
        del changes["occurredAt"]  # same instant, only written differently
    if changes:
        incident.updated_at = utcnow()
        publish(request, IncidentUpdated(request, incident=incident, changes=changes,
                                         actor_id=actor(request)))
    return changes


def check_user_replay(request: Request, incident: Incident, data: dict[str, Any]) -> None:
    """A signed-in user's retry: the stored report comes back only if this
    user (or, for an anonymous report, a user) filed it under the clientId."""
    check_replay(incident, data, filed_by(incident, user_filer(data["anonymous"], request.identity.user_id)))


def file_report(request: Request, data: dict[str, Any]) -> tuple[Incident, bool]:
    """A signed-in user's report from a page: filed and numbered at once, or
    — for a retry of the same clientId — the stored report (see
    `check_user_replay`). Returns (incident, created)."""
    user = request.identity.account  # the identity row's columns: no ORM User to build
    incident, created = file_incident(request, data, user.organization_id, user.id)
    if not created:
        check_user_replay(request, incident, data)
    return incident, created
