"""Who is asking, and what they may do: one Pyramid 2 security policy.

Identity comes from identity providers, tried in order: the core registers the
session-cookie provider; a plugin (the kiosk) may add another through
`config.add_identity_provider`. An identity carries principals such as
`role:supervisor` (one for each role at or below the user's role, so ACLs name
the minimum role), `user:12` or `kiosk:3`. Views declare a `Permission`;
resource factories carry the `__acl__` that grants it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pyramid.authorization import ACLHelper, Allow, Authenticated, Everyone
from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.directives import register_once


class Role(StrEnum):
    reporter = "reporter"
    supervisor = "supervisor"
    safety_manager = "safety_manager"
    admin = "admin"


# The order of privilege, least first; every role may do what those before it may.
ROLE_ORDER: tuple[Role, ...] = (Role.reporter, Role.supervisor, Role.safety_manager, Role.admin)


def role_rank(role: str) -> int:
    return ROLE_ORDER.index(Role(role))


def role_at_least(role: str, minimum: str) -> bool:
    return role_rank(role) >= role_rank(minimum)


def role_principal(role: str) -> str:
    return f"role:{role}"


class Permission(StrEnum):
    signed_in = "signed_in"
    view_assignable_users = "view_assignable_users"
    list_users = "list_users"
    manage_users = "manage_users"
    manage_sites = "manage_sites"
    # Incidents and what hangs off them; granted by the incident's own ACL.
    view_incident = "view_incident"
    update_incident = "update_incident"
    comment_incident = "comment_incident"
    upload_attachment = "upload_attachment"
    manage_investigation = "manage_investigation"
    view_all_actions = "view_all_actions"
    edit_action = "edit_action"
    verify_actions = "verify_actions"
    delete_attachment = "delete_attachment"
    # The people involved (ehs_core.people): whoever may see the incident
    # names people; only supervisors and above remove an entry.
    record_people = "record_people"
    remove_people = "remove_people"
    # The follow-up thread of a report filed without a name (supervisor and above).
    follow_up = "follow_up"


@dataclass
class Identity:
    """The caller. `user` is the signed-in User row, or None for a token
    identity such as a kiosk link."""

    kind: str
    id: int
    principals: list[str] = field(default_factory=list)
    user: Any = None
    session: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_user(self) -> bool:
        return self.kind == "user"

    @property
    def user_id(self) -> int | None:
        return self.id if self.is_user else None

    @property
    def role(self) -> str | None:
        return self.user.role if self.user is not None else None

    @property
    def account(self) -> Any:
        """The signed-in user's own columns (id, name, email, role, active,
        organization_id) for reading; `user` is the ORM object. The same
        object here; a provider may answer it without making the ORM object
        (see `ehs_core.auth.sessions.SessionIdentity`)."""
        return self.user


def user_principals(user_id: int, role: str) -> list[str]:
    return [f"user:{user_id}", *ROLE_PRINCIPALS[role]]


# Each role's principals: its own and those of every role below it (made
# once; every signed-in request asks).
ROLE_PRINCIPALS: dict[str, tuple[str, ...]] = {
    role: tuple(role_principal(r) for r in ROLE_ORDER[: rank + 1]) for rank, role in enumerate(ROLE_ORDER)}


IdentityProvider = Callable[[Request], Identity | None]


class Caller:
    """What the request knows of its caller: nothing yet, or the identity
    the providers answered (None: nobody recognised). One per request
    (`request.caller`, a reified request method: the style guide's rule,
    per-request state goes through Pyramid's request methods, never parked
    in request.environ), so a request run again by pyramid_retry, a new
    request, asks the providers again."""

    __slots__ = ("identity", "known")

    def __init__(self) -> None:
        self.known = False
        self.identity: Identity | None = None

    def settle(self, identity: Identity | None) -> None:
        """The caller is `identity` for the rest of the request, whatever a
        provider would answer (the outage page: nobody, with no database to
        ask)."""
        self.identity = identity
        self.known = True


def caller(request: Request) -> Caller:
    """`request.caller` (reified): see `Caller`."""
    return Caller()


def identity_of(request: Request) -> Identity | None:
    """The request's caller, asked of each registered identity provider in
    turn on first use and kept in `request.caller`. `request.identity` gives
    the same (the policy answers it from here), but Pyramid's property looks
    the policy up in the registry on every call, and the incident page asks
    thirty-odd times (each cached value of `ehs_core.refdata`, the menu, the
    layout)."""
    known = request.caller
    if not known.known:
        found = None
        for provider in request.registry.get("identity_providers", []):
            found = provider(request)
            if found is not None:
                break
        known.settle(found)
    return known.identity


class SecurityPolicy:
    """Asks each registered identity provider in turn; caches per request."""

    def __init__(self) -> None:
        self.helper = ACLHelper()

    def identity(self, request: Request) -> Identity | None:
        return identity_of(request)

    def authenticated_userid(self, request: Request) -> int | None:
        identity = self.identity(request)
        return identity.user_id if identity is not None else None

    def permits(self, request: Request, context: Any, permission: str) -> Any:
        identity = self.identity(request)
        principals = [Everyone]
        if identity is not None:
            principals += identity.principals
            if identity.is_user:
                principals.append(Authenticated)
        return self.helper.permits(context, principals, permission)

    def remember(self, request: Request, userid: Any, **kw: Any) -> list[tuple[str, str]]:
        return []

    def forget(self, request: Request, **kw: Any) -> list[tuple[str, str]]:
        return []


class Root:
    """The default context: grants permissions by minimum role."""

    __acl__ = [
        (Allow, role_principal(Role.reporter), Permission.signed_in),
        (Allow, role_principal(Role.supervisor),
         (Permission.view_assignable_users, Permission.view_all_actions)),
        (Allow, role_principal(Role.safety_manager),
         (Permission.list_users, Permission.manage_sites, Permission.verify_actions)),
        (Allow, role_principal(Role.admin), Permission.manage_users),
    ]

    def __init__(self, request: Request) -> None:
        self.request = request


def add_identity_provider(config: Configurator, name: str, provider: IdentityProvider) -> None:
    """Directive: add a way of recognising callers (cookie, token …)."""

    def register() -> None:
        config.registry.setdefault("identity_providers", []).append(provider)

    register_once(config, "ehs.identity_provider", name, register)


def includeme(config: Configurator) -> None:
    config.add_directive("add_identity_provider", add_identity_provider)
    config.add_request_method(caller, "caller", reify=True)
    config.set_security_policy(SecurityPolicy())
    config.set_root_factory(Root)
    # Deny by default: a view that forgets its permission is not public.
    config.set_default_permission(Permission.signed_in)
