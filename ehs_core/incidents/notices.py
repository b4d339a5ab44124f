"""Notice of serious reports: a high or critical incident is mailed to every
active safety manager and admin, and to the supervisors of its site (after
commit, like all mail). The mail
names the report's number, taken last before commit
(`filing.number_last`): it is written once the report is committed."""

from __future__ import annotations

from pyramid.events import subscriber
from sqlalchemy import and_, or_, select

from ehs_core.events import IncidentCreated, after_commit
from ehs_core.incidents.models import Severity
from ehs_core.mail import send_mail
from ehs_core.security import Role
from ehs_core.sites.services import site_entry
from ehs_core.ui.rendering import when
from ehs_core.users.models import User, UserSite

NOTIFY_SEVERITIES = (Severity.high, Severity.critical)


@subscriber(IncidentCreated)
def notify_serious_incident(event: IncidentCreated) -> None:
    incident = event.incident
    if incident.severity not in NOTIFY_SEVERITIES:
        return
    request = event.request
    # The spec's safety managers and admins, and the supervisors an admin
    # gave this site (a supervisor with no sites chosen is not told of every
    # site's reports).
    of_site = select(UserSite.user_id).where(UserSite.site_id == incident.site_id)
    recipients = request.dbsession.execute(select(User.email).where(
        User.active.is_(True),
        or_(User.role.in_((Role.safety_manager, Role.admin)),
            and_(User.role == Role.supervisor, User.id.in_(of_site))))
        .order_by(User.id)).scalars()
    site = site_entry(request, incident.site_id)
    recipients = list(recipients)

    def send() -> None:
        # One message for all of them, rendered once.
        send_mail(request, recipients, "incident_reported", reference=incident.reference,
                  number=incident.number, title=incident.title, severity=incident.severity,
                  type=incident.type.replace("_", " "), site=site["name"] if site else "",
                  occurred=when(incident.occurred_at, site["timezone"] if site else None,
                                registry=request.registry))

    after_commit(request, send)
