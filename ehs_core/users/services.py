"""Users of the organization and their roles (convention as in
`incidents.filing`: the request is the unit of work and `request.identity`
the admin acting, data is validated, refusals are domain errors).

What follows from a change to a user belongs to auth, which listens:
the invitation mail on UserCreated, ending sessions on UserUpdated
(`ehs_core.auth.listeners`)."""

from __future__ import annotations

import logging
from typing import Any

from pyramid.request import Request
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from ehs_core import refdata
from ehs_core.auth.passwords import passwords
from ehs_core.db import advisory_lock
from ehs_core.errors import Conflict, NotFound, invalid
from ehs_core.events import UserCreated, UserUpdated, actor, publish
from ehs_core.security import Role
from ehs_core.sites.models import Site
from ehs_core.users.models import User, UserSite, normalize_email

log = logging.getLogger(__name__)


def list_users(request: Request) -> list[User]:
    return list(request.dbsession.execute(select(User).options(selectinload(User.site_links))
                                          .order_by(func.lower(User.name), User.id)).scalars())


def assignable_users(request: Request) -> list[tuple[int, str, str]]:
    """(id, name, role) of the active users, for choosing an assignee (kept
    per worker until a user changes: `ehs_core.refdata`)."""
    return refdata.cached(request, "assignable_users", _assignable_users)


def _assignable_users(request: Request) -> list[tuple[int, str, str]]:
    return [tuple(row) for row in request.dbsession.execute(
        select(User.id, User.name, User.role).where(User.active.is_(True))
        .order_by(func.lower(User.name), User.id))]


def create_user(request: Request, data: dict[str, Any], *,
                organization_id: int | None = None) -> tuple[User, bool]:
    """A user in the admin's organization; returns (user, invited). Without
    a password the user is invited (auth mails the link). With
    `organization_id`, a user made by their own first sign-in through the
    company's identity provider: nobody to invite, nobody signed in."""
    email = normalize_email(data["email"])
    dbsession = request.dbsession
    if dbsession.execute(select(User.id).where(User.email == email)).first():
        raise Conflict("A user with this email already exists")
    if organization_id is None:
        organization_id = request.identity.account.organization_id
    user = User(organization_id=organization_id, name=data["name"], email=email, role=data["role"],
                active=True, locale=data.get("locale"))
    invited = "password" not in data and request.identity is not None
    if "password" in data:
        user.password_hash = passwords(request.registry).hash(data["password"])
    dbsession.add(user)
    try:
        dbsession.flush()
    except IntegrityError:
        # Two admins adding the same address at once: the unique key decides.
        raise Conflict("A user with this email already exists") from None
    publish(request, UserCreated(request, user=user, invited=invited, actor_id=actor(request)))
    log.info("user %s created user %s (role %s)", actor(request), user.id, user.role)
    return user, invited


def _is_last_active_admin(request: Request, user: User) -> bool:
    others = request.dbsession.execute(
        select(func.count()).select_from(User)
        .where(User.role == Role.admin, User.active.is_(True), User.id != user.id)).scalar()
    return others == 0


def update_user(request: Request, user_id: int, data: dict[str, Any]) -> User:
    """Rename, change role, (de)activate, set the language (a shipped
    locale, or None for the default: issue #39) or set a password. The last
    active admin can be neither demoted nor deactivated."""
    dbsession = request.dbsession
    user = dbsession.get(User, user_id)
    if user is None:
        raise NotFound()
    demoting = "role" in data and data["role"] != Role.admin
    deactivating = data.get("active") is False
    if user.role == Role.admin and user.active and (demoting or deactivating):
        # Serialise concurrent demotions so two admins cannot remove each other.
        advisory_lock(dbsession, "last-active-admin")
        dbsession.refresh(user)
        if user.role == Role.admin and user.active and _is_last_active_admin(request, user):
            raise Conflict("The last active admin cannot be demoted or deactivated")
    changes: dict[str, Any] = {}
    for key in ("name", "role", "active", "locale"):
        if key in data and getattr(user, key) != data[key]:
            changes[key] = [getattr(user, key), data[key]]
            setattr(user, key, data[key])
    if "siteIds" in data:
        chosen = sorted(set(data["siteIds"]))
        if chosen != user.site_ids:
            changes["siteIds"] = [user.site_ids, chosen]
            set_sites(request, user, chosen)
    if "password" in data:
        user.password_hash = passwords(request.registry).hash(data["password"])
        changes["password"] = True
    publish(request, UserUpdated(request, user=user, changes=changes, actor_id=actor(request)))
    log.info("user %s updated user %s: %s", request.identity.user_id, user.id, sorted(changes))
    return user


def set_sites(request: Request, user: User, site_ids: list[int]) -> None:
    """The sites a person works at, each a site of the organization (an
    archived one may stay chosen: it still holds their incidents)."""
    known = set(request.dbsession.execute(select(Site.id).where(
        Site.id.in_(site_ids), Site.organization_id == user.organization_id)).scalars())
    unknown = [site_id for site_id in site_ids if site_id not in known]
    if unknown:
        raise invalid("siteIds", f"Unknown site: {unknown[0]}")
    user.site_links = [UserSite(site_id=site_id) for site_id in site_ids]
