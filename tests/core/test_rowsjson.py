"""The rows that hang off an incident, read as one JSON column
(`ehs_core.rowsjson`), come back with the same values the ORM reads, on
SQLite and PostgreSQL alike: instants in UTC, dates, flags, JSON documents,
nulls, and in their order."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from sqlalchemy import select

from ehs_core.audit.models import AuditEntry
from ehs_core.incidents.models import Incident
from ehs_core.investigation.models import RootCause
from ehs_core.rowsjson import DOCUMENT, INSTANT, columns_of, decoder, json_rows
from ehs_core.testing import file_report


class CauseRow(NamedTuple):
    id: int
    category: str
    whys: list[str] | None
    created_at: dt.datetime


class EntryRow(NamedTuple):
    id: int
    at: dt.datetime
    action: str
    changes: dict[str, Any] | None


def read(dbsession, row, model, number, **kinds):
    column = select(json_rows(*columns_of(row, model))).where(
        model.incident_id == Incident.id).scalar_subquery()
    value = dbsession.execute(select(column).where(Incident.number == number)).scalar()
    return decoder(row, **kinds)(value)


def test_rows_come_back_as_the_orm_reads_them(admin, site, dbsession):
    number = file_report(admin, site).json["number"]
    incident = dbsession.execute(select(Incident).where(Incident.number == number)).scalar_one()
    assert read(dbsession, CauseRow, RootCause, number, whys=DOCUMENT, created_at=INSTANT) == []
    moments = [dt.datetime(2026, 3, 1, 8, 15, 30, 250000, tzinfo=dt.UTC),
               dt.datetime(2026, 3, 1, 8, 15, tzinfo=dt.UTC)]
    for category, whys, at in (("Équipement ünïcode", ["Why \"1\"?", "Because\nof it"], moments[0]),
                               ("Training", None, moments[1])):
        dbsession.add(RootCause(incident_id=incident.id, category=category, description="d",
                                whys=whys, created_at=at))
    dbsession.flush()
    expected = [CauseRow(c.id, c.category, c.whys, c.created_at) for c in dbsession.execute(
        select(RootCause).where(RootCause.incident_id == incident.id).order_by(RootCause.id)).scalars()]
    found = read(dbsession, CauseRow, RootCause, number, whys=DOCUMENT, created_at=INSTANT)
    assert found == expected
    assert found[0].created_at == moments[0] and found[0].created_at.tzinfo is not None


def test_rows_are_ordered_by_the_fields_asked(admin, site, dbsession):
    number = file_report(admin, site).json["number"]
    incident = dbsession.execute(select(Incident).where(Incident.number == number)).scalar_one()
    early = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    dbsession.add(AuditEntry(incident_id=incident.id, at=early, action="backdated",
                             changes={"status": {"old": None, "new": "reported"}}))
    dbsession.flush()
    by_id = read(dbsession, EntryRow, AuditEntry, number, at=INSTANT, changes=DOCUMENT)
    assert by_id[-1].action == "backdated"  # the newest row
    by_time = read(dbsession, EntryRow, AuditEntry, number, order=("at", "id"), at=INSTANT, changes=DOCUMENT)
    assert by_time[0].action == "backdated" and by_time[0].at == early
    assert by_time[0].changes == {"status": {"old": None, "new": "reported"}}
    assert sorted(by_id) == sorted(by_time)
