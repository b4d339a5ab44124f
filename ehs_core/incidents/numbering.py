"""Gap-free incident numbers per organization (see IncidentCounter).

Taking a number locks the organization's counter row until commit: that is
what makes numbers gap-free (a rollback gives the number back) and it
serialises every report of the organization. So a report is stored first,
without its number, and takes the number as the last thing before commit
(`take_number`); the lock then covers one UPDATE and the commit, not the
whole request. Measured at 100,000 incidents (bench/README.md): creating
was bound by this lock at about 70 reports per second while the number was
taken first.
"""

from __future__ import annotations

from typing import Any

from pyramid.events import subscriber
from sqlalchemy import event, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ehs_core.events import OrganizationCreated
from ehs_core.incidents.models import Incident, IncidentCounter


@subscriber(OrganizationCreated)
def start_numbering(created: OrganizationCreated) -> None:
    """A new organization's counter, so its first report takes number 1
    without creating it (`take_number` still copes if it is missing)."""
    created.request.dbsession.add(IncidentCounter(organization_id=created.organization.id, last_number=0))


def take_number(dbsession: Session, organization_id: int) -> int:
    """The organization's next number; its counter row stays locked until
    commit. SQLite has no row locks, but every transaction there begins
    IMMEDIATE, which serialises writers."""
    query = (update(IncidentCounter).where(IncidentCounter.organization_id == organization_id)
             .values(last_number=IncidentCounter.last_number + 1)
             .returning(IncidentCounter.last_number))
    number = dbsession.execute(query).scalar()
    if number is None:
        try:
            with dbsession.begin_nested():
                dbsession.add(IncidentCounter(organization_id=organization_id, last_number=0))
        except IntegrityError:
            pass  # another request created it first
        number = dbsession.execute(query).scalar()
    return number


@event.listens_for(Session, "before_commit")
def _refuse_unnumbered(dbsession: Session, *_: Any) -> None:
    """An incident is stored without a number only for the moment between
    filing and `take_number` in the same transaction; committing it like that
    would be a bug that loses the report's identity, so it fails instead."""
    if dbsession.in_nested_transaction():
        return  # a savepoint, not the commit
    for obj in (*dbsession.new, *dbsession.identity_map.values()):
        if isinstance(obj, Incident) and obj.number is None:
            raise RuntimeError(f"incident {obj.id} would be committed without a number")
