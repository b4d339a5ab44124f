"""Setup, sign-in, sessions, emailed links and password changes.

Refusals that must still record something (a failed login counts towards
the limit) are returned as responses rather than raised, because a raised
error rolls the request's transaction back.
"""

from __future__ import annotations

import logging
from typing import Any

from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config

from ehs_core.auth import signin
from ehs_core.auth.schemas import (
    EmailSchema,
    LoginSchema,
    PasswordChangeSchema,
    ResetConfirmSchema,
    SetupSchema,
    TokenSchema,
)
from ehs_core.auth.sessions import end_current_session, start_session
from ehs_core.auth.tokens import TokenPurpose
from ehs_core.errors import error_response
from ehs_core.security import Permission
from ehs_core.users.models import User, user_json
from ehs_core.users.schemas import OwnSettingsSchema
from ehs_core.users.services import update_user

log = logging.getLogger(__name__)

PUBLIC = NO_PERMISSION_REQUIRED


def refused(request: Request, refusal: signin.Refusal) -> Response:
    return error_response(request, refusal.status, refusal.message, refusal.issues, refusal.headers)


def me_json(request: Request, user: Any, organization: dict | None = None) -> dict:
    """`organization`: its id and name when already known (the signed-in
    identity reads them with the session)."""
    if organization is not None:
        return {"user": user_json(user), "organization": organization}
    org = signin.organization(request)
    return {"user": user_json(user),
            "organization": {"id": org.id, "name": org.name} if org else None}


def signed_in(request: Request, user: User, status: int = 200) -> Response:
    response = Response(json_body=me_json(request, user), status=status)
    start_session(request, response, user)
    return response


@view_config(route_name="setup", request_method="GET", renderer="json", permission=PUBLIC)
def setup_status(request: Request) -> dict:
    return {"needsSetup": signin.needs_setup(request)}


@view_config(route_name="setup", request_method="POST", permission=PUBLIC, body=SetupSchema,
             responses=(201,))
def setup(request: Request) -> Response:
    return signed_in(request, signin.complete_setup(request, request.validated), status=201)


@view_config(route_name="auth.login", request_method="POST", permission=PUBLIC, body=LoginSchema)
def login(request: Request) -> Response:
    data = request.validated
    try:
        user = signin.authenticate(request, data["email"], data["password"])
    except signin.Refusal as refusal:
        return refused(request, refusal)
    return signed_in(request, user)


@view_config(route_name="auth.magic_link", request_method="POST", permission=PUBLIC, body=EmailSchema,
             responses=(204,))
def request_magic_link(request: Request) -> HTTPNoContent:
    signin.send_link(request, TokenPurpose.magic_link, request.validated["email"])
    return HTTPNoContent()


@view_config(route_name="auth.password_reset", request_method="POST", permission=PUBLIC,
             body=EmailSchema, responses=(204,))
def request_password_reset(request: Request) -> HTTPNoContent:
    signin.send_link(request, TokenPurpose.password_reset, request.validated["email"])
    return HTTPNoContent()


@view_config(route_name="auth.magic_link_verify", request_method="POST", permission=PUBLIC, body=TokenSchema)
def verify_magic_link(request: Request) -> Response:
    return signed_in(request, signin.sign_in_with_link(request, request.validated["token"]))


@view_config(route_name="auth.password_reset_confirm", request_method="POST", permission=PUBLIC,
             body=ResetConfirmSchema)
def confirm_password_reset(request: Request) -> Response:
    data = request.validated
    return signed_in(request, signin.set_password_with_link(request, data["token"], data["newPassword"]))


@view_config(route_name="auth.logout", request_method="POST", permission=PUBLIC,
             responses=(204,))
def logout(request: Request) -> Response:
    response = HTTPNoContent()
    end_current_session(request, response)
    return response


@view_config(route_name="auth.me", request_method="GET", renderer="json",
             permission=Permission.signed_in)
def me(request: Request) -> dict:
    identity = request.identity
    return me_json(request, identity.user, identity.extra.get("organization"))


@view_config(route_name="auth.me", request_method="PATCH", renderer="json",
             permission=Permission.signed_in, body=OwnSettingsSchema)
def change_own_settings(request: Request) -> dict:
    """A person's own name and language (`locale`: "en", "es" or null for
    the default; issue #39): the account page's operation, the same
    service as an admin's change of a user."""
    user = update_user(request, request.identity.user_id, request.validated)
    return me_json(request, user)


@view_config(route_name="auth.password", request_method="POST", permission=Permission.signed_in,
             body=PasswordChangeSchema,
             responses=(204,))
def change_password(request: Request) -> Response:
    data = request.validated
    user: User = request.identity.user
    try:
        signin.change_password(request, user, data["currentPassword"], data["newPassword"])
    except signin.Refusal as refusal:
        return refused(request, refusal)
    response = HTTPNoContent()
    start_session(request, response, user)
    return response
