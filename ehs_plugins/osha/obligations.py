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
marking it done in the queue records the copy as given at the desk."""

from __future__ import annotations

from pyramid.events import subscriber
from pyramid.request import Request

from ehs_core.obligations import services as obligations
from ehs_core.obligations.events import ObligationClosed
from ehs_core.obligations.models import ObligationStatus
from ehs_plugins.osha.cases import severe_deadline
from ehs_plugins.osha.events import CaseChanged
from ehs_plugins.osha.models import AccessRequest, InjuryCase
from ehs_plugins.osha.services import forget_read, zone_of

KIND = "osha.severe_report"
PREFIX = "osha_case:"
ACCESS_KIND = "osha.access_request"
ACCESS_PREFIX = "osha_access:"


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
