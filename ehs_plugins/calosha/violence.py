"""The violent incident log of California Labor Code §6401.9(d) (SB 553, in
force since 1 July 2024): every workplace violence incident, injury or not,
recorded by a supervisor on the incident, and the log given to employees
(§6401.9(f)(3): on request, within 15 calendar days) with no information
that identifies any person involved (§6401.9(d)(1)).

Every free-text field of the log goes through `ehs_core.deidentify`: the
names the supervisor gave as the people involved, every name of the
organization's people, a title and the name after it ("Mr. Okafor"),
e-mail addresses, phone, social security, employee or badge numbers and
street addresses are replaced. The person completing the entry is named
with their title, as the log must say who completed it.

Entries are kept: no route deletes one, and the log reads five years back
by default (§6401.9(f)(2): records kept for five years).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.audit import record
from ehs_core.db import utcnow
from ehs_core.deidentify import deidentify
from ehs_core.errors import Conflict
from ehs_core.incidents.models import Incident, reference
from ehs_core.sites.models import Area, Site
from ehs_core.sites.zones import site_zone
from ehs_core.users.models import User
from ehs_plugins.calosha.models import ViolentIncident
from ehs_plugins.calosha.serious import in_california

AUDIT_ACTION = "calosha.violence_entry"
KEPT_YEARS = 5

# §6401.9(a)(5)'s four types of workplace violence.
TYPES = {
    1: "Type 1: by a person with no legitimate business at the worksite",
    2: "Type 2: by a customer, client, patient, student, inmate or visitor",
    3: "Type 3: by a present or former employee, supervisor or manager",
    4: "Type 4: by a person with a personal relationship with an employee",
}
FIELDS = {  # JSON name -> column
    "violenceType": "violence_type", "incidentKinds": "kinds", "perpetratorRelation": "perpetrator_relation",
    "description": "description", "circumstances": "circumstances", "where": "where",
    "consequences": "consequences", "securityCalled": "security_called", "policeCalled": "police_called",
    "actionsTaken": "actions_taken", "peopleInvolved": "people", "completedByTitle": "completed_by_title",
}
FREE_TEXT = ("perpetratorRelation", "description", "circumstances", "where", "consequences", "actionsTaken")


def entry_of(request: Request, incident_id: int) -> ViolentIncident | None:
    return request.dbsession.execute(
        select(ViolentIncident).where(ViolentIncident.incident_id == incident_id)).scalar()


def save_entry(request: Request, incident: Incident, data: dict[str, Any]) -> ViolentIncident:
    """Record or correct the incident's log entry; the caller completes it
    (their name, the title they give, today on the site's clock)."""
    if not in_california(request, incident.site_id):
        raise Conflict("The violent incident log is kept for sites in California: this incident's site "
                       "does not have CA as its state.")
    zone = site_zone(request.dbsession.get(Site, incident.site_id).timezone, request.registry)
    entry = entry_of(request, incident.id)
    before = entry_json(entry) if entry is not None else {}
    if entry is None:
        entry = ViolentIncident(incident_id=incident.id, created_at=utcnow())
        request.dbsession.add(entry)
    for name, column in FIELDS.items():
        value = data[name]
        setattr(entry, column, list(value) if isinstance(value, list | tuple) else value)
    entry.completed_by_id = request.identity.user_id
    entry.completed_on = dt.datetime.now(zone).date()
    entry.updated_at = utcnow()
    request.dbsession.flush()
    after = entry_json(entry)
    changes = {key: {"old": before.get(key), "new": value} for key, value in after.items()
               if before.get(key) != value and key not in ("completedOn",)}
    record(request.dbsession, incident.id, AUDIT_ACTION, changes, request.identity.user_id)
    return entry


def entry_json(entry: ViolentIncident) -> dict[str, Any]:
    """The entry as supervisors enter it (the incident's section): the
    names of the people involved included, for the employer's own file."""
    body = {name: getattr(entry, column) for name, column in FIELDS.items()}
    body["violenceTypeLabel"] = TYPES[entry.violence_type]
    body["completedById"] = entry.completed_by_id
    body["completedOn"] = entry.completed_on.isoformat() if entry.completed_on else None
    return body


def log_entries(request: Request, site_id: int | None, start: dt.date | None,
                end: dt.date | None) -> list[dict[str, Any]]:
    """The log (§6401.9(d)(1)) of the caller's organization: one item per
    entry, oldest first, dates and times on the site's clock, free text
    without anything that identifies a person. `start` and `end` are dates
    on each site's clock; by default the five years the log is kept."""
    organization = request.identity.account.organization_id
    stmt = (select(ViolentIncident, Incident, Site, Area.name, User.name)
            .join(Incident, Incident.id == ViolentIncident.incident_id)
            .join(Site, Site.id == Incident.site_id)
            .outerjoin(Area, Area.id == Incident.area_id)
            .outerjoin(User, User.id == ViolentIncident.completed_by_id)
            .where(Incident.organization_id == organization))
    if site_id is not None:
        stmt = stmt.where(Incident.site_id == site_id)
    if start is None and end is None:
        start = dt.date.today().replace(year=dt.date.today().year - KEPT_YEARS)
    # A day's margin each side; each entry's own date is then read on its site's clock.
    if start is not None:
        stmt = stmt.where(Incident.occurred_at >= dt.datetime.combine(start, dt.time(), dt.UTC)
                          - dt.timedelta(days=1))
    if end is not None:
        stmt = stmt.where(Incident.occurred_at < dt.datetime.combine(end, dt.time(), dt.UTC)
                          + dt.timedelta(days=2))
    rows = request.dbsession.execute(stmt.order_by(Incident.occurred_at, ViolentIncident.id)).all()
    people = request.dbsession.execute(
        select(User.name).where(User.organization_id == organization)).scalars().all()
    items = []
    for entry, incident, site, area, completer in rows:
        local = incident.occurred_at.astimezone(site_zone(site.timezone, request.registry))
        if (start is not None and local.date() < start) or (end is not None and local.date() > end):
            continue
        names = [*entry.people, *people]

        def clean(text: str | None, names: list[str] = names) -> str | None:
            return deidentify(text, names)

        items.append({
            "entryId": entry.id, "incidentNumber": incident.number, "reference": reference(incident.number),
            "date": local.date().isoformat(), "time": local.strftime("%H:%M"),
            "siteId": site.id, "siteName": site.name, "area": area,
            "where": clean(entry.where),
            "violenceType": entry.violence_type, "violenceTypeLabel": TYPES[entry.violence_type],
            "incidentKinds": list(entry.kinds),
            "perpetratorRelation": clean(entry.perpetrator_relation),
            "description": clean(entry.description),
            "circumstances": clean(entry.circumstances),
            "consequences": clean(entry.consequences),
            "securityCalled": entry.security_called, "policeCalled": entry.police_called,
            "actionsTaken": clean(entry.actions_taken),
            "completedBy": {"name": completer, "title": entry.completed_by_title},
            "completedOn": entry.completed_on.isoformat(),
        })
    return items


CSV_HEADER = ("entry", "incident", "date", "time", "site", "area", "where", "violence_type",
              "violence_type_label", "incident_kinds", "perpetrator_relation", "description", "circumstances",
              "consequences", "security_called", "police_called", "actions_taken", "completed_by",
              "completed_by_title", "completed_on")
# A cell starting with one of these is run as a formula by spreadsheets (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def log_csv(items: list[dict[str, Any]]) -> str:
    """The log as CSV (RFC 4180), the same fields as the API's items."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for item in items:
        writer.writerow([_cell(value) for value in (
            item["entryId"], item["reference"], item["date"], item["time"], item["siteName"], item["area"],
            item["where"], item["violenceType"], item["violenceTypeLabel"], "; ".join(item["incidentKinds"]),
            item["perpetratorRelation"], item["description"], item["circumstances"], item["consequences"],
            item["securityCalled"], item["policeCalled"], item["actionsTaken"], item["completedBy"]["name"],
            item["completedBy"]["title"], item["completedOn"])])
    return buffer.getvalue()
