"""What auth does when users change: it listens to the users' events rather
than being called by them. An invited user gets a link to set a password;
deactivating a user or setting their password ends their sessions and
voids their emailed links (ASVS 5 7.4.3: sessions end when the account is
disabled or its password changes)."""

from __future__ import annotations

from pyramid.events import subscriber
from pyramid.request import Request

from ehs_core.auth.sessions import end_user_sessions
from ehs_core.auth.tokens import TokenPurpose, issue_token, retire_tokens
from ehs_core.events import UserCreated, UserUpdated
from ehs_core.mail import send_mail, translate
from ehs_core.users.models import Organization, User

# What each role may do, in a line, for the invitation.
ROLE_WORDS = {
    "reporter": translate("reporter (you can report incidents and follow your own and your actions)"),
    "supervisor": translate("supervisor (you triage and investigate incidents and assign actions)"),
    "safety_manager": translate(
        "safety manager (you also verify actions, close incidents and keep the injury records)"),
    "admin": translate("admin (you also manage people, sites and settings)"),
}


@subscriber(UserCreated)
def send_invitation(event: UserCreated) -> None:
    if event.invited:
        invite(event.request, event.user)


def invite(request: Request, user: User) -> None:
    """Mail an invitation link; it names the role the invitation grants.
    Sent again by an admin, it voids the earlier links first."""
    retire_tokens(request.dbsession, user.id)
    token = issue_token(request.dbsession, user.id, TokenPurpose.invitation)
    org = request.dbsession.get(Organization, user.organization_id)
    base = request.registry.settings["ehs.public_url"]
    send_mail(request, user.email, "invitation", name=user.name, organization=org.name,
              role=ROLE_WORDS.get(user.role, user.role), link=f"{base}/auth/reset?token={token}")


@subscriber(UserUpdated)
def end_sessions(event: UserUpdated) -> None:
    deactivated = "active" in event.changes and not event.user.active
    if deactivated or "password" in event.changes:
        end_user_sessions(event.request, event.user.id)
        # A password set by an admin or a deactivation also voids the user's
        # pending emailed links, as a self-service change does (ASVS 5 6.4.x):
        # a link mailed before must not sign a reactivated user in.
        retire_tokens(event.request.dbsession, event.user.id)
