from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, SmallInteger, String, text
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class SavedView(Base):
    """A named set of filters for the incident list or the analytics page,
    private to its owner unless shared."""

    __tablename__ = "analytics_saved_views"
    __table_args__ = (Index("ix_analytics_saved_views_page_owner", "page", "owner_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    page: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(200))
    filters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Tally(Base):
    """A sum kept for the statistics of callers who see every incident: how
    many incidents (root causes, actions, injury cases) of one site and
    type, in one local month of the site, fall under one key of one figure
    (`kind`), with the sums that figure needs. Kept by `tallies` from the
    incidents' events, in the same transaction as the change; rebuilt by
    `rebuild.rebuild`.

    kind      month                    k1 / k2                     n / total / closed
    count     of occurrence            - / -                       incidents / close µs / closed
    place     of occurrence            - / area (0: none)          incidents / close µs / closed
    severity  of occurrence            severity / -                incidents
    heat      of occurrence            - / hour of the week        incidents
    status    0 (all time)             status / -                  incidents / close µs / closed
    cause     of occurrence            category / -                root causes
    case      of occurrence            - / DART 1 + lost 2         recordable cases / days away
    body      of occurrence            part of the body / -        injured or ill people
                                       ("": not coded yet)
    action    of the due date          on_time, late, pending      actions
              (calendar)               / due day if pending
    action.d  the same per due day     on_time, late, pending      actions
                                       / day of the due date
    The kinds ending in z sum all the sites of one zone (site 0, `type`
    the zone's name), for the figures asked without a site or type:
    heatz     of occurrence            - / hour of the week        incidents
    causez    of occurrence            category / -                root causes
    place, severity, heat, heatz, cause, causez and body are also kept per
    quarter (kind.q, month: the quarter's first) and year (kind.y, month:
    January's), so a period of years reads a few rows per year.
    Months are numbered year x 12 + month - 1, in the site's zone (the
    server's for a site without one): the month an instant falls in is the
    one between the UTC instants its first and the next month's first local
    midnight.

    A tally may be kept in several rows (`shard`) that add up to it: the
    statistics always sum."""

    __tablename__ = "analytics_tallies"

    organization_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(10), primary_key=True)
    month: Mapped[int] = mapped_column(Integer, primary_key=True)
    site_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(String(64), primary_key=True)  # or a zone's name
    k1: Mapped[str] = mapped_column(String(100), primary_key=True)
    k2: Mapped[int] = mapped_column(Integer, primary_key=True)
    # A tally is the sum of its shards' rows (analytics_0004): concurrent
    # writers move different rows. PostgreSQL's default is the writing
    # transaction's id modulo 16 (set by the migration); SQLite writes 0.
    shard: Mapped[int] = mapped_column(SmallInteger, primary_key=True, server_default=text("0"))
    n: Mapped[int] = mapped_column(BigInteger, default=0)
    total: Mapped[int] = mapped_column(BigInteger, default=0)
    closed: Mapped[int] = mapped_column(BigInteger, default=0)


class CountedIncident(Base):
    """What one incident adds to the tallies (its `state`: the counted
    fields and a summary of its root causes, actions and cases; see
    `counted_state.State`), and the site zone it was placed in. A change re-reads
    the incident, computes its new state and moves the difference; this row
    is locked meanwhile, so concurrent changes of one incident queue."""

    __tablename__ = "analytics_counted"
    __table_args__ = (Index("ix_analytics_counted_organization", "organization_id"),)

    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), primary_key=True)
    organization_id: Mapped[int] = mapped_column(Integer)
    zone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    state: Mapped[dict[str, Any]] = mapped_column(JSON)


class TallyState(Base):
    """Per organization: the tallies are complete, counted with this server
    zone (setting TZ: the zone of sites without one, and the day an action
    is due by). With no row, or another zone, statistics read the rows."""

    __tablename__ = "analytics_tally_state"

    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    server_zone: Mapped[str] = mapped_column(String(64))
    built_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
