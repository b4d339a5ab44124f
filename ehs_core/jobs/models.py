from __future__ import annotations

import datetime as dt

from sqlalchemy import Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow

PENDING, DONE, FAILED = "pending", "done", "failed"


class OutboxJob(Base):
    """A job someone's action (or the clock) caused, written in the
    transaction that caused it: a mail to send, a PDF to make, a purge. If
    that transaction commits the job exists; if it rolls back it does not.
    The runners (`ehs worker`, or the web process's own thread) claim due
    rows, run them and mark them done; a failure is retried with back-off
    and, when it can never succeed, marked failed (mail: also kept in
    `failed_mail` for admins). `job` names a function registered with
    `add_job`; `payload` is its JSON arguments, fixed when the row was
    written (a mail's Message-ID included, so a repeat after a killed
    runner is recognisable). `key`, when set, is unique: a periodic job's
    period ("actions.digest@2026-11-28T07:00Z"), so it runs once across
    hosts. `claimed_until` is a runner's lease on the row while it runs
    it; a runner that dies leaves the row to be claimed again once the
    lease ends (at-least-once)."""

    __tablename__ = "outbox_jobs"
    __table_args__ = (Index("ix_outbox_jobs_status_due_at", "status", "due_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job: Mapped[str] = mapped_column(String(100))
    payload: Mapped[str] = mapped_column(Text, default="[]")
    key: Mapped[str | None] = mapped_column(String(200), unique=True, nullable=True)
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(10), default=PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    due_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    claimed_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


class JobRunnerBeat(Base):
    """When each runner last looked for due jobs (one row per host and
    process): readiness answers 503 when none has for too long
    (`ehs.ready_runner_age`)."""

    __tablename__ = "job_runner_beats"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    beat_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
