"""The people involved in an incident (issue #39 item 4)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Date, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class IncidentPerson(Base):
    """Someone involved in an incident: injured, a witness, or other. Not a
    user of the service: a name as the one who wrote it down heard it, with
    a witness's statement in their own words (typed, or a photo of the paper
    statement kept as one of the incident's files)."""

    __tablename__ = "incident_people"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    involvement: Mapped[str] = mapped_column(String(20))
    employment_type: Mapped[str | None] = mapped_column(String(30), nullable=True)
    # Their part in what happened, in words ("forklift driver", "first aider").
    role: Mapped[str | None] = mapped_column(String(200), nullable=True)
    contact: Mapped[str | None] = mapped_column(String(200), nullable=True)
    statement_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    statement_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    statement_attachment_id: Mapped[int | None] = mapped_column(
        ForeignKey("attachments.id", ondelete="SET NULL"), nullable=True)
    # Who wrote the entry: a reporter sees only their own entries.
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
