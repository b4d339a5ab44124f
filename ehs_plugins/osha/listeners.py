"""What follows from a case change: the notice that a direct report to OSHA
is owed (29 CFR 1904.39), sent once per case."""

from __future__ import annotations

from pyramid.events import subscriber
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.mail import send_mail
from ehs_core.security import Role
from ehs_core.users.models import User
from ehs_plugins.osha.cases import case_number, severe_report
from ehs_plugins.osha.events import CaseChanged


@subscriber(CaseChanged)
def notify_if_newly_severe(event: CaseChanged) -> None:
    """Tell safety managers and admins once that a direct report is owed."""
    if event.change == "deleted":
        return
    request, case, incident = event.request, event.case, event.incident
    report = severe_report(case, incident)
    if report is None or case.severe_notice_sent_at is not None:
        return
    case.severe_notice_sent_at = utcnow()
    recipients = request.dbsession.execute(select(User.email).where(
        User.active.is_(True), User.role.in_((Role.safety_manager, Role.admin)))).scalars()
    for email in recipients:
        send_mail(request, email, "osha_severe_report", reference=case_number(incident, case),
                  number=incident.number, hours=report["withinHours"],
                  reasons=", ".join(report["reasons"]), due=report["dueBy"])
