"""The direct report owed to OSHA (29 CFR 1904.39) in the core's queue of
what is owed to regulators: a case whose answers owe it opens an
obligation of the kind `osha.severe_report`, due when `severe_deadline`
says; the report's time entered on the case (`reportedToOshaAt`) closes it
as done, and marking it done in the queue enters that time on the case, so
the case's `severeReport` and the queue agree. Answers that no longer owe
it, or a deleted case, withdraw it (kept, as waived).

An employee's request for a copy of the records (1904.35(b)(2), the access
desk) is an obligation of the kind `osha.access_request`, due at the
request's `dueBy`: giving the copy at the desk closes it as done, and
marking it done in the queue records the copy as given at the desk.

The electronic submission of a year's records (1904.41(c), due March 2 of
the next year) is an obligation of the kind `osha.ita_filing` per site and
year: a daily job (`keep_ita_filings`) opens it, from January 1 on, for
each active site whose coverage (`coverage.requirement`) requires a filing
for last year, closes it as done once a real (not dry-run) filing of that
site-year was accepted by OSHA, and withdraws it (waived, with coverage's
reason) when the site no longer must file."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pyramid.events import subscriber
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.obligations import services as obligations
from ehs_core.obligations.events import ObligationClosed
from ehs_core.obligations.models import ObligationStatus
from ehs_core.sites.zones import site_zone
from ehs_plugins.osha.cases import severe_deadline
from ehs_plugins.osha.coverage import requirement
from ehs_plugins.osha.deadlines import ita_due_at
from ehs_plugins.osha.events import CaseChanged
from ehs_plugins.osha.log import active_sites, load_months
from ehs_plugins.osha.models import AccessRequest, InjuryCase, ItaSubmission
from ehs_plugins.osha.services import forget_read, zone_of

KIND = "osha.severe_report"
PREFIX = "osha_case:"
ACCESS_KIND = "osha.access_request"
ACCESS_PREFIX = "osha_access:"
ITA_KIND = "osha.ita_filing"
ITA_JOB = "osha.ita_filing_obligations"


@subscriber(CaseChanged)
def keep_the_obligation(event: CaseChanged) -> None:
    request, case, incident = event.request, event.case, event.incident
    subject = f"{PREFIX}{case.id}"
    if event.change != "deleted" and case.reported_to_osha_at is not None:
        obligations.fulfil(request, KIND, subject, incident.organization_id, case.reported_to_osha_at,
                           "Reported to OSHA (entered on the case)")
        return
    deadline = None
    if event.change != "deleted":
        deadline = severe_deadline(case, incident, zone_of(request, incident))
    if deadline is not None:
        obligations.open_obligation(request, KIND, subject=subject, incident=incident, due_at=deadline.due,
                                    title=f"OSHA report within {deadline.hours} hours (1904.39): "
                                          f"{', '.join(deadline.reasons)}")
    else:
        obligations.withdraw(request, KIND, subject, incident.organization_id,
                             "The case no longer owes OSHA a direct report (its answers changed or it was "
                             "removed).")


@subscriber(ObligationClosed)
def enter_the_report(event: ObligationClosed) -> None:
    """Done in the queue: the case says when it was reported."""
    obligation = event.obligation
    if obligation.kind != KIND or obligation.status != ObligationStatus.done:
        return
    case = event.request.dbsession.get(InjuryCase, int(obligation.subject.removeprefix(PREFIX)))
    if case is not None and case.reported_to_osha_at is None:
        case.reported_to_osha_at = obligation.done_at
        forget_read(event.request)


def access_subject(row: AccessRequest) -> str:
    return f"{ACCESS_PREFIX}{row.id}"


def open_access_request(request: Request, row: AccessRequest, copy_of: str) -> None:
    """A request taken at the desk: owed by its `dueBy` (1904.35(b)(2)(iv), (v))."""
    obligations.open_obligation(request, ACCESS_KIND, subject=access_subject(row),
                                organization_id=row.organization_id, site_id=row.site_id, due_at=row.due_by,
                                title=f"Copy of {copy_of} for {row.requester_name} (1904.35(b)(2))")


def fulfil_access_request(request: Request, row: AccessRequest) -> None:
    """The copy given at the desk: the obligation is done then."""
    obligations.fulfil(request, ACCESS_KIND, access_subject(row), row.organization_id, row.fulfilled_at,
                       f"Copy given to {row.given_to}")


@subscriber(ObligationClosed)
def record_the_copy(event: ObligationClosed) -> None:
    """Done in the queue: the desk says the copy was given, then, to whom
    the note names (or the requester)."""
    obligation = event.obligation
    if obligation.kind != ACCESS_KIND or obligation.status != ObligationStatus.done:
        return
    row = event.request.dbsession.get(AccessRequest, int(obligation.subject.removeprefix(ACCESS_PREFIX)))
    if row is not None and row.fulfilled_at is None:
        row.fulfilled_at = obligation.done_at
        row.given_to = (obligation.note or row.requester_name)[:200]
        row.fulfilled_by = obligation.done_by_id


@dataclass
class JobContext:
    """What the obligations' service reads of a request (its session and
    registry; nobody signed in), for the daily job and the filing job."""

    dbsession: Any
    registry: Registry
    identity: Any = None


def ita_subject(site_id: int, year: int) -> str:
    return f"osha_ita:{site_id}:{year}"


def fulfil_ita_filing(context: Any, submission: ItaSubmission) -> None:
    """A real filing of the site-year accepted by OSHA: done then."""
    if submission.dry_run or submission.status != "accepted":
        return
    obligations.fulfil(context, ITA_KIND, ita_subject(submission.site_id, submission.year),
                       submission.organization_id, submission.finished_at or submission.created_at,
                       f"Filed with OSHA's ITA, confirmation {submission.confirmation or '-'}")


def keep_ita_filings(registry: Registry, now: dt.datetime | None = None) -> int:
    """The daily job: for each active site, the filing of last year's
    records (the year before the site's own date today) is opened when its
    coverage requires one (due at the end of March 2 on its clock), done
    when an accepted real filing exists, withdrawn when no longer required.
    Idempotent per site and year (one obligation per kind and subject).
    Returns how many are open for last year after the run."""
    now = now or utcnow()
    open_count = 0
    with registry["dbsession_factory"]() as dbsession, dbsession.begin():
        context = JobContext(dbsession, registry)
        sites = active_sites(dbsession)
        by_year: dict[int, list[Any]] = {}
        for site in sites:
            year = now.astimezone(site_zone(site.timezone, registry)).year - 1
            by_year.setdefault(year, []).append(site)
        for year, of_year in by_year.items():
            for item in load_months(dbsession, registry, of_year, year):
                site = item.site
                subject = ita_subject(site.id, year)
                needed = requirement(site.naics_code, item.peak_employees, year)
                if not needed.requires:
                    obligations.withdraw(context, ITA_KIND, subject, site.organization_id,
                                         f"No electronic submission of {year} is required: {needed.reason}")
                    continue
                owed = obligations.open_obligation(
                    context, ITA_KIND, subject=subject, organization_id=site.organization_id, site_id=site.id,
                    due_at=ita_due_at(year, item.zone),
                    title=f"Electronic submission of {year} ({', '.join(needed.requires)}) for {site.name} "
                          "to OSHA's ITA (1904.41)")
                accepted = dbsession.execute(select(ItaSubmission).where(
                    ItaSubmission.site_id == site.id, ItaSubmission.year == year,
                    ItaSubmission.dry_run.is_(False), ItaSubmission.status == "accepted")
                    .order_by(ItaSubmission.id).limit(1)).scalar()
                if accepted is not None:
                    fulfil_ita_filing(context, accepted)
                elif owed.status == ObligationStatus.open:
                    open_count += 1
    return open_count
