from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ehs_core.db import Base, UTCDateTime, utcnow


class Organization(Base):
    """The one organization of an installation, created by setup."""

    __tablename__ = "organizations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Bumped by every change to the sites, areas, users and other reference
    # data the workers keep in memory (`ehs_core.refdata`).
    reference_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    # Stored lower-cased (see normalize_email), unique across the installation.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # None until the user sets a password (invited users, magic-link only users).
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The kinds of follow-up mail this person turned off (`mail.choices`).
    mail_off: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # The language this person reads pages and mail in ("en", "es": a
    # shipped locale, `ehs_core.ui.SHIPPED_LOCALES`); None: the
    # installation's default (`pyramid.default_locale_name`).
    locale: Mapped[str | None] = mapped_column(String(10), nullable=True)
    # The sites this person works at; none means all of them.
    site_links: Mapped[list[UserSite]] = relationship(lazy="select", cascade="all, delete-orphan",
                                                      order_by="UserSite.site_id")

    @property
    def site_ids(self) -> list[int]:
        return [link.site_id for link in self.site_links]


class UserSite(Base):
    """A site a person works at: where their queues and lists open, and
    whose serious reports a supervisor hears of."""

    __tablename__ = "user_sites"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id", ondelete="CASCADE"), primary_key=True,
                                         index=True)


def normalize_email(email: str) -> str:
    return email.strip().lower()


def user_json(user: User) -> dict:
    return {"id": user.id, "name": user.name, "email": user.email, "role": user.role,
            "active": user.active, "siteIds": user.site_ids, "locale": user.locale}
