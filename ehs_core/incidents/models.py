from __future__ import annotations

import datetime as dt
from enum import StrEnum

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class IncidentType(StrEnum):
    near_miss = "near_miss"
    hazard = "hazard"
    injury = "injury"
    illness = "illness"
    property_damage = "property_damage"
    environmental = "environmental"


class Severity(StrEnum):
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"


class Status(StrEnum):
    reported = "reported"
    triage = "triage"
    investigation = "investigation"
    actions = "actions"
    verification = "verification"
    closed = "closed"


class IncidentCounter(Base):
    """The last incident number given out, per organization. Taking a number
    updates this row in the creating transaction: the row lock serialises
    concurrent reports and a rollback returns the number, so numbers have no
    gaps and no duplicates (a sequence would leave gaps)."""

    __tablename__ = "incident_counters"

    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    last_number: Mapped[int] = mapped_column(Integer, default=0)


UNDER_INVESTIGATION = text("status = 'investigation'")


class Incident(Base):
    __tablename__ = "incidents"
    __table_args__ = (
        UniqueConstraint("organization_id", "number", name="uq_incidents_org_number"),
        UniqueConstraint("organization_id", "client_id", name="uq_incidents_org_client_id"),
        Index("ix_incidents_reporter_id", "reporter_id"),
        Index("ix_incidents_site_status", "site_id", "status"),
        # The list's filters, newest first: each serves both the page (read
        # backwards on number) and its total (an index-only count).
        Index("ix_incidents_org_site_type_number", "organization_id", "site_id", "type", "number"),
        Index("ix_incidents_org_type_number", "organization_id", "type", "number"),
        Index("ix_incidents_org_severity_number", "organization_id", "severity", "number"),
        # With the id beside (PostgreSQL): the menu's and home page's queues
        # check each incident under investigation without reading it.
        Index("ix_incidents_org_status_number", "organization_id", "status", "number",
              postgresql_include=["id"]),
        # The investigations waiting for a person (no lead, or theirs): only
        # the incidents under investigation, by their investigation's lead.
        Index("ix_incidents_investigation_lead", "organization_id", "investigation_lead_id",
              postgresql_where=UNDER_INVESTIGATION, sqlite_where=UNDER_INVESTIGATION),
        # Statistics, the OSHA log and rates select by when incidents occurred.
        Index("ix_incidents_org_occurred", "organization_id", "occurred_at"),
        # Home's serious incidents of the last 30 days (reported or occurred
        # since): with the one above, a BitmapOr of the two ranges instead of
        # every high and critical incident (migration 0029_perfdata_home_index).
        Index("ix_incidents_org_created", "organization_id", "created_at"),
        # The list's `q` filter (ILIKE '%…%' on PostgreSQL): trigram indexes
        # there (pg_trgm; updated at each write rather than through GIN's
        # pending list, which queries would have to scan); plain ones on
        # SQLite, which has no such index type.
        *(Index(f"ix_incidents_{column}_trgm", column, postgresql_using="gin",
                postgresql_ops={column: "gin_trgm_ops"}, postgresql_with={"fastupdate": "off"})
          for column in ("title", "description", "location_detail")),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    # Given as the last step of filing, in the same transaction (numbering.py):
    # None only in between, never committed.
    number: Mapped[int] = mapped_column(Integer, nullable=True)
    title: Mapped[str] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(30))
    severity: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20), default=Status.reported)
    # The instant in UTC plus the reporter's offset, so it is shown as given.
    occurred_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    occurred_offset_minutes: Mapped[int] = mapped_column(SmallInteger, default=0)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"))
    area_id: Mapped[int | None] = mapped_column(ForeignKey("areas.id"), nullable=True)
    location_detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    immediate_action: Mapped[str | None] = mapped_column(Text, nullable=True)
    anonymous: Mapped[bool] = mapped_column(Boolean, default=False)
    # None for anonymous reports: the reporter is recorded nowhere.
    reporter_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    client_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    # Who may replay the clientId: "user:<id>" for a named report, "user"
    # for an anonymous one (any signed-in caller holding the clientId, so
    # the reporter stays unrecorded), "kiosk:<id>" for a reporting link.
    client_filer: Mapped[str | None] = mapped_column(String(40), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    closed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # A copy of the investigation's lead, kept by `investigation.services`
    # (the one place that sets a lead), so that "under investigation and
    # waiting for me" reads one small index instead of checking the
    # investigation of every incident under investigation. Not part of the incident's JSON.
    investigation_lead_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    @property
    def reference(self) -> str | None:
        return reference(self.number) if self.number is not None else None


def reference(number: int) -> str:
    return f"INC-{number:04d}"


class Comment(Base):
    __tablename__ = "comments"
    __table_args__ = (Index("uq_comments_incident_id_client_id", "incident_id", "client_id", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    body: Mapped[str] = mapped_column(Text)
    # Set when the comment is the note of a workflow transition.
    transition_to: Mapped[str | None] = mapped_column(String(20), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The sender's idempotency key (a UUID): the same comment sent again
    # after a dropped connection is stored once (migration 0021).
    client_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
