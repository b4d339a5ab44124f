from __future__ import annotations

import datetime as dt
from enum import StrEnum

from sqlalchemy import Date, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class ActionStatus(StrEnum):
    open = "open"
    in_progress = "in_progress"
    done = "done"
    verified = "verified"
    cancelled = "cancelled"


# Statuses in which an action is still to be done (and can be overdue).
PENDING = (ActionStatus.open, ActionStatus.in_progress)


class CorrectiveAction(Base):
    __tablename__ = "corrective_actions"
    __table_args__ = (
        Index("ix_corrective_actions_assignee_status", "assignee_id", "status"),
        Index("ix_corrective_actions_incident_id", "incident_id"),
        # Pending actions (overview) and actions due in a period (analytics).
        Index("ix_corrective_actions_status_due_date", "status", "due_date"),
        Index("ix_corrective_actions_due_date", "due_date"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"))
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    kind: Mapped[str | None] = mapped_column(String(50), nullable=True)
    assignee_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    due_date: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    root_cause_id: Mapped[int | None] = mapped_column(
        ForeignKey("root_causes.id", ondelete="SET NULL"), nullable=True)
    status: Mapped[str] = mapped_column(String(20), default=ActionStatus.open)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # When it was last marked done (for "closed on time" figures).
    done_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
