"""What follows from a case change: the decision kept in the incident's
audit trail (trail.py), and the notice that a direct report to OSHA is owed
(29 CFR 1904.39), sent once per case."""

from __future__ import annotations

from pyramid.events import subscriber
from pyramid.i18n import TranslationStringFactory
from sqlalchemy import select

from ehs_core.errors import Conflict
from ehs_core.events import PersonChanged
from ehs_core.mail import Localized, send_mail
from ehs_core.security import Role
from ehs_core.users.models import User
from ehs_plugins.osha.cases import case_number, severe_deadline, wall_clock
from ehs_plugins.osha.events import CaseChanged
from ehs_plugins.osha.services import case_of_person, zone_of
from ehs_plugins.osha.trail import record_decision

# The mail's words, in the plugin's own domain.
translate = TranslationStringFactory("ehs_osha")


@subscriber(CaseChanged)
def keep_the_decision(event: CaseChanged) -> None:
    if event.change != "deleted":
        record_decision(event.request, event.case, event.incident, event.before, event.actor_id)


@subscriber(CaseChanged)
def notify_if_newly_severe(event: CaseChanged) -> None:
    """Tell safety managers and admins once that a direct report is owed,
    and whether its deadline had already passed (1904.39(a))."""
    if event.change == "deleted":
        return
    request, case, incident = event.request, event.case, event.incident
    zone = zone_of(request, incident)
    deadline = severe_deadline(case, incident, zone)
    if deadline is None or case.severe_notice_sent_at is not None:
        return
    case.severe_notice_sent_at = deadline.entered_at
    hours = {"hours": deadline.hours}
    late, status, entered = "", translate("due within ${hours} hours", mapping=hours), ""
    if deadline.past_due_when_entered:
        status = translate("overdue (due within ${hours} hours)", mapping=hours)
        entered = wall_clock(deadline.entered_at, zone)
        late = Localized(lambda localizer: localizer.translate(translate(
            "The deadline had already passed when this was entered (${entered}): report now,"
            " and note when and how the establishment learned of the event.", mapping={"entered": entered}))
            + "\n")
    recipients = request.dbsession.execute(select(User.email).where(
        User.active.is_(True), User.role.in_((Role.safety_manager, Role.admin)))).scalars()
    send_mail(request, recipients, "osha_severe_report", reference=case_number(incident, case),
              number=incident.number, status=status, reasons=", ".join(deadline.reasons),
              due=wall_clock(deadline.due, zone), late=late, hours=deadline.hours,
              past_due=deadline.past_due_when_entered, entered=entered)


@subscriber(PersonChanged)
def keep_the_case_person(event: PersonChanged) -> None:
    """A case started from an injured person keeps them: removing the
    person, or saying they were not injured, is refused while the case
    names them (remove the case first; the veto rolls the request back)."""
    if event.change == "created":
        return
    if event.change == "updated" and "involvement" not in event.changes:
        return
    if event.change == "updated" and event.person.involvement == "injured":
        return
    if case_of_person(event.request, event.person.id) is not None:
        raise Conflict(f"{event.person.name} has an injury case: remove the case first")
