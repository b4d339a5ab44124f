"""Notice of serious reports: a high or critical incident is mailed to every
active safety manager and admin, and to the supervisors of its site
(queued in the filing transaction, sent by the job runners, like all mail).
The mail names the report's number, taken when the report is filed
(`filing.file_incident`), in the same transaction."""

from __future__ import annotations

from pyramid.events import subscriber
from pyramid.i18n import Localizer
from pyramid.request import Request
from sqlalchemy import and_, or_, select

from ehs_core.events import IncidentCreated
from ehs_core.incidents.models import Incident, Severity
from ehs_core.mail import Localized, label_word, send_mail, translate
from ehs_core.mail.choices import wants
from ehs_core.security import Role
from ehs_core.sites.services import site_entry
from ehs_core.ui.rendering import when
from ehs_core.users.models import User, UserSite

NOTIFY_SEVERITIES = (Severity.high, Severity.critical)


@subscriber(IncidentCreated)
def notify_serious_incident(event: IncidentCreated) -> None:
    if event.incident.severity in NOTIFY_SEVERITIES:
        send_serious_notice(event.request, event.incident)


def lower_word(value: str) -> Localized:
    """An enumeration value's words in lower case, in the mail's language."""
    return Localized(lambda localizer: localizer.translate(label_word(value)).lower())


def send_serious_notice(request: Request, incident: Incident, raised_from: Severity | None = None) -> None:
    """The notice of a serious report, filed so or raised to it later
    (`raised_from`: the severity it had)."""
    # The spec's safety managers and admins, and the supervisors an admin
    # gave this site who still want it (a supervisor with no sites chosen is
    # not told of every site's reports).
    of_site = select(UserSite.user_id).where(UserSite.site_id == incident.site_id)
    people = request.dbsession.execute(select(User).where(
        User.active.is_(True),
        or_(User.role.in_((Role.safety_manager, Role.admin)),
            and_(User.role == Role.supervisor, User.id.in_(of_site))))
        .order_by(User.id)).scalars()
    recipients = [user.email for user in people
                  if user.role != Role.supervisor or wants(user, "site_serious")]
    site = site_entry(request, incident.site_id)
    severity = incident.severity

    def how(localizer: Localizer) -> str:
        if not raised_from:
            return localizer.translate(translate("was reported"))
        return localizer.translate(translate("was raised to ${severity} (filed as ${filed})", mapping={
            "severity": localizer.translate(label_word(severity)).lower(),
            "filed": localizer.translate(label_word(raised_from)).lower()}))
    occurred_at, zone = incident.occurred_at, site["timezone"] if site else None
    # One message for all of them, rendered once, queued in the transaction
    # that files (or raises) the report: it goes if and only if that commits.
    send_mail(request, recipients, "incident_reported", reference=incident.reference,
              number=incident.number, title=incident.title, severity=lower_word(incident.severity),
              type=lower_word(incident.type), site=site["name"] if site else "",
              how=Localized(how),
              occurred=Localized(lambda localizer: when(occurred_at, zone, registry=request.registry)))
