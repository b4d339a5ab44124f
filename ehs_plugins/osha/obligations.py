"""The direct report owed to OSHA (29 CFR 1904.39) in the core's queue of
what is owed to regulators: a case whose answers owe it opens an
obligation of the kind `osha.severe_report`, due when `severe_deadline`
says; the report's time entered on the case (`reportedToOshaAt`) closes it
as done, and marking it done in the queue enters that time on the case, so
the case's `severeReport` and the queue agree. Answers that no longer owe
it, or a deleted case, withdraw it (kept, as waived)."""

from __future__ import annotations

from pyramid.events import subscriber

from ehs_core.obligations import services as obligations
from ehs_core.obligations.events import ObligationClosed
from ehs_core.obligations.models import ObligationStatus
from ehs_plugins.osha.cases import severe_deadline
from ehs_plugins.osha.events import CaseChanged
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.services import forget_read, zone_of

KIND = "osha.severe_report"
PREFIX = "osha_case:"


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
