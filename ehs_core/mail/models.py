from __future__ import annotations

import datetime as dt

from sqlalchemy import Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class FailedMail(Base):
    """A mail that will never be delivered: the SMTP server refused it for
    good (a 5xx answer), it could not be built, or every retry failed. Kept
    so admins see what was lost and who did not hear of it (the admin
    detail of `GET /api/health`). The body is not kept: it may hold a
    sign-in link, which the database stores only hashed."""

    __tablename__ = "failed_mail"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    recipient: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(Text)
    error: Mapped[str] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    failed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
