"""Setup, sign-in, sessions, emailed links and password changes.

Refusals that must still record something (a failed login counts towards
the limit) are returned as responses rather than raised, because a raised
error rolls the request's transaction back.
"""

from __future__ import annotations

import datetime as dt
import logging
import math

from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config
from sqlalchemy import exists, select

from ehs_core.auth import ratelimit
from ehs_core.auth.passwords import passwords
from ehs_core.auth.schemas import (
    EmailSchema,
    LoginSchema,
    PasswordChangeSchema,
    ResetConfirmSchema,
    SetupSchema,
    TokenSchema,
)
from ehs_core.auth.sessions import end_current_session, end_user_sessions, start_session
from ehs_core.auth.tokens import TokenPurpose, consume_token, issue_token, retire_tokens
from ehs_core.db import advisory_lock
from ehs_core.errors import APIError, error_response
from ehs_core.events import OrganizationCreated, publish
from ehs_core.mail import send_mail
from ehs_core.security import Permission, Role
from ehs_core.users.models import Organization, User, normalize_email, user_json

log = logging.getLogger(__name__)

PUBLIC = NO_PERMISSION_REQUIRED
BAD_LINK = "This link is invalid, has expired or was already used"


def retry_after(wait: dt.timedelta) -> str:
    return str(max(1, math.ceil(wait.total_seconds())))


def organization(request: Request) -> Organization | None:
    return request.dbsession.execute(select(Organization).order_by(Organization.id)).scalar()


def me_json(request: Request, user: User) -> dict:
    org = organization(request)
    return {"user": user_json(user),
            "organization": {"id": org.id, "name": org.name} if org else None}


def signed_in(request: Request, user: User, status: int = 200) -> Response:
    response = Response(json_body=me_json(request, user), status=status)
    start_session(request, response, user)
    return response


def needs_setup(request: Request) -> bool:
    return not request.dbsession.execute(
        select(exists().where(User.role == Role.admin))).scalar()


@view_config(route_name="setup", request_method="GET", renderer="json", permission=PUBLIC)
def setup_status(request: Request) -> dict:
    return {"needsSetup": needs_setup(request)}


@view_config(route_name="setup", request_method="POST", permission=PUBLIC, body=SetupSchema,
             responses=(201,))
def setup(request: Request) -> Response:
    data = request.validated
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
    return signed_in(request, user, status=201)


@view_config(route_name="auth.login", request_method="POST", permission=PUBLIC, body=LoginSchema)
def login(request: Request) -> Response:
    data = request.validated
    email = normalize_email(data["email"])
    hasher = passwords(request.registry)
    attempt = ratelimit.sign_in(request.dbsession, email, ratelimit.client_address(request))
    if (wait := attempt.wait) is not None:
        log.warning("login throttled for an account (too many attempts)")
        return error_response(request, 429, "Too many sign-in attempts; try again later",
                              headers={"Retry-After": retry_after(wait)})
    user = request.dbsession.execute(select(User).where(User.email == email)).scalar()
    stored = user.password_hash if user is not None else None
    if not hasher.verify(stored, data["password"]) or not user.active:
        log.warning("failed sign-in (user %s)", user.id if user else "unknown")
        attempt.failed()
        return error_response(request, 401, "Invalid email or password")
    if hasher.needs_rehash(stored):
        user.password_hash = hasher.hash(data["password"])
    log.info("user %s signed in with a password", user.id)
    return signed_in(request, user)


def _emailed_link(request: Request, purpose: TokenPurpose, template: str, path: str) -> HTTPNoContent:
    """Shared by magic-link and password-reset requests: always 204, mail
    only for an active account and only within the sending limit."""
    data = request.validated
    email = normalize_email(data["email"])
    limited = ratelimit.hit(request.dbsession, ratelimit.MAIL, email) is not None
    user = request.dbsession.execute(
        select(User).where(User.email == email, User.active.is_(True))).scalar()
    if limited:
        log.warning("%s mail not sent: sending limit reached for an address", purpose)
    elif user is not None:
        token = issue_token(request.dbsession, user.id, purpose)
        base = request.registry.settings["ehs.public_url"]
        send_mail(request, user.email, template, name=user.name, link=f"{base}{path}?token={token}")
    return HTTPNoContent()


@view_config(route_name="auth.magic_link", request_method="POST", permission=PUBLIC, body=EmailSchema,
             responses=(204,))
def request_magic_link(request: Request) -> HTTPNoContent:
    return _emailed_link(request, TokenPurpose.magic_link, "magic_link", "/auth/magic")


@view_config(route_name="auth.password_reset", request_method="POST", permission=PUBLIC,
             body=EmailSchema, responses=(204,))
def request_password_reset(request: Request) -> HTTPNoContent:
    return _emailed_link(request, TokenPurpose.password_reset, "password_reset", "/auth/reset")


def _active_user(request: Request, user_id: int | None) -> User:
    user = request.dbsession.get(User, user_id) if user_id is not None else None
    if user is None or not user.active:
        raise APIError(400, BAD_LINK)
    return user


@view_config(route_name="auth.magic_link_verify", request_method="POST", permission=PUBLIC, body=TokenSchema)
def verify_magic_link(request: Request) -> Response:
    data = request.validated
    user_id = consume_token(request.dbsession, data["token"], (TokenPurpose.magic_link,))
    user = _active_user(request, user_id)
    log.info("user %s signed in with an emailed link", user.id)
    return signed_in(request, user)


@view_config(route_name="auth.password_reset_confirm", request_method="POST", permission=PUBLIC,
             body=ResetConfirmSchema)
def confirm_password_reset(request: Request) -> Response:
    data = request.validated
    user_id = consume_token(request.dbsession, data["token"],
                            (TokenPurpose.password_reset, TokenPurpose.invitation))
    user = _active_user(request, user_id)
    user.password_hash = passwords(request.registry).hash(data["newPassword"])
    end_user_sessions(request, user.id)
    retire_tokens(request.dbsession, user.id)
    log.info("user %s set a new password through an emailed link", user.id)
    return signed_in(request, user)


@view_config(route_name="auth.logout", request_method="POST", permission=PUBLIC,
             responses=(204,))
def logout(request: Request) -> Response:
    response = HTTPNoContent()
    end_current_session(request, response)
    return response


@view_config(route_name="auth.me", request_method="GET", renderer="json",
             permission=Permission.signed_in)
def me(request: Request) -> dict:
    return me_json(request, request.identity.user)


@view_config(route_name="auth.password", request_method="POST", permission=Permission.signed_in,
             body=PasswordChangeSchema,
             responses=(204,))
def change_password(request: Request) -> Response:
    data = request.validated
    user: User = request.identity.user
    hasher = passwords(request.registry)
    wait = ratelimit.hit(request.dbsession, ratelimit.LOGIN, user.email)
    if wait is not None:
        return error_response(request, 429, "Too many attempts; try again later",
                              headers={"Retry-After": retry_after(wait)})
    if not hasher.verify(user.password_hash, data["currentPassword"]):
        log.warning("user %s gave a wrong current password", user.id)
        return error_response(request, 400, "Invalid request", [
            {"path": "currentPassword", "message": "The current password is not correct"}])
    user.password_hash = hasher.hash(data["newPassword"])
    end_user_sessions(request, user.id)
    retire_tokens(request.dbsession, user.id)
    response = HTTPNoContent()
    start_session(request, response, user)
    log.info("user %s changed their password", user.id)
    return response
