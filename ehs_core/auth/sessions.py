"""Server-side sessions in the `service_session` cookie.

Every sign-in issues a fresh random token (no fixation); the database keeps
only its hash. Sessions end after 12 hours without use or 30 days after
sign-in, whichever comes first; logout, password changes and deactivation
delete them server-side, so a replayed cookie is refused.
"""

from __future__ import annotations

import datetime as dt

from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import delete, select

from ehs_core.auth.models import UserSession
from ehs_core.auth.tokens import digest, new_secret
from ehs_core.db import utcnow
from ehs_core.security import Identity, user_principals
from ehs_core.users.models import User

COOKIE_NAME = "service_session"
IDLE_TIMEOUT = dt.timedelta(hours=12)
ABSOLUTE_TIMEOUT = dt.timedelta(days=30)
# Recording activity costs a write; once a minute is precise enough.
TOUCH_INTERVAL = dt.timedelta(minutes=1)


def session_identity(request: Request) -> Identity | None:
    token = request.cookies.get(COOKIE_NAME)
    if not token or len(token) > 200:
        return None
    row = request.dbsession.execute(
        select(UserSession, User)
        .join(User, User.id == UserSession.user_id)
        .where(UserSession.token_hash == digest(token))
    ).first()
    if row is None:
        return None
    session, user = row
    now = utcnow()
    if (not user.active or now - session.last_seen_at > IDLE_TIMEOUT
            or now - session.created_at > ABSOLUTE_TIMEOUT):
        return None
    if now - session.last_seen_at > TOUCH_INTERVAL:
        session.last_seen_at = now
    return Identity(kind="user", id=user.id, principals=user_principals(user.id, user.role),
                    user=user, session=session)


def start_session(request: Request, response: Response, user: User) -> None:
    """Sign `user` in on `response`, replacing any session this browser had."""
    old = request.cookies.get(COOKIE_NAME)
    if old:
        request.dbsession.execute(delete(UserSession).where(UserSession.token_hash == digest(old)))
    token = new_secret()
    request.dbsession.add(UserSession(token_hash=digest(token), user_id=user.id))
    response.set_cookie(
        COOKIE_NAME, token, httponly=True, samesite="Lax", path="/",
        secure=request.registry.settings["ehs.session_secure"],
        max_age=int(ABSOLUTE_TIMEOUT.total_seconds()),
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
