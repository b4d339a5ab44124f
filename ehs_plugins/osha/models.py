from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import (
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow
from ehs_core.incidents.models import Incident

# A case that may owe OSHA a direct report (1904.39) and was not reported:
# written as home's query writes it (`pages.cards`), so PostgreSQL sees
# that the query implies it.
SEVERE_UNREPORTED = ("reported_to_osha_at IS NULL AND (died IS true OR inpatient_hospitalization IS true "
                     "OR amputation IS true OR loss_of_eye IS true)")


class InjuryCase(Base):
    """One injured or ill person on an incident: the recordkeeping answers,
    the Form 301 data and the classification computed from the answers."""

    __tablename__ = "osha_cases"
    __table_args__ = (UniqueConstraint("incident_id", "sequence", name="uq_osha_cases_incident_sequence"),
                      # The few recordable cases still missing fields, for home's count (osha_0012).
                      Index("ix_osha_cases_incomplete", "incident_id", postgresql_where=text("incomplete"),
                            sqlite_where=text("incomplete")),
                      # Severe cases not yet reported to OSHA (1904.39), for home (osha_0012).
                      Index("ix_osha_cases_severe_unreported", "incident_id",
                            postgresql_where=text(SEVERE_UNREPORTED), sqlite_where=text(SEVERE_UNREPORTED)))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    # 1 for the incident's first person (case number INC-0042), 2 for INC-0042-2 …
    sequence: Mapped[int] = mapped_column(SmallInteger)
    name: Mapped[str] = mapped_column(String(200))
    # The injured person of the incident (ehs_core.people) the case was
    # started from: one case per injured person (osha_0011).
    person_id: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)

    employment_type: Mapped[str] = mapped_column(String(30), default="employee")
    work_related: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    new_case: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    died: Mapped[bool] = mapped_column(Boolean, default=False)
    date_of_death: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    days_away_from_work: Mapped[bool] = mapped_column(Boolean, default=False)
    days_away: Mapped[int] = mapped_column(Integer, default=0)
    restricted_or_transfer: Mapped[bool] = mapped_column(Boolean, default=False)
    days_restricted: Mapped[int] = mapped_column(Integer, default=0)
    medical_treatment: Mapped[bool] = mapped_column(Boolean, default=False)
    loss_of_consciousness: Mapped[bool] = mapped_column(Boolean, default=False)
    significant_diagnosis: Mapped[bool] = mapped_column(Boolean, default=False)
    special_case: Mapped[str] = mapped_column(String(30), default="none")
    case_type: Mapped[str | None] = mapped_column(String(30), nullable=True)
    privacy_case: Mapped[bool] = mapped_column(Boolean, default=False)
    inpatient_hospitalization: Mapped[bool] = mapped_column(Boolean, default=False)
    amputation: Mapped[bool] = mapped_column(Boolean, default=False)
    loss_of_eye: Mapped[bool] = mapped_column(Boolean, default=False)
    reported_to_osha_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)

    job_title: Mapped[str | None] = mapped_column(String(100), nullable=True)
    nature_of_injury: Mapped[str | None] = mapped_column(Text, nullable=True)
    body_part: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # The part of body as an OIICS 2.01 code (`bodyparts`); `body_part` holds
    # the words the forms print, prefilled from the code's title, editable.
    body_part_code: Mapped[str | None] = mapped_column(String(4), nullable=True)
    object_substance: Mapped[str | None] = mapped_column(Text, nullable=True)
    activity_before: Mapped[str | None] = mapped_column(Text, nullable=True)
    what_happened: Mapped[str | None] = mapped_column(Text, nullable=True)
    date_of_birth: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    date_of_hire: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    sex: Mapped[str | None] = mapped_column(String(1), nullable=True)
    employee_address: Mapped[str | None] = mapped_column(String(500), nullable=True)
    physician_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    treatment_facility: Mapped[str | None] = mapped_column(String(500), nullable=True)
    treated_in_emergency_room: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    time_started_work: Mapped[str | None] = mapped_column(String(5), nullable=True)
    # Form 301 item 13 "check if time cannot be determined" (ITA `time_unknown`).
    time_unknown: Mapped[bool] = mapped_column(Boolean, default=False)
    # When the employer learned of the event (or that it was work-related),
    # when later than the event: the 1904.39 clocks run from it ((b)(7), (b)(8)).
    learned_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Periods of days away and of restriction or transfer, as JSON text
    # ([{"kind": "away"|"restricted", "from": "YYYY-MM-DD", "to": ... | null}]);
    # when given, days_away and days_restricted are counted from them (days.py).
    periods: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Form 301 "Completed by / Title / Phone / Date".
    preparer_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    preparer_title: Mapped[str | None] = mapped_column(String(200), nullable=True)
    preparer_phone: Mapped[str | None] = mapped_column(String(40), nullable=True)
    prepared_at: Mapped[dt.date | None] = mapped_column(Date, nullable=True)

    # Computed from the answers on every write (recordability.classify).
    recordable: Mapped[bool] = mapped_column(Boolean, default=False)
    outcome: Mapped[str | None] = mapped_column(String(30), nullable=True)
    effective_case_type: Mapped[str | None] = mapped_column(String(30), nullable=True)
    effective_privacy: Mapped[bool] = mapped_column(Boolean, default=False)
    # A recordable case Form 301 or the ITA case file still needs fields of
    # (`cases.missing_fields` is not empty), set with the decision.
    incomplete: Mapped[bool] = mapped_column(Boolean, default=False)
    # When safety managers were told a direct report is due (sent once).
    severe_notice_sent_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class SiteHours(Base):
    """Hours actually worked and the average number of employees, per site
    and month (for the 300A and the rates)."""

    __tablename__ = "osha_site_hours"
    __table_args__ = (UniqueConstraint("site_id", "year", "month", name="uq_osha_site_hours_month"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"), index=True)
    year: Mapped[int] = mapped_column(SmallInteger)
    month: Mapped[int] = mapped_column(SmallInteger)
    hours: Mapped[Decimal | None] = mapped_column(Numeric(14, 2), nullable=True)
    average_employees: Mapped[Decimal | None] = mapped_column(Numeric(12, 2), nullable=True)


class Certification(Base):
    """The 300A's certification of one site and year (1904.32(b)(3)-(4)):
    a company executive certifies the summary; their name, title, phone
    and the date are written on the posted form."""

    __tablename__ = "osha_certifications"
    __table_args__ = (UniqueConstraint("site_id", "year", name="uq_osha_certifications_site_year"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"), index=True)
    year: Mapped[int] = mapped_column(SmallInteger)
    executive_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    executive_title: Mapped[str | None] = mapped_column(String(200), nullable=True)
    phone: Mapped[str | None] = mapped_column(String(40), nullable=True)
    certified_on: Mapped[dt.date | None] = mapped_column(Date, nullable=True)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class PdfJob(Base):
    """A printable form's PDF made in the background (a 300 Log or the
    Forms 301 of a site-year with more sheets than a request should lay out):
    its progress while the worker makes it, then the file, kept for a day
    (`pdfjobs.KEEP`) and given only to safety managers of its organization."""

    __tablename__ = "osha_pdf_jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Unguessable: the job's pages and file are reached by it (and checked).
    token: Mapped[str] = mapped_column(String(64), unique=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    requested_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    kind: Mapped[str] = mapped_column(String(20))  # "log300" or "forms301"
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"))
    year: Mapped[int] = mapped_column(SmallInteger)
    status: Mapped[str] = mapped_column(String(10), default="queued")  # queued, running, done, failed
    sheets_done: Mapped[int] = mapped_column(Integer, default=0)
    sheets_total: Mapped[int] = mapped_column(Integer, default=0)
    filename: Mapped[str] = mapped_column(String(200))
    # Read on download only (the progress page polls the row).
    pdf: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    # Touched at each step: an unfinished job left untouched for long is stale (its worker died).
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


# The 300 Log reads a site's incidents of one year (log.load); the index is on
# the core's table and comes and goes with this plugin (migration osha_0004).
Index("ix_osha_incidents_site_occurred", Incident.site_id, Incident.occurred_at)
# Home's injuries and illnesses of the year without a case (`pages.cards`):
# the organization's incidents of those types by date, read from the index
# alone (migration osha_0012).
Index("ix_osha_incidents_injured", Incident.organization_id, Incident.occurred_at,
      postgresql_include=["id", "number"], postgresql_where=text("type IN ('injury', 'illness')"),
      sqlite_where=text("type IN ('injury', 'illness')"))


class AccessRequest(Base):
    """A request for a copy of the records, 29 CFR 1904.35(b)(2): an
    employee, former employee or personal representative asks for the 300
    Log (`log_copy`) or their own Form 301 (`own_301`), due by the end of the
    next business day; an authorized employee representative asks for the
    301s' "about the case" part (`representative_301`), due within 7
    calendar days. Fulfilling it records when and to whom the copy was given."""

    __tablename__ = "osha_access_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    kind: Mapped[str] = mapped_column(String(30))
    requester_name: Mapped[str] = mapped_column(String(200))
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"))
    year: Mapped[int] = mapped_column(SmallInteger)
    case_id: Mapped[int | None] = mapped_column(ForeignKey("osha_cases.id", ondelete="SET NULL"),
                                                nullable=True)
    received_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    due_by: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    fulfilled_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    given_to: Mapped[str | None] = mapped_column(String(200), nullable=True)
    fulfilled_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)


class ItaSubmission(Base):
    """One filing of a site-year with OSHA's Injury Tracking Application
    through its API (1904.41), made by a job: a dry run against OSHA's
    preview environment or the real filing; OSHA's answer is kept (its
    confirmation, or the errors it named)."""

    __tablename__ = "osha_ita_submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"))
    year: Mapped[int] = mapped_column(SmallInteger)
    dry_run: Mapped[bool] = mapped_column(Boolean, default=True)
    # queued, running, accepted (OSHA took it), refused (OSHA named errors), failed (no answer)
    status: Mapped[str] = mapped_column(String(10), default="queued")
    change_reason: Mapped[str | None] = mapped_column(String(100), nullable=True)
    with_case_data: Mapped[bool] = mapped_column(Boolean, default=False)
    confirmation: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # OSHA's answers as JSON text: the errors it named, the ids it gave.
    errors: Mapped[str | None] = mapped_column(Text, nullable=True)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    requested_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RemovedCase(Base):
    """An injury case a safety manager removed from the log (`DELETE
    /api/osha/cases/:id`): out of the log, the totals and the forms, but
    kept whole, with who removed it and when, for the five years after the
    end of its calendar year that 29 CFR 1904.33 says the records are kept
    (issue 35: a case could be hard-deleted). Its audit entries stay on its
    incident's trail as before."""

    __tablename__ = "osha_removed_cases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(Integer, index=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    # Every column of the case as it was, as JSON (dates and instants in ISO 8601).
    data: Mapped[str] = mapped_column(Text)
    removed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    removed_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
