from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class KioskLink(Base):
    """A reporting link. Its token is shown to safety managers (the spec lists
    links "including their tokens"), so it is kept as is; it can only file
    reports, and revoking the link stops it at once."""

    __tablename__ = "kiosk_links"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    site_id: Mapped[int | None] = mapped_column(ForeignKey("sites.id"), nullable=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class KioskReport(Base):
    """Marks an incident as filed through a link, with the name the person
    chose to give (none: the report is anonymous)."""

    __tablename__ = "kiosk_reports"

    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), primary_key=True)
    kiosk_id: Mapped[int] = mapped_column(ForeignKey("kiosk_links.id"), index=True)
    reporter_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
