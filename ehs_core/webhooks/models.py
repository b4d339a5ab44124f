"""Webhook endpoints and their deliveries."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class WebhookEndpoint(Base):
    """Where an admin asked events to be sent. The signing secret is kept
    as it is (`whsec_…`): an HMAC needs the key itself, so it cannot be
    hashed like a password, and the service has no key of its own to
    encrypt it with that would not sit beside it. Whoever can read the
    database can sign as the service; the secret is shown once, at
    creation, and never again by the API."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    url: Mapped[str] = mapped_column(String(2000))
    description: Mapped[str | None] = mapped_column(String(500), nullable=True)
    events: Mapped[list[str]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(100))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # Why the service switched it off (it kept failing); None when an admin did.
    disabled_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # Deliveries that failed for good one after another; any success resets it.
    failures_in_row: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class WebhookDelivery(Base):
    """One event for one endpoint, written in the transaction of the change
    (none for a change rolled back), sent after commit and retried with
    backoff until it is delivered or its last try failed. `message_id` is
    the `webhook-id` of every attempt (receivers deduplicate by it);
    `payload` is the body's data as the transaction knew it, `body` the
    exact bytes sent, fixed at the first attempt (fields given only at
    COMMIT, an incident's number, are filled in then)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"),
                                             index=True)
    message_id: Mapped[str] = mapped_column(String(60), unique=True)
    event_type: Mapped[str] = mapped_column(String(100))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    body: Mapped[str | None] = mapped_column(Text, nullable=True)
    # pending (waiting for its next attempt), delivered, failed (for good)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_attempt_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
