"""What follows a follow-up message: an entry in the incident's audit trail
(restricted to supervisors and above, who may read the thread), and, when
the reporter answers, mail to the people who follow the incident and the
team members who wrote in the thread, so the answer does not wait for
someone to open the page."""

from __future__ import annotations

from pyramid.events import subscriber
from pyramid.request import Request
from sqlalchemy import select

from ehs_core import audit
from ehs_core.followup.events import FollowUpMessageAdded
from ehs_core.followup.models import FROM_REPORTER, FollowUpMessage
from ehs_core.mail import send_mail
from ehs_core.mail.choices import wants
from ehs_core.security import Role, role_at_least
from ehs_core.users.models import User
from ehs_core.workflow.followup import followers

#: The audit trail's actions: the team wrote, the reporter answered.
ACTIONS = ("follow_up.to_reporter", "follow_up.from_reporter")
MAIL_KIND = "follow_up_answer"


def may_see(request: Request) -> bool:
    """The thread's entries on the timeline: for whoever may read the
    thread (supervisor and above)."""
    identity = request.identity
    return bool(identity and identity.is_user and role_at_least(identity.role, Role.supervisor))


@subscriber(FollowUpMessageAdded)
def record(event: FollowUpMessageAdded) -> None:
    """The trail says a message went, and who wrote it for the team; the
    reporter's entry names nobody. The words stay in the thread."""
    action = ACTIONS[1] if event.message.direction == FROM_REPORTER else ACTIONS[0]
    audit.record(event.request.dbsession, event.incident.id, action, {"messageId": event.message.id},
                 event.actor_id)


@subscriber(FollowUpMessageAdded)
def tell_the_team(event: FollowUpMessageAdded) -> None:
    if event.message.direction != FROM_REPORTER:
        return
    request, incident = event.request, event.incident
    writers = set(request.dbsession.execute(select(FollowUpMessage.author_id).distinct().where(
        FollowUpMessage.incident_id == incident.id, FollowUpMessage.author_id.is_not(None))).scalars())
    people = {user.id: user for user in followers(request, incident)}
    if writers:
        for user in request.dbsession.execute(select(User).where(User.id.in_(writers))).scalars():
            people.setdefault(user.id, user)
    recipients = [user.email for _, user in sorted(people.items())
                  if wants(user, MAIL_KIND) and role_at_least(user.role, Role.supervisor)]
    send_mail(request, recipients, "follow_up_answer", reference=incident.reference, title=incident.title,
              number=incident.number)
