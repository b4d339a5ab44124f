from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class Attachment(Base):
    __tablename__ = "attachments"
    __table_args__ = (Index("uq_attachments_incident_id_client_id", "incident_id", "client_id", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    # The name the uploader gave (cleaned); the bytes live under a generated name.
    filename: Mapped[str] = mapped_column(String(255))
    storage_name: Mapped[str] = mapped_column(String(64), unique=True)
    content_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(Integer)
    uploaded_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Set when the file is evidence that a corrective action was done.
    action_id: Mapped[int | None] = mapped_column(ForeignKey("corrective_actions.id"), nullable=True,
                                                  index=True)
    # The uploader's idempotency key (a UUID): the same file sent again
    # after a dropped connection is stored once (migration 0021).
    client_id: Mapped[str | None] = mapped_column(String(64), nullable=True)


class AttachmentChunk(Base):
    """A piece of an attachment's bytes when `ehs.storage` is `database`.

    Keyed by the attachment's `storage_name` rather than its id: the bytes
    are written before the attachment row exists, in the same transaction,
    so an aborted upload takes both away (no orphan)."""

    __tablename__ = "attachment_chunks"

    storage_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
