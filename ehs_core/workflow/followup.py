"""Follow-up mail (issue #36 item 10): people hear of what happened to the
work they are part of, without watching the pages.

- The reporter, when their report is closed or reopened, with what was done
  (never an anonymous reporter: the report holds no one to tell).
- An investigation lead, when named (not when they name themselves).
- Whoever moves the incident on, when its last open action is done: its
  investigation lead and the supervisors of its site, or the safety
  managers when it has neither.
- A report raised to high or critical after filing gets the same notice as
  one filed so (`incidents.notices`).

Each kind is one a person may turn off (`ehs_core.mail.choices`)."""

from __future__ import annotations

from typing import Any

from pyramid.events import subscriber
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.actions.models import PENDING, CorrectiveAction
from ehs_core.events import ActionUpdated, IncidentTransitioned, IncidentUpdated, InvestigationUpdated
from ehs_core.incidents.models import Incident, Severity, Status
from ehs_core.incidents.notices import NOTIFY_SEVERITIES, send_serious_notice
from ehs_core.mail import Localized, label_word, send_mail, translate
from ehs_core.mail.choices import wants
from ehs_core.security import Role
from ehs_core.users.models import User, UserSite


def _action_lines(request: Request, incident: Incident) -> Localized:
    """The incident's actions and their statuses, in the mail's language."""
    actions = request.dbsession.execute(select(CorrectiveAction.title, CorrectiveAction.status).where(
        CorrectiveAction.incident_id == incident.id).order_by(CorrectiveAction.id)).all()

    def write(localizer: Any) -> str:
        if not actions:
            return localizer.translate(translate("No corrective action was needed."))
        return "\n".join(f"- {title} ({localizer.translate(label_word(status)).lower()})"
                         for title, status in actions)
    return Localized(write)


@subscriber(IncidentTransitioned)
def tell_the_reporter(event: IncidentTransitioned) -> None:
    incident, request = event.incident, event.request
    reopened = event.source == Status.closed
    if event.target != Status.closed and not reopened:
        return
    if incident.anonymous or incident.reporter_id is None or incident.reporter_id == event.actor_id:
        return
    reporter = request.dbsession.get(User, incident.reporter_id)
    if reporter is None or not wants(reporter, "report_followup"):
        return
    send_mail(request, reporter.email, "report_reopened" if reopened else "report_closed",
              name=reporter.name, reference=incident.reference, title=incident.title,
              number=incident.number, note=event.note or "", actions=_action_lines(request, incident))


@subscriber(InvestigationUpdated)
def tell_the_new_lead(event: InvestigationUpdated) -> None:
    change = event.changes.get("leadId")
    lead_id = change["new"] if change else None
    if lead_id is None or lead_id == event.actor_id:
        return
    request = event.request
    lead = request.dbsession.get(User, lead_id)
    incident = request.dbsession.get(Incident, event.incident_id)
    if lead is None or incident is None or not wants(lead, "lead_named"):
        return
    send_mail(request, lead.email, "lead_named", name=lead.name, reference=incident.reference,
              title=incident.title, number=incident.number)


def followers(request: Request, incident: Incident) -> list[User]:
    """Who moves the incident on: its lead and its site's supervisors, or
    the safety managers when it has neither."""
    of_site = select(UserSite.user_id).where(UserSite.site_id == incident.site_id)
    people = list(request.dbsession.execute(select(User).where(
        User.active.is_(True),
        (User.id == incident.investigation_lead_id)
        | ((User.role == Role.supervisor) & User.id.in_(of_site))).order_by(User.id)).scalars())
    if not people:
        people = list(request.dbsession.execute(select(User).where(
            User.active.is_(True), User.role == Role.safety_manager).order_by(User.id)).scalars())
    return people


@subscriber(ActionUpdated)
def tell_when_the_last_action_is_done(event: ActionUpdated) -> None:
    if "status" not in event.changes or event.action.status in PENDING:
        return
    incident, request = event.incident, event.request
    if incident.status != Status.actions:
        return
    request.dbsession.flush()
    still_open = request.dbsession.execute(select(CorrectiveAction.id).where(
        CorrectiveAction.incident_id == incident.id, CorrectiveAction.status.in_(PENDING)).limit(1)).first()
    if still_open is not None:
        return
    recipients = [u.email for u in followers(request, incident)
                  if u.id != event.actor_id and wants(u, "actions_done")]
    send_mail(request, recipients, "actions_done", reference=incident.reference, title=incident.title,
              number=incident.number, actions=_action_lines(request, incident))


@subscriber(IncidentUpdated)
def tell_of_a_raised_severity(event: IncidentUpdated) -> None:
    change: dict[str, Any] | None = event.changes.get("severity")
    if not change or change["new"] not in NOTIFY_SEVERITIES or change["old"] in NOTIFY_SEVERITIES:
        return
    send_serious_notice(event.request, event.incident, raised_from=Severity(change["old"]))
