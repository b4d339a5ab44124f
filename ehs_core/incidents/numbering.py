"""Gap-free incident numbers per organization (see IncidentCounter)."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ehs_core.incidents.models import IncidentCounter


def lock_counter(dbsession: Session, organization_id: int) -> int:
    """Lock the organization's counter row until commit and return the last
    number given out. Everything that decides on a new report (the clientId
    check, the number) happens under this lock. SQLite has no row locks but
    every transaction there begins IMMEDIATE, which serialises writers."""
    query = (select(IncidentCounter.last_number)
             .where(IncidentCounter.organization_id == organization_id).with_for_update())
    last = dbsession.execute(query).scalar()
    if last is None:
        try:
            with dbsession.begin_nested():
                dbsession.add(IncidentCounter(organization_id=organization_id, last_number=0))
        except IntegrityError:
            pass  # another request created it first
        last = dbsession.execute(query).scalar()
    return last


def next_incident_number(dbsession: Session, organization_id: int, last: int) -> int:
    number = last + 1
    dbsession.execute(update(IncidentCounter)
                      .where(IncidentCounter.organization_id == organization_id)
                      .values(last_number=number))
    return number
