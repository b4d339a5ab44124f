from __future__ import annotations

import logging

from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from ehs_core.auth.sessions import end_user_sessions
from ehs_core.auth.tokens import TokenPurpose, issue_token, retire_tokens
from ehs_core.db import advisory_lock
from ehs_core.errors import APIError
from ehs_core.events import UserCreated, UserUpdated, publish
from ehs_core.mail import send_mail
from ehs_core.security import Permission, Role
from ehs_core.users.models import Organization, User, normalize_email, user_json
from ehs_core.users.schemas import UserCreateSchema, UserUpdateSchema

log = logging.getLogger(__name__)


@view_config(route_name="users", request_method="GET", renderer="json",
             permission=Permission.list_users)
def list_users(request: Request) -> list[dict]:
    users = request.dbsession.execute(select(User).order_by(func.lower(User.name), User.id)).scalars()
    return [user_json(user) for user in users]


@view_config(route_name="users.assignable", request_method="GET", renderer="json",
             permission=Permission.view_assignable_users)
def assignable_users(request: Request) -> list[dict]:
    users = request.dbsession.execute(
        select(User.id, User.name, User.role).where(User.active.is_(True))
        .order_by(func.lower(User.name), User.id))
    return [{"id": id_, "name": name, "role": role} for id_, name, role in users]


@view_config(route_name="users", request_method="POST", renderer="json",
             permission=Permission.manage_users, body=UserCreateSchema,
             responses=(201,))
def create_user(request: Request) -> dict:
    data = request.validated
    email = normalize_email(data["email"])
    dbsession = request.dbsession
    if dbsession.execute(select(User.id).where(User.email == email)).first():
        raise APIError(409, "A user with this email already exists")
    user = User(organization_id=request.identity.user.organization_id, name=data["name"],
                email=email, role=data["role"], active=True)
    invited = "password" not in data
    if not invited:
        user.password_hash = request.registry["passwords"].hash(data["password"])
    dbsession.add(user)
    try:
        dbsession.flush()
    except IntegrityError:
        # Two admins adding the same address at once: the unique key decides.
        raise APIError(409, "A user with this email already exists") from None
    if invited:
        token = issue_token(dbsession, user.id, TokenPurpose.invitation)
        org = dbsession.get(Organization, user.organization_id)
        base = request.registry.settings["ehs.public_url"]
        send_mail(request, user.email, "invitation", name=user.name, organization=org.name,
                  link=f"{base}/auth/reset?token={token}")
    publish(request, UserCreated(request, user=user, invited=invited))
    log.info("user %s created user %s (role %s)", request.identity.user_id, user.id, user.role)
    request.response.status = 201
    return {"user": user_json(user), "invited": invited}


def _is_last_active_admin(request: Request, user: User) -> bool:
    others = request.dbsession.execute(
        select(func.count()).select_from(User)
        .where(User.role == Role.admin, User.active.is_(True), User.id != user.id)).scalar()
    return others == 0


@view_config(route_name="user", request_method="PATCH", renderer="json",
             permission=Permission.manage_users, body=UserUpdateSchema)
def update_user(request: Request) -> dict:
    data = request.validated
    dbsession = request.dbsession
    user = dbsession.get(User, int(request.matchdict["id"]))
    if user is None:
        raise APIError(404, "Not found")
    demoting = "role" in data and data["role"] != Role.admin
    deactivating = data.get("active") is False
    if user.role == Role.admin and user.active and (demoting or deactivating):
        # Serialise concurrent demotions so two admins cannot remove each other.
        advisory_lock(dbsession, "last-active-admin")
        dbsession.refresh(user)
        if user.role == Role.admin and user.active and _is_last_active_admin(request, user):
            raise APIError(409, "The last active admin cannot be demoted or deactivated")
    changes = {}
    for key in ("name", "role", "active"):
        if key in data and getattr(user, key) != data[key]:
            changes[key] = [getattr(user, key), data[key]]
            setattr(user, key, data[key])
    if "password" in data:
        user.password_hash = request.registry["passwords"].hash(data["password"])
        changes["password"] = True
    if deactivating or "password" in data:
        # A password set by an admin or a deactivation also voids the user's
        # pending emailed links, as a self-service change does (ASVS 5 6.4.x):
        # a link mailed before must not sign a reactivated user in.
        end_user_sessions(request, user.id)
        retire_tokens(dbsession, user.id)
    publish(request, UserUpdated(request, user=user, changes=changes))
    log.info("user %s updated user %s: %s", request.identity.user_id, user.id, sorted(changes))
    return user_json(user)
