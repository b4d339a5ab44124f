"""What is owed to a regulator: one row per obligation, whatever rule owes it
(a federal or state report, a copy of a record asked for by an employee),
with its clock and how it was closed."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class ObligationStatus(StrEnum):
    open = "open"
    done = "done"
    waived = "waived"


class Obligation(Base):
    """An obligation of a registered kind on a subject (an incident, a case,
    a request: `subject` names it, e.g. "incident:12"), due at `due_at`.
    `reminded_at` and `alerted_at` mark the reminder and the overdue alert
    as sent, so each goes out once whoever runs the job."""

    __tablename__ = "obligations"
    __table_args__ = (
        UniqueConstraint("organization_id", "kind", "subject", name="uq_obligations_kind_subject"),
        # The queue (open ones by due time) and the reminder job.
        Index("ix_obligations_org_status_due", "organization_id", "status", "due_at"),
        Index("ix_obligations_status_remind", "status", "remind_at"),
        Index("ix_obligations_incident_id", "incident_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    kind: Mapped[str] = mapped_column(String(60))
    subject: Mapped[str] = mapped_column(String(80))
    title: Mapped[str] = mapped_column(String(200))
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), nullable=True)
    site_id: Mapped[int | None] = mapped_column(ForeignKey("sites.id"), nullable=True)
    due_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    remind_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(10), default=ObligationStatus.open)
    done_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    done_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    # How it was fulfilled (a confirmation number, who was called), or why it was waived.
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    reminded_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    alerted_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
