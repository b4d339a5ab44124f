"""The sign-in operations, shared by the JSON API and the pages: setup of
the first admin, password sign-in under the attempt limit, emailed links
and password changes. Each raises `APIError` for a refusal; a refusal that
must still be recorded (a failed attempt counts towards the limit) is
raised as `Refusal`, which the caller answers without rolling back.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from typing import Any

from pyramid.request import Request
from sqlalchemy import exists, select

from ehs_core.auth import ratelimit
from ehs_core.auth.oidc import local_sign_in_allowed
from ehs_core.auth.passwords import passwords
from ehs_core.auth.sessions import end_user_sessions
from ehs_core.auth.tokens import TokenPurpose, consume_token, issue_token, retire_tokens
from ehs_core.db import advisory_lock
from ehs_core.errors import APIError
from ehs_core.events import OrganizationCreated, publish
from ehs_core.mail import send_mail
from ehs_core.security import Role
from ehs_core.users.models import Organization, User, normalize_email

log = logging.getLogger(__name__)

BAD_LINK = "This link is invalid, has expired or was already used"
# Where the emailed links lead (the pages that POST the token).
LINK_PATHS = {TokenPurpose.magic_link: "/auth/magic", TokenPurpose.password_reset: "/auth/reset"}
# Password and emailed-link sign-in switched off for non-admins (oidc.local_sign_in).
COMPANY_ONLY = "Sign in with your company account"
LINK_TEMPLATES = {TokenPurpose.magic_link: "magic_link", TokenPurpose.password_reset: "password_reset"}


class Refusal(Exception):
    """A refused attempt whose bookkeeping must be committed (answer it, do
    not let it roll the transaction back)."""

    def __init__(self, status: int, message: str, issues: list[dict[str, str]] | None = None,
                 retry_after: dt.timedelta | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.issues = status, message, issues
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        if self.retry_after is None:
            return {}
        return {"Retry-After": str(max(1, math.ceil(self.retry_after.total_seconds())))}


def organization(request: Request) -> Organization | None:
    return request.dbsession.execute(select(Organization).order_by(Organization.id)).scalar()


def needs_setup(request: Request) -> bool:
    return not request.dbsession.execute(select(exists().where(User.role == Role.admin))).scalar()


def complete_setup(request: Request, data: dict[str, Any]) -> User:
    """Create the organization and its first admin; 409 once an admin exists."""
    advisory_lock(request.dbsession, "setup")
    if not needs_setup(request):
        raise APIError(409, "Setup has already been completed")
    org = organization(request)
    if org is None:
        org = Organization(name=data["organizationName"])
        request.dbsession.add(org)
        request.dbsession.flush()
        publish(request, OrganizationCreated(request, organization=org, actor_id=None))
    else:
        org.name = data["organizationName"]
    email = normalize_email(data["email"])
    user = request.dbsession.execute(select(User).where(User.email == email)).scalar()
    if user is None:
        user = User(organization_id=org.id, email=email)
        request.dbsession.add(user)
    user.name, user.role, user.active = data["name"], Role.admin, True
    user.password_hash = passwords(request.registry).hash(data["password"])
    request.dbsession.flush()
    log.info("setup completed: organization %s, admin user %s", org.id, user.id)
    return user


def authenticate(request: Request, email: str, password: str) -> User:
    """The active user with this email and password, within the attempt
    limits (spec: 429 after 10 attempts per email in 15 minutes; and a bound
    on failures per client address, `ratelimit.sign_in`). A Refusal must be
    answered, not raised through the transaction: the counts must commit."""
    email = normalize_email(email)
    hasher = passwords(request.registry)
    attempt = ratelimit.sign_in(request.dbsession, email, ratelimit.client_address(request))
    if (wait := attempt.wait) is not None:
        log.warning("login throttled for an account (too many attempts)")
        raise Refusal(429, "Too many sign-in attempts; try again later", retry_after=wait)
    user = request.dbsession.execute(select(User).where(User.email == email)).scalar()
    stored = user.password_hash if user is not None else None
    if not hasher.verify(stored, password) or not user.active:
        log.warning("failed sign-in (user %s)", user.id if user else "unknown")
        attempt.failed()
        raise Refusal(401, "Invalid email or password")
    if not local_sign_in_allowed(request.registry, user.role):
        log.warning("user %s refused a password sign-in: the company's sign-in replaces it", user.id)
        raise Refusal(403, COMPANY_ONLY)
    if hasher.needs_rehash(stored):
        user.password_hash = hasher.hash(password)
    log.info("user %s signed in with a password", user.id)
    return user


def send_link(request: Request, purpose: TokenPurpose, email: str) -> None:
    """Mail a sign-in or reset link to an active account, within the
    sending limit; says nothing either way, so accounts cannot be probed."""
    email = normalize_email(email)
    limited = ratelimit.hit(request.dbsession, ratelimit.MAIL, email) is not None
    user = request.dbsession.execute(
        select(User).where(User.email == email, User.active.is_(True))).scalar()
    if limited:
        log.warning("%s mail not sent: sending limit reached for an address", purpose)
    elif user is not None and not local_sign_in_allowed(request.registry, user.role):
        log.info("%s mail not sent: user %s signs in through the company's sign-in", purpose, user.id)
    elif user is not None:
        token = issue_token(request.dbsession, user.id, purpose)
        base = request.registry.settings["ehs.public_url"]
        send_mail(request, user.email, LINK_TEMPLATES[purpose], name=user.name,
                  link=f"{base}{LINK_PATHS[purpose]}?token={token}")


def _active_user(request: Request, user_id: int | None) -> User:
    user = request.dbsession.get(User, user_id) if user_id is not None else None
    if user is None or not user.active:
        raise APIError(400, BAD_LINK)
    if not local_sign_in_allowed(request.registry, user.role):
        raise APIError(403, COMPANY_ONLY)
    return user


def sign_in_with_link(request: Request, token: str) -> User:
    user = _active_user(request, consume_token(request.dbsession, token, (TokenPurpose.magic_link,)))
    log.info("user %s signed in with an emailed link", user.id)
    return user


def set_password_with_link(request: Request, token: str, new_password: str) -> User:
    """Reset links and invitations: set the password, end the user's other
    sessions and retire their other links."""
    user_id = consume_token(request.dbsession, token,
                            (TokenPurpose.password_reset, TokenPurpose.invitation))
    user = _active_user(request, user_id)
    user.password_hash = passwords(request.registry).hash(new_password)
    end_user_sessions(request, user.id)
    retire_tokens(request.dbsession, user.id)
    log.info("user %s set a new password through an emailed link", user.id)
    return user


def change_password(request: Request, user: User, current: str, new: str) -> None:
    """A signed-in change: the current password under the attempt limit;
    ends the user's sessions and retires their emailed links."""
    hasher = passwords(request.registry)
    wait = ratelimit.hit(request.dbsession, ratelimit.LOGIN, user.email)
    if wait is not None:
        raise Refusal(429, "Too many attempts; try again later", retry_after=wait)
    if not hasher.verify(user.password_hash, current):
        log.warning("user %s gave a wrong current password", user.id)
        raise Refusal(400, "Invalid request", [
            {"path": "currentPassword", "message": "The current password is not correct"}])
    user.password_hash = hasher.hash(new)
    end_user_sessions(request, user.id)
    retire_tokens(request.dbsession, user.id)
    log.info("user %s changed their password", user.id)
