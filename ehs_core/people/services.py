"""The people involved in an incident: injured persons, witnesses and
others, each with their part, whether they work here, how to reach them
and, for a witness, a dated statement in their own words (issue #39 item
4). Convention as in `incidents.filing`: the request is the unit of work,
data is validated by the schemas, refusals are domain errors. Each change
publishes PersonChanged; the audit trail is written from it.

Who sees what (the rule lives here, once):

- whoever may see the incident (`view_incident`) may name people involved
  (`record_people`): the reporter knows who was there;
- supervisors and above see every entry; anyone else (a reporter, an
  action's assignee) sees only the entries they wrote themselves
  (`may_see_person`): a witness named by the investigator is not the
  reporter's to read, nor is their statement. An entry the caller may not
  see answers 404, as a missing one;
- a statement's words and its photo's id are shown only to supervisors and
  above and to the entry's author (`may_see_statement`), and the audit
  entries of people (`person.*`) only to supervisors and above;
- an entry is changed by its author or a supervisor, and removed only by a
  supervisor or above (`remove_people`, 403 for a reporter: a witness once
  named stays in the record unless the investigator takes them out).
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any, NamedTuple

from pyramid.request import Request
from sqlalchemy import ColumnElement, select

from ehs_core import audit
from ehs_core.attachments.models import Attachment
from ehs_core.db import utcnow
from ehs_core.errors import Conflict, Invalid
from ehs_core.events import PersonChanged, actor, publish
from ehs_core.incidents.models import Incident
from ehs_core.people.models import IncidentPerson
from ehs_core.people.statements import (
    may_see_statement_by,
    sees_all_people,
    statement_by_column,
)
from ehs_core.rowsjson import DATE, INSTANT, columns_of, decoder, json_rows
from ehs_core.sites.services import site_timezone
from ehs_core.zones import site_zone

# JSON field -> column (the statement is flattened into its three columns).
FIELDS = {"name": "name", "involvement": "involvement", "employmentType": "employment_type",
          "role": "role", "contact": "contact"}
STATEMENT_FIELDS = {"text": "statement_text", "date": "statement_date",
                    "attachmentId": "statement_attachment_id"}


def may_see_person(request: Request, person: Any) -> bool:
    """An entry is seen by supervisors and above and by its author."""
    identity = request.identity
    if sees_all_people(identity):
        return True
    return bool(identity and identity.is_user and person.created_by_id == identity.user_id)


def may_see_statement(request: Request, person: Any) -> bool:
    """A statement is sensitive (a witness's own account, maybe naming who
    did what): its words are for supervisors and above and the one who
    wrote the entry down."""
    return may_see_person(request, person)


def list_people(request: Request, incident: Any) -> list[IncidentPerson]:
    """The people of the incident the caller may see, in the order they
    were named (injured first is the panel's business, not the record's)."""
    query = select(IncidentPerson).where(IncidentPerson.incident_id == incident.id)
    if not sees_all_people(request.identity):
        query = query.where(IncidentPerson.created_by_id == request.identity.user_id)
    return list(request.dbsession.execute(query.order_by(IncidentPerson.id)).scalars())


class PersonRow(NamedTuple):
    """An entry as the incident page reads it with the incident (its
    panel's column, `people_column`): the model's attribute names."""

    id: int
    incident_id: int
    name: str
    involvement: str
    employment_type: str | None
    role: str | None
    contact: str | None
    statement_text: str | None
    statement_date: dt.date | None
    statement_attachment_id: int | None
    created_by_id: int | None
    created_at: dt.datetime
    updated_at: dt.datetime


class FileRow(NamedTuple):
    id: int
    filename: str
    statement_by: int | None  # as `ehs_core.attachments.AttachmentRow`'s


_people = decoder(PersonRow, statement_date=DATE, created_at=INSTANT, updated_at=INSTANT)
_files = decoder(FileRow)


@functools.cache
def people_column() -> ColumnElement[Any]:
    """The incident's people as one JSON value, read with the incident page
    (the panel's `read`): the page sends no statement of its own for them."""
    return select(json_rows(*columns_of(PersonRow, IncidentPerson))).where(
        IncidentPerson.incident_id == Incident.id).scalar_subquery()


@functools.cache
def files_column() -> ColumnElement[Any]:
    """The incident's own files (not an action's evidence), offered as a
    statement's photo, read with the incident page."""
    return select(json_rows(Attachment.id, Attachment.filename, statement_by_column())).where(
        Attachment.incident_id == Incident.id, Attachment.action_id.is_(None)).scalar_subquery()


def people_read(request: Request, incident: Any, read: tuple[bool, Any]) -> list[Any]:
    """The people the caller may see: from the page's read (`read`: (True,
    the `people_column` value)) on a GET, else `list_people`."""
    found, value = read
    if not found or request.method != "GET":
        return list_people(request, incident)
    return [row for row in _people(value) if may_see_person(request, row)]


def files_read(request: Request, incident: Any, read: tuple[bool, Any]) -> list[Any]:
    """The incident's own files the caller may see, offered as a statement's
    photo: from the page's read on a GET (`files_column`), else read now."""
    found, value = read
    if found and request.method == "GET":
        rows = _files(value)
    else:
        rows = [FileRow(*row) for row in request.dbsession.execute(
            select(Attachment.id, Attachment.filename, statement_by_column()).where(
                Attachment.incident_id == incident.id, Attachment.action_id.is_(None))
            .order_by(Attachment.id)).all()]
    return [row for row in rows if may_see_statement_by(request, row.statement_by)]


def person_of(request: Request, incident: Any, person_id: int) -> IncidentPerson | None:
    """The incident's own person with this id if the caller may see it, else
    None: the operation plugins use (the OSHA plugin starts an injury case
    from an injured person)."""
    person = request.dbsession.get(IncidentPerson, person_id)
    if person is None or person.incident_id != incident.id or not may_see_person(request, person):
        return None
    return person


def today_at(request: Request, incident: Any) -> dt.date:
    """Today on the incident's site's clock: a statement's default date."""
    zone = site_zone(site_timezone(request, incident.site_id), request.registry)
    return dt.datetime.now(zone).date()


def _statement_columns(request: Request, incident: Any, person: IncidentPerson | None,
                       statement: dict[str, Any] | None) -> dict[str, Any]:
    """The statement's three columns from the body's `statement`: None
    clears them; a statement needs words or a photo; the photo must be one
    of this incident's files; the date defaults to the one it had, else
    today in the site's zone."""
    if statement is None:
        return {column: None for column in STATEMENT_FIELDS.values()}
    words = statement.get("text")
    words = words if words and words.strip() else None
    attachment_id = statement.get("attachmentId")
    if attachment_id is not None:
        attachment = request.dbsession.get(Attachment, attachment_id)
        if attachment is None or attachment.incident_id != incident.id or attachment.action_id is not None:
            raise Invalid("statement.attachmentId", "Not a file of this incident: upload the photo of "
                                                    "the statement to the incident first")
    if words is None and attachment_id is None:
        raise Invalid("statement", "A statement needs its text, or the photo of the paper statement "
                                   "(attachmentId)")
    day = statement.get("date")
    if day is None:
        day = person.statement_date if person is not None and person.statement_date else \
            today_at(request, incident)
    return {"statement_text": words, "statement_date": day, "statement_attachment_id": attachment_id}


def _audited(person: IncidentPerson) -> dict[str, Any]:
    values = {key: getattr(person, column) for key, column in FIELDS.items()}
    values |= {f"statement.{key}": getattr(person, column) for key, column in STATEMENT_FIELDS.items()}
    return values


def check_open(incident: Any) -> None:
    """A closed incident's record of who was involved stays as it was closed
    (as its actions do, `actions.services.create_action`): reopen it first."""
    if incident.status == "closed":
        raise Conflict("The incident is closed: reopen it to change the people involved")


def add_person(request: Request, incident: Any, data: dict[str, Any]) -> IncidentPerson:
    """Name someone involved; the caller is the entry's author."""
    check_open(incident)
    now = utcnow()
    person = IncidentPerson(incident_id=incident.id, created_by_id=actor(request), created_at=now,
                            updated_at=now)
    for key, column in FIELDS.items():
        setattr(person, column, data.get(key))
    if data.get("statement") is not None:
        for column, value in _statement_columns(request, incident, None, data["statement"]).items():
            setattr(person, column, value)
    request.dbsession.add(person)
    request.dbsession.flush()
    changes = audit.diff({}, {k: v for k, v in _audited(person).items() if v is not None})
    publish(request, PersonChanged(request, incident_id=incident.id, person=person, change="created",
                                   changes=changes, actor_id=actor(request)))
    return person


def update_person(request: Request, incident: Any, person: IncidentPerson,
                  data: dict[str, Any]) -> IncidentPerson:
    """Change an entry; `statement` replaces the statement whole (null removes it)."""
    check_open(incident)
    before = _audited(person)
    for key, value in data.items():
        if key in FIELDS:
            setattr(person, FIELDS[key], value)
    if "statement" in data:
        for column, value in _statement_columns(request, incident, person, data["statement"]).items():
            setattr(person, column, value)
    changes = audit.diff(before, _audited(person))
    if changes:
        person.updated_at = utcnow()
        request.dbsession.flush()
        publish(request, PersonChanged(request, incident_id=person.incident_id, person=person,
                                       change="updated", changes=changes, actor_id=actor(request)))
    return person


def remove_person(request: Request, incident: Any, person: IncidentPerson) -> None:
    """Take an entry out (the audit trail keeps what it said); a listener
    may refuse (an injury case names the person)."""
    check_open(incident)
    changes = {key: {"old": audit.jsonable(value), "new": None} for key, value in _audited(person).items()
               if value is not None}
    publish(request, PersonChanged(request, incident_id=person.incident_id, person=person, change="deleted",
                                   changes=changes, actor_id=actor(request)))
    request.dbsession.delete(person)
    request.dbsession.flush()


def forget_attachment(request: Request, attachment: Attachment) -> None:
    """A removed file is no longer any statement's photo (SQLite does not
    enforce the foreign key's SET NULL)."""
    for person in request.dbsession.execute(select(IncidentPerson).where(
            IncidentPerson.statement_attachment_id == attachment.id)).scalars():
        person.statement_attachment_id = None


def incident_of(request: Request, person: IncidentPerson) -> Incident:
    return request.dbsession.get(Incident, person.incident_id)
