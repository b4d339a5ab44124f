from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class UserSession(Base):
    """A server-side session. Only the SHA-256 of the cookie's token is kept,
    so a copy of the database cannot be used to sign in."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class AuthToken(Base):
    """An emailed single-use token (magic link, password reset, invitation),
    stored hashed; `used_at` is set by the one request that consumes it."""

    __tablename__ = "auth_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    purpose: Mapped[str] = mapped_column(String(20))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RateLimitHit(Base):
    """One counted attempt. Kept in the database so limits hold across worker
    processes; a key's old rows are pruned as new ones arrive, and every
    expired row by the periodic purge (ratelimit.purge)."""

    __tablename__ = "rate_limit_hits"
    __table_args__ = (Index("ix_rate_limit_hits_key_at", "key", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(200))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class UserIdentity(Base):
    """A user's account at the organization's OpenID Provider: the issuer and
    its `sub`, which OpenID Connect Core 1.0 §5.7 names as the only stable,
    unique key of an end-user (an e-mail can be reassigned). Linked at the
    first sign-in by verified e-mail, matched by these two ever after."""

    __tablename__ = "user_identities"
    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_user_identities_issuer_subject"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    issuer: Mapped[str] = mapped_column(String(500))
    subject: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class OIDCRequest(Base):
    """A sign-in sent to the OpenID Provider and not yet back: what the
    answer must match (OAuth 2.0 Security BCP, RFC 9700 §4.7 and §2.1.1:
    `state` bound to this browser by a cookie, the PKCE verifier kept here,
    never sent through the browser; OIDC Core §3.1.2.1 `nonce`). Only the
    SHA-256 of `state` is kept; the row is used once and lives 10 minutes."""

    __tablename__ = "oidc_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    state_hash: Mapped[str] = mapped_column(String(64), unique=True)
    nonce: Mapped[str] = mapped_column(String(100))
    code_verifier: Mapped[str] = mapped_column(String(128))
    next_path: Mapped[str] = mapped_column(String(2000))
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, index=True)
