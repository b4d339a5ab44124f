"""The California plugin's records: the facts that make an injury serious
under Title 8 CCR §342(a), the violent incident log's entries (Labor Code
§6401.9(d)) and employees' requests for a copy of that log."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, Date, ForeignKey, Integer, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class SeriousFacts(Base):
    """What decides whether an incident owes Cal/OSHA the 8-hour report: a
    death, an in-patient hospitalization (its hours, and whether it was for
    observation only), the loss of a member of the body, a serious degree of
    permanent disfigurement; and when the employer learned of it."""

    __tablename__ = "calosha_serious_facts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), unique=True)
    died: Mapped[bool] = mapped_column(Boolean, default=False)
    inpatient_hours: Mapped[int | None] = mapped_column(Integer, nullable=True)
    observation_only: Mapped[bool] = mapped_column(Boolean, default=False)
    lost_member: Mapped[bool] = mapped_column(Boolean, default=False)
    disfigurement: Mapped[bool] = mapped_column(Boolean, default=False)
    learned_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)


class ViolentIncident(Base):
    """An incident's entry in the violent incident log. `people` holds the
    names of those involved as the supervisor knows them: never shown in
    the log, only used to take them out of its text. Entries are kept (no
    route deletes one): the log covers five years (§6401.9(f)(2))."""

    __tablename__ = "calosha_violent_incidents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), unique=True)
    violence_type: Mapped[int] = mapped_column(SmallInteger)
    kinds: Mapped[list[str]] = mapped_column(JSON)
    perpetrator_relation: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text)
    circumstances: Mapped[str] = mapped_column(Text)
    where: Mapped[str] = mapped_column(Text)
    consequences: Mapped[str] = mapped_column(Text)
    security_called: Mapped[bool] = mapped_column(Boolean)
    police_called: Mapped[bool] = mapped_column(Boolean)
    actions_taken: Mapped[str | None] = mapped_column(Text, nullable=True)
    people: Mapped[list[str]] = mapped_column(JSON)
    completed_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    completed_by_title: Mapped[str] = mapped_column(String(200))
    completed_on: Mapped[dt.date] = mapped_column(Date)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class LogRequest(Base):
    """An employee's request for a copy of the violent incident log, due
    within 15 calendar days (§6401.9(f)(3) via the obligation it opens)."""

    __tablename__ = "calosha_log_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    site_id: Mapped[int | None] = mapped_column(ForeignKey("sites.id"), nullable=True)
    requested_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    requester: Mapped[str] = mapped_column(String(200))
    requested_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
