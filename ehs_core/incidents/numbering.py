"""Gap-free incident numbers per organization (see IncidentCounter).

Taking a number locks the organization's counter row until commit (an
`UPDATE … RETURNING` of the counter: PostgreSQL's row lock, SQLite's write
lock taken at BEGIN IMMEDIATE): that is what makes numbers gap-free (a
rollback gives the number back) and it serialises every report of the
organization. There is one path, the same for every face, every database
and the test suite: `filing.file_incident` stores the report and numbers it
at once, inside the transaction that files it, so the answer, the audit
entry and the notice (written to the outbox in that transaction) all carry
the number, and no answer or mail is ever built without one (issue 35:
numbering in COMMIT and reading the number back afterwards answered
`"number": null` after a PostgreSQL restart). The lock then covers the rest
of the filing transaction: a few milliseconds, far above the service's
need (a few hundred reports a day per organization, bursts of a few a
second).
"""

from __future__ import annotations

from typing import Any

from pyramid.events import subscriber
from sqlalchemy import bindparam, event, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from ehs_core.db import mark_written
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


def give_number(dbsession: Session, incident: Incident) -> None:
    """Number a stored report (`take_number`, then the report's own row).
    On PostgreSQL both are one statement (the counter's UPDATE as a common
    table expression of the report's), so the counter's lock is held for
    that statement and the commit: one round trip to the server fewer."""
    if dbsession.get_bind().dialect.name != "postgresql":
        incident.number = take_number(dbsession, incident.organization_id)
        dbsession.flush()
        return
    dbsession.flush()  # Core, on the session's connection: what is pending goes first
    number = dbsession.connection().execute(NUMBER_REPORT, {
        "counter_organization_id": incident.organization_id, "report_id": incident.id}).scalar()
    mark_written(dbsession)
    if number is None:  # no counter yet: take_number makes it
        number = take_number(dbsession, incident.organization_id)
        dbsession.execute(update(Incident).where(Incident.id == incident.id).values(number=number)
                          .execution_options(synchronize_session=False))
    set_committed_value(incident, "number", number)


_COUNTERS, _INCIDENTS = IncidentCounter.__table__, Incident.__table__
_TAKEN = (update(_COUNTERS).where(_COUNTERS.c.organization_id == bindparam("counter_organization_id"))
          .values(last_number=_COUNTERS.c.last_number + 1)
          .returning(_COUNTERS.c.last_number).cte("taken"))
# Built once: WITH taken AS (UPDATE incident_counters … RETURNING last_number)
# UPDATE incidents SET number = (SELECT last_number FROM taken) WHERE id = … RETURNING number
# (NULL when the organization has no counter yet).
NUMBER_REPORT = (update(_INCIDENTS).where(_INCIDENTS.c.id == bindparam("report_id"))
                 .values(number=select(_TAKEN.c.last_number).scalar_subquery())
                 .returning(_INCIDENTS.c.number))


def commits_for_real(dbsession: Session) -> bool:
    """Whether the session's commit is PostgreSQL's COMMIT, which runs the
    deferred triggers (the queues' version, migration 0016); not when the
    session commits a savepoint of a transaction it joined (the test
    suite's requests do), nor on SQLite, which has no such trigger."""
    bind = dbsession.get_bind()
    return (bind.dialect.name == "postgresql"
            and not dbsession.connection().in_nested_transaction())


@event.listens_for(Session, "before_commit")
def _refuse_unnumbered(dbsession: Session, *_: Any) -> None:
    """An incident is stored without a number only for the moment between
    its INSERT and `give_number` in `filing.file_incident`; committing it
    like that would be a bug that loses the report's identity, so it fails
    instead."""
    if dbsession.in_nested_transaction():
        return  # a savepoint, not the commit
    for obj in (*dbsession.new, *dbsession.identity_map.values()):
        if isinstance(obj, Incident) and obj.number is None:
            raise RuntimeError(f"incident {obj.id} would be committed without a number")
