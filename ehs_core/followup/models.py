"""The follow-up of a report filed without a name: the hash of its code and
the messages between the safety team and the reporter.

Nothing here says who the reporter is: no user, address, device or browser
detail is kept with the code or with the reporter's messages (spec: an
anonymous report records its reporter nowhere; issue #39 item 3)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow

#: A message the team wrote to the reporter, and one the reporter wrote back.
TO_REPORTER = "to_reporter"
FROM_REPORTER = "from_reporter"


class FollowUpCode(Base):
    """The code of one report, kept only as its SHA-256 (the code itself is
    shown once, in the answer that files the report)."""

    __tablename__ = "follow_up_codes"

    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"),
                                             primary_key=True, autoincrement=False)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class FollowUpMessage(Base):
    """One message of a report's thread. `author_id` names the team member
    who wrote to the reporter; a reporter's message has none."""

    __tablename__ = "follow_up_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"), index=True)
    direction: Mapped[str] = mapped_column(String(20))
    body: Mapped[str] = mapped_column(Text)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
