"""Random secrets (session tokens, emailed tokens) and their stored form.

Tokens carry 256 bits from `secrets`; only their SHA-256 is stored, so a
database copy holds nothing that signs anyone in (ASVS 5 6.5.2-6.5.3)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ehs_core.auth.models import AuthToken
from ehs_core.db import utcnow


class TokenPurpose(StrEnum):
    magic_link = "magic_link"
    password_reset = "password_reset"  # noqa: S105 (a purpose, not a secret)
    invitation = "invitation"


LIFETIMES = {
    TokenPurpose.magic_link: dt.timedelta(minutes=15),
    TokenPurpose.password_reset: dt.timedelta(hours=1),
    TokenPurpose.invitation: dt.timedelta(days=7),
}


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(dbsession: Session, user_id: int, purpose: TokenPurpose) -> str:
    secret = new_secret()
    dbsession.add(AuthToken(token_hash=digest(secret), purpose=purpose, user_id=user_id,
                            expires_at=utcnow() + LIFETIMES[purpose]))
    return secret


def retire_tokens(dbsession: Session, user_id: int) -> None:
    """A new password makes earlier sign-in and reset links useless."""
    dbsession.execute(update(AuthToken).where(AuthToken.user_id == user_id, AuthToken.used_at.is_(None))
                      .values(used_at=utcnow()))


def consume_token(dbsession: Session, secret: str, purposes: tuple[TokenPurpose, ...]) -> int | None:
    """Mark the token used and return its user id, or None if it is unknown,
    expired or already used. One conditional UPDATE: of two concurrent
    requests with the same token exactly one changes the row."""
    now = utcnow()
    result = dbsession.execute(
        update(AuthToken)
        .where(AuthToken.token_hash == digest(secret), AuthToken.purpose.in_(purposes),
               AuthToken.used_at.is_(None), AuthToken.expires_at > now)
        .values(used_at=now)
        .returning(AuthToken.user_id)
    ).first()
    return result[0] if result else None


def token_is_live(dbsession: Session, secret: str, purposes: tuple[TokenPurpose, ...]) -> bool:
    """Whether the link would still work, without using it up: the page an
    emailed link opens says at once that a link was used, expired or
    replaced by a newer one, instead of taking a password first."""
    if not secret:
        return False
    found = dbsession.execute(
        select(AuthToken.id).where(AuthToken.token_hash == digest(secret), AuthToken.purpose.in_(purposes),
                                   AuthToken.used_at.is_(None), AuthToken.expires_at > utcnow())
    ).first()
    return found is not None
