"""The JSON face of users; the operations live in `services`."""

from __future__ import annotations

from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.security import Permission
from ehs_core.users import services
from ehs_core.users.models import user_json
from ehs_core.users.schemas import UserCreateSchema, UserUpdateSchema


@view_config(route_name="users", request_method="GET", renderer="json",
             permission=Permission.list_users)
def list_users(request: Request) -> list[dict]:
    return [user_json(user) for user in services.list_users(request)]


@view_config(route_name="users.assignable", request_method="GET", renderer="json",
             permission=Permission.view_assignable_users)
def assignable_users(request: Request) -> list[dict]:
    return [{"id": id_, "name": name, "role": role}
            for id_, name, role in services.assignable_users(request)]


@view_config(route_name="users", request_method="POST", renderer="json",
             permission=Permission.manage_users, body=UserCreateSchema,
             responses=(201,))
def create_user(request: Request) -> dict:
    user, invited = services.create_user(request, request.validated)
    request.response.status = 201
    return {"user": user_json(user), "invited": invited}


@view_config(route_name="user", request_method="PATCH", renderer="json",
             permission=Permission.manage_users, body=UserUpdateSchema)
def update_user(request: Request) -> dict:
    return user_json(services.update_user(request, int(request.matchdict["id"]), request.validated))
