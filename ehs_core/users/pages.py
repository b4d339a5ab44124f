"""People, as a page (/admin/users): safety managers see who is who;
admins invite, change roles, deactivate and reactivate, and send an
invitation again. Each form adapts `users.services` with the API's schemas
and permissions (`list_users`, `manage_users`); the last active admin is
protected by the service, as in the API."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.auth.listeners import invite
from ehs_core.errors import DomainError
from ehs_core.security import Permission, Role
from ehs_core.sites.services import site_choices
from ehs_core.ui.forms import TEXT, errors_of, json_values
from ehs_core.users import services
from ehs_core.users.models import User
from ehs_core.users.schemas import UserCreateSchema, UserUpdateSchema

USER = r"/admin/users/{id:\d{1,9}}"


def people(request: Request, errors: dict[str, Any] | None = None,
           values: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"users": services.list_users(request), "roles": list(Role),
            "sites": site_choices(request, False),
            "can_manage": bool(request.has_permission(Permission.manage_users)),
            "errors": errors or {}, "values": values or {}}


def user_list(request: Request) -> dict[str, Any]:
    return people(request)


def invite_user(request: Request) -> Any:
    """A new person, invited by mail to choose their password (no password
    is set here, so the invitation goes out, as from the API)."""
    values = json_values(request.POST, {"name": TEXT, "email": TEXT, "role": TEXT})
    try:
        user, _ = services.create_user(request, UserCreateSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        found = errors_of(exc)
        if "_" in found and not isinstance(exc, colander.Invalid):
            found = {"email": found.pop("_")} | found
        return people(request, found, dict(request.POST.items()))
    return HTTPFound(request.route_path("page.users", _query={"notice": "invited"},
                                        _anchor=f"user-{user.id}"))


def _user(request: Request) -> User:
    user = request.dbsession.get(User, int(request.matchdict["id"]))
    if user is None:
        raise HTTPNotFound()
    return user


def change_user(request: Request) -> Any:
    """Role, active, or the sites a person works at: one change per button."""
    user = _user(request)
    values: dict[str, Any] = {}
    if "role" in request.POST:
        values["role"] = request.POST.get("role")
    if request.POST.get("active") in ("true", "false"):
        values["active"] = request.POST["active"] == "true"
    if request.POST.get("sites") == "chosen":
        # The ticked sites (none ticked: all of them).
        values["siteIds"] = [int(raw) for raw in request.POST.getall("siteId")
                             if isinstance(raw, str) and raw.isdigit() and len(raw) <= 9]
    try:
        if not values:
            raise DomainError("Nothing to change")
        services.update_user(request, user.id, UserUpdateSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return people(request, {f"user-{user.id}": next(iter(errors_of(exc).values()), str(exc))})
    return HTTPFound(request.route_path("page.users", _query={"notice": "saved"}, _anchor=f"user-{user.id}"))


def resend_invitation(request: Request) -> Any:
    user = _user(request)
    if user.password_hash is not None or not user.active:
        request.response.status = 409
        return people(request, {f"user-{user.id}": request.localizer.translate(
            "This person has already chosen a password; they can use “Forgot your password?”.")})
    invite(request, user)
    return HTTPFound(request.route_path("page.users", _query={"notice": "invited"},
                                        _anchor=f"user-{user.id}"))


def has_people(request: Request) -> bool:
    """The first hour's step: someone besides the first admin."""
    return request.dbsession.execute(select(User.id).offset(1).limit(1)).first() is not None


def includeme(config: Configurator) -> None:
    config.add_first_step("people", "Invite the people who report and follow up", "page.users", has_people,
                          order=20)
    config.add_route("page.users", "/admin/users")
    config.add_route("page.user", USER)
    config.add_route("page.user_invitation", USER + "/invitation")
    view = config.add_view
    view(user_list, route_name="page.users", request_method="GET",
         renderer="ehs_core:templates/users/list.html", permission=Permission.list_users)
    view(invite_user, route_name="page.users", request_method="POST",
         renderer="ehs_core:templates/users/list.html", permission=Permission.manage_users)
    view(change_user, route_name="page.user", request_method="POST",
         renderer="ehs_core:templates/users/list.html", permission=Permission.manage_users)
    view(resend_invitation, route_name="page.user_invitation", request_method="POST",
         renderer="ehs_core:templates/users/list.html", permission=Permission.manage_users)
    config.add_nav_item("people", "People", "page.users", permission=Permission.list_users, order=80)
