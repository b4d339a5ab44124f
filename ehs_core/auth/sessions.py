"""Server-side sessions in the `service_session` cookie.

Every sign-in issues a fresh random token (no fixation); the database keeps
only its hash. Sessions end after 12 hours without use or 30 days after
sign-in, whichever comes first; logout, password changes and deactivation
delete them server-side, so a replayed cookie is refused.
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import make_transient_to_detached

from ehs_core.auth.models import UserSession
from ehs_core.auth.tokens import digest, new_secret
from ehs_core.db import PlainRead, utcnow
from ehs_core.security import Identity, user_principals
from ehs_core.users.models import Organization, User

COOKIE_NAME = "service_session"
IDLE_TIMEOUT = dt.timedelta(hours=12)
ABSOLUTE_TIMEOUT = dt.timedelta(days=30)
# Recording activity costs a write; once a minute is precise enough.
TOUCH_INTERVAL = dt.timedelta(minutes=1)


# The session, its user and the organization's name in one statement of
# plain columns: every signed-in request pays for it, so it is one round trip
# and no ORM loading. It runs on every request, so signing out, deactivation
# and a role change take effect on the very next request in every worker
# process. (The caches of reference data are keyed by the organization's
# `reference_version`, read here too: `ehs_core.refdata`.)
# What no request needs is left out: the password hash (loaded when a
# password change reads it; ASVS V2.4: a secret read only where it is used),
# the user's creation time, and the session's id (its activity is recorded
# by the token's hash, its other unique key).
USER_COLUMNS = (User.id, User.organization_id, User.name, User.email, User.role, User.active,
                User.locale)
# Built once (building a select costs more than running this one), and run
# on the DBAPI cursor (`PlainRead`: SQLAlchemy's execution was most of the
# floor's time in the statement).
IDENTITY = PlainRead(
    select(UserSession.created_at, UserSession.last_seen_at, Organization.name,
           Organization.reference_version, *USER_COLUMNS)
    .join(User, User.id == UserSession.user_id)
    .join(Organization, Organization.id == User.organization_id)
    .where(UserSession.token_hash == bindparam("token_hash"))
)
USER_KEYS = tuple(column.key for column in USER_COLUMNS)


class Account(NamedTuple):
    """The signed-in user's columns as the identity statement read them."""

    id: int
    organization_id: int
    name: str
    email: str
    role: str
    active: bool
    locale: str | None


assert Account._fields == USER_KEYS  # the row's order


def signed_in_user(request: Request, values: dict) -> User:
    """The signed-in User as a persistent object of this request's session,
    made from the identity row without asking the database again; views that
    change it (a password change) flush it as usual, and other columns of
    other rows are loaded as before."""
    dbsession = request.dbsession
    loaded = dbsession.identity_map.get(dbsession.identity_key(User, values["id"]))
    if loaded is not None:
        return loaded
    user = User(**values)
    make_transient_to_detached(user)
    dbsession.add(user)
    return user


class SessionIdentity(Identity):
    """A signed-in user. The ORM `User` is made from the identity row on
    first use of `user`: most requests only read the caller's id, role or
    organization (`account`), and need no entity in the session."""

    def __init__(self, request: Request, account: Account, organization_name: str,
                 reference_version: int = 0) -> None:
        self._request = request
        self._account = account
        self.reference_version = reference_version
        super().__init__(kind="user", id=account.id, principals=user_principals(account.id, account.role),
                         extra={"organization": {"id": account.organization_id, "name": organization_name}})

    @property  # type: ignore[override]
    def user(self) -> User:
        user = self.__dict__.get("_user")
        if user is None:
            user = self.__dict__["_user"] = signed_in_user(self._request, self._account._asdict())
        return user

    @user.setter
    def user(self, value: User | None) -> None:
        self.__dict__["_user"] = value

    @property
    def role(self) -> str:
        return self._account.role

    @property
    def account(self) -> Account:
        return self._account


def session_identity(request: Request) -> Identity | None:
    token = request.cookies.get(COOKIE_NAME)
    if not token or len(token) > 200:
        return None
    # A Core statement: no ORM session or loading for a row of plain columns.
    token_hash = digest(token)
    row = IDENTITY.first(request, {"token_hash": token_hash})
    if row is None:
        return None
    created_at, last_seen_at, organization_name, reference_version, *user_values = row
    account = Account(*user_values)
    now = utcnow()
    if (not account.active or now - last_seen_at > IDLE_TIMEOUT
            or now - created_at > ABSOLUTE_TIMEOUT):
        return None
    if now - last_seen_at > TOUCH_INTERVAL:
        request.dbsession.execute(
            update(UserSession).where(UserSession.token_hash == token_hash).values(last_seen_at=now)
            .execution_options(synchronize_session=False))
    return SessionIdentity(request, account, organization_name, reference_version)


def start_session(request: Request, response: Response, user: User, shared: bool = False) -> None:
    """Sign `user` in on `response`, replacing any session this browser had.
    The cookie lives as long as the session may (ABSOLUTE_TIMEOUT), or, on
    a `shared` computer, only until the browser closes (ASVS 5.0 7.3.2;
    the server's limits hold either way)."""
    old = request.cookies.get(COOKIE_NAME)
    if old:
        request.dbsession.execute(delete(UserSession).where(UserSession.token_hash == digest(old)))
    token = new_secret()
    request.dbsession.add(UserSession(token_hash=digest(token), user_id=user.id))
    response.set_cookie(
        COOKIE_NAME, token, httponly=True, samesite="Lax", path="/",
        secure=request.registry.settings["ehs.session_secure"],
        max_age=None if shared else int(ABSOLUTE_TIMEOUT.total_seconds()),
    )


def end_current_session(request: Request, response: Response) -> None:
    token = request.cookies.get(COOKIE_NAME)
    if token:
        request.dbsession.execute(delete(UserSession).where(UserSession.token_hash == digest(token)))
    response.delete_cookie(COOKIE_NAME, path="/")


def end_user_sessions(request: Request, user_id: int, keep_current: bool = False) -> None:
    query = delete(UserSession).where(UserSession.user_id == user_id)
    token = request.cookies.get(COOKIE_NAME)
    if keep_current and token:
        query = query.where(UserSession.token_hash != digest(token))
    request.dbsession.execute(query)
