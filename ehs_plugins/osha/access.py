"""The right of access to the records, 29 CFR 1904.35(b)(2): a request desk.

- An employee, former employee or personal representative may ask for a
  copy of the 300 Log (`log_copy`: names left in but for privacy cases,
  1904.29(b)(6)-(9), 1904.35(b)(2)(iv)) or of the employee's own Form 301
  (`own_301`, (b)(2)(v)(A)), due by the end of the next business day.
- An authorized employee representative may ask for the Forms 301 of an
  establishment (`representative_301`, (b)(2)(v)(B)) and gets only the part
  "about the case" (items 10-18, with the employee's name taken out of its
  narratives), due within 7 calendar days.
- The first copy is free ((b)(2)(iv)); fulfilling a request records when and
  to whom the copy was given.

The due dates are pure functions (`deadlines`), on the establishment's clock.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.errors import Conflict, Invalid, NotFound
from ehs_core.incidents.models import Incident
from ehs_core.serialize import iso
from ehs_core.sites.models import Site
from ehs_core.sites.zones import site_zone
from ehs_plugins.osha import deadlines
from ehs_plugins.osha.models import AccessRequest, InjuryCase
from ehs_plugins.osha.obligations import fulfil_access_request, open_access_request
from ehs_plugins.osha.schemas import AccessKind

# What each kind gets, in the words of the request desk.
COPY_OF = {
    AccessKind.log_copy: "the 300 Log of the site and year (names but for privacy cases)",
    AccessKind.own_301: "the employee's own Form 301",
    AccessKind.representative_301: "the Forms 301's \"about the case\" part only (items 10-18)",
}


def due_by(kind: str, received: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """1904.35(b)(2): next business day's end, or 7 calendar days for a representative's 301s."""
    if kind == AccessKind.representative_301:
        return deadlines.seven_days_end(received, zone)
    return deadlines.next_business_day_end(received, zone)


def site_of(request: Request, site_id: int) -> Site:
    site = request.dbsession.get(Site, site_id)
    if site is None or site.organization_id != request.identity.account.organization_id:
        raise Invalid("siteId", "No such site")
    return site


def zone_of(request: Request, site: Site) -> dt.tzinfo:
    return site_zone(site.timezone, request.registry)


def case_of_site(request: Request, case_id: int, site: Site) -> tuple[InjuryCase, Incident]:
    """A case of the organization at this site."""
    case = request.dbsession.get(InjuryCase, case_id)
    incident = request.dbsession.get(Incident, case.incident_id) if case is not None else None
    if case is None or incident is None or incident.organization_id != site.organization_id:
        raise Invalid("caseId", "No such case")
    if incident.site_id != site.id:
        raise Invalid("caseId", "The case is of another site")
    return case, incident


def create(request: Request, data: dict[str, Any]) -> AccessRequest:
    """Take a request (validated `AccessRequestBody`) and set its clock."""
    kind = AccessKind(data["kind"])
    site = site_of(request, data["siteId"])
    case_id = data.get("caseId")
    if kind == AccessKind.own_301 and case_id is None:
        raise Invalid("caseId", "Which case: an employee's own Form 301 is of one case")
    if kind == AccessKind.log_copy and case_id is not None:
        raise Invalid("caseId", "A copy of the log is of the whole site and year, not of a case")
    if case_id is not None:
        case, _ = case_of_site(request, case_id, site)
        if not case.recordable:
            raise Invalid("caseId", "The case is not recordable: it has no Form 301 (1904.29(b)(2))")
    now = utcnow()
    row = AccessRequest(organization_id=site.organization_id, kind=kind.value,
                        requester_name=data["requesterName"], site_id=site.id, year=data["year"],
                        case_id=case_id, received_at=now, due_by=due_by(kind, now, zone_of(request, site)),
                        created_by=request.identity.user.id if request.identity.is_user else None)
    request.dbsession.add(row)
    request.dbsession.flush()
    open_access_request(request, row, COPY_OF[kind])
    return row


def load(request: Request, request_id: int) -> AccessRequest:
    row = request.dbsession.get(AccessRequest, request_id)
    if row is None or row.organization_id != request.identity.account.organization_id:
        raise NotFound()
    return row


def open_requests(request: Request) -> list[AccessRequest]:
    """The organization's requests not yet given, the soonest due first."""
    return list(request.dbsession.execute(select(AccessRequest).where(
        AccessRequest.organization_id == request.identity.account.organization_id,
        AccessRequest.fulfilled_at.is_(None)).order_by(AccessRequest.due_by, AccessRequest.id)).scalars())


def fulfil(request: Request, row: AccessRequest, given_to: str) -> AccessRequest:
    """Record that the copy was given, when and to whom (once)."""
    if row.fulfilled_at is not None:
        raise Conflict("This request was already fulfilled")
    row.fulfilled_at = utcnow()
    row.given_to = given_to
    row.fulfilled_by = request.identity.user.id if request.identity.is_user else None
    request.dbsession.flush()
    fulfil_access_request(request, row)
    return row


def request_json(request: Request, row: AccessRequest, now: dt.datetime | None = None) -> dict[str, Any]:
    """`{id, kind, requesterName, siteId, siteName, year, caseId, receivedAt,
    dueBy, overdue, secondsLeft, copyOf, copyUrl, pdfUrl, fulfilledAt, givenTo}`,
    times on the site's clock."""
    now = now or utcnow()
    site = request.dbsession.get(Site, row.site_id)
    zone = zone_of(request, site)
    open_ = row.fulfilled_at is None
    return {
        "id": row.id, "kind": row.kind, "requesterName": row.requester_name, "siteId": row.site_id,
        "siteName": site.name, "year": row.year, "caseId": row.case_id,
        "receivedAt": iso(row.received_at.astimezone(zone)), "dueBy": iso(row.due_by.astimezone(zone)),
        "overdue": open_ and row.due_by < now,
        "secondsLeft": int((row.due_by - now).total_seconds()) if open_ else None,
        "copyOf": COPY_OF[AccessKind(row.kind)],
        "copyUrl": request.route_path("page.osha_access_copy", id=row.id),
        "pdfUrl": request.route_path("page.osha_access_copy_pdf", id=row.id),
        "fulfilledAt": iso(row.fulfilled_at.astimezone(zone)) if row.fulfilled_at else None,
        "givenTo": row.given_to,
    }
