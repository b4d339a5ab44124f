"""`ehs_core.db`: `constant`, a code's own value written into a statement's
text, where a value that would need quoting is refused rather than written;
`CursorRead`, a statement sent on the DBAPI cursor, which answers what
SQLAlchemy's execution of it answers, is seen by whatever listens to the
connection's statements, and reports a dropped connection as SQLAlchemy does
(which the disconnect retry relies on)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy import literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from ehs_core.auth.models import UserSession
from ehs_core.auth.sessions import IDENTITY
from ehs_core.db import CursorRead, constant, make_engine
from ehs_core.incidents.models import Incident, Status
from ehs_core.users.models import User

PG = os.environ.get("EHS_TEST_POSTGRES_URL")
POSTGRES_ONLY = pytest.mark.skipif(not PG, reason="needs EHS_TEST_POSTGRES_URL")


@pytest.mark.parametrize("dialect", [postgresql.dialect(), sqlite.dialect()])
def test_a_constant_is_part_of_the_statements_text(dialect):
    statement = select(Incident.id).where(Incident.status == constant(Status.investigation.value)).limit(
        constant(100))
    compiled = statement.compile(dialect=dialect)
    assert "'investigation'" in str(compiled) and "LIMIT 100" in str(compiled)
    assert "investigation" not in compiled.params.values()


@pytest.mark.parametrize("value", ["it's", "a b", "", "x;--", 1.5, True, None])
def test_anything_that_would_need_quoting_is_refused(value):
    with pytest.raises((TypeError, ValueError)):
        constant(value)


def admin_token_hash(dbsession) -> str:
    return dbsession.scalars(sa.select(UserSession.token_hash)).one()


def test_a_cursor_read_answers_the_row_sqlalchemy_reads(admin, dbsession):
    connection = dbsession.connection()
    parameters = {"token_hash": admin_token_hash(dbsession)}
    row = IDENTITY.first_on(connection, parameters)
    assert connection.dialect in IDENTITY._plans  # it went to the cursor
    assert row == tuple(connection.execute(IDENTITY.statement, parameters).one())
    created_at, last_seen_at, organization_name, _version, _id, _org, _name, email, role, active = row
    # The columns' types processed as SQLAlchemy does: aware UTC instants, a
    # boolean (SQLite stores 1).
    assert created_at.utcoffset() == last_seen_at.utcoffset() == dt.timedelta(0)
    assert active is True
    assert (organization_name, email, role) == ("Acme Works", "admin@acme.test", "admin")
    assert IDENTITY.first_on(connection, {"token_hash": "0" * 64}) is None


def test_a_cursor_read_sends_the_values_its_statement_carries(admin, dbsession):
    """A value the statement itself holds as a bound parameter (a LIMIT; on
    SQLite the OFFSET 0 written with it) is sent with the caller's."""
    from ehs_core.db import CursorRead
    from ehs_core.users.models import User

    read = CursorRead(select(User.email).where(User.role == sa.bindparam("role")).order_by(User.id).limit(1))
    connection = dbsession.connection()
    assert read.first_on(connection, {"role": "admin"}) == ("admin@acme.test",)
    assert connection.dialect in read._plans  # it went to the cursor
    assert read.first_on(connection, {"role": "nobody"}) is None


def test_a_connection_keeps_one_cursor_for_its_cursor_reads_on_psycopg(admin, dbsession, database_url):
    from ehs_core.db import CURSOR_KEY

    connection = dbsession.connection()
    parameters = {"token_hash": admin_token_hash(dbsession)}
    first = IDENTITY.first_on(connection, parameters)
    kept = connection.connection.info.get(CURSOR_KEY)
    assert IDENTITY.first_on(connection, parameters) == first
    if database_url.startswith("postgresql"):
        assert kept is not None and connection.connection.info[CURSOR_KEY] is kept
    else:
        assert kept is None  # a sqlite3 cursor left open would hold its statement


def test_a_listener_of_the_statements_sees_a_cursor_read(admin, dbsession, count_statements):
    connection = dbsession.connection()
    parameters = {"token_hash": admin_token_hash(dbsession)}
    with count_statements() as counted:
        row = IDENTITY.first_on(connection, parameters)
    assert counted.count == 1 and "user_sessions" in counted.statements[0]
    assert row == IDENTITY.first_on(connection, parameters)


def test_a_cursor_read_answers_every_row_sqlalchemy_reads(admin, make_user, dbsession, count_statements):
    for _ in range(3):
        make_user("reporter")
    read = CursorRead(select(User.id, User.active, User.created_at, literal(7).label("seven"))
                      .where(User.organization_id == sa.bindparam("organization", type_=sa.Integer))
                      .order_by(User.id))
    connection = dbsession.connection()
    organization = dbsession.scalars(select(User.organization_id)).first()
    rows = read.all_on(connection, {"organization": organization})
    assert connection.dialect in read._plans  # it went to the cursor
    assert len(rows) == 4
    assert rows == [tuple(row) for row in connection.execute(read.statement, {"organization": organization})]
    assert all(active is True and created.utcoffset() == dt.timedelta(0) and seven == 7
               for _id, active, created, seven in rows)
    with count_statements() as counted:  # seen by what listens, with the same answer
        assert read.all_on(connection, {"organization": organization}) == rows
    assert counted.count == 1
    assert read.all_on(connection, {"organization": -1}) == []


def test_a_cursor_read_refuses_a_statement_whose_sql_is_written_when_it_runs(dbsession):
    read = CursorRead(select(User.id).where(User.id.in_([1, 2])))
    with pytest.raises(ValueError, match="written when it runs"):
        read.all_on(dbsession.connection(), {})


@pytest.fixture
def pg_engine() -> Iterator[sa.Engine]:
    """An engine of the service's kind on the test PostgreSQL server."""
    engine = make_engine({"sqlalchemy.url": PG})
    yield engine
    engine.dispose()


@POSTGRES_ONLY
def test_a_dropped_connection_is_reported_and_invalidated_as_sqlalchemy_does(pg_engine):
    """A PostgreSQL server's connection is what a restart drops."""
    engine = pg_engine
    with engine.connect() as connection:
        pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        connection.rollback()
        with engine.connect() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            other.commit()
        with pytest.raises(DBAPIError) as raised:
            IDENTITY.first_on(connection, {"token_hash": "0" * 64})
        assert raised.value.connection_invalidated
        assert connection.invalidated


@POSTGRES_ONLY
def test_a_failed_cursor_read_leaves_the_connection_fit_for_the_next():
    """SQLAlchemy closes the cursor of a failed statement: the connection's
    next read makes a new one instead of finding it closed."""
    engine = make_engine({"sqlalchemy.url": PG}, isolation_level="AUTOCOMMIT")
    divide = CursorRead(select(sa.literal_column("1") / sa.bindparam("by", type_=sa.Integer)))
    with engine.connect() as connection:
        assert divide.first_on(connection, {"by": 1}) == (1,)
        with pytest.raises(DBAPIError, match="division by zero"):
            divide.first_on(connection, {"by": 0})
        assert not connection.invalidated
        assert divide.first_on(connection, {"by": 1}) == (1,)
        assert divide.all_on(connection, {"by": 1}) == [(1,)]
    engine.dispose()


@POSTGRES_ONLY
def test_a_transaction_left_open_on_an_autocommit_read_is_rolled_back_when_it_ends():
    """The autocommit engine's pool does not roll back what it gets back
    (there is nothing to roll back after autocommit statements); a
    transaction opened explicitly is rolled back as the request ends. (Reads
    run in autocommit on PostgreSQL only.)"""
    from pyramid.request import Request

    from ehs_core.db import AutocommitReads

    engine = make_engine({"sqlalchemy.url": PG}, isolation_level="AUTOCOMMIT", pool_reset_on_return=None)
    request = Request.blank("/")
    reads = AutocommitReads(request, engine)
    driver = reads.connection.connection.driver_connection
    reads.connection.exec_driver_sql("BEGIN")
    reads.connection.exec_driver_sql("SELECT 1")
    assert driver.pgconn.transaction_status != 0
    request._process_finished_callbacks()
    assert driver.pgconn.transaction_status == 0
    engine.dispose()


def test_a_request_run_again_forgets_what_its_failed_attempt_read(registry):
    """pyramid_retry runs a failed request again with the same environ: the
    caches of the first attempt (the workflow's moves of an incident, the
    columns read with its sections, a plugin's pending tallies) go, so the
    next attempt checks a transition against the incident as it is then;
    what the WSGI server put there (the proxy's address) stays."""
    from pyramid.request import Request
    from pyramid_retry import BeforeRetry

    request = Request.blank("/api/incidents/1/transitions", method="POST")
    request.registry = registry
    request.environ.update({"ehs.workflow.moves": {(1, "investigation"): []},
                            "ehs.incident_columns.read": {("timeline.comments", 1): "[]"},
                            "ehs.analytics.pending": object(), "ehs.proxy_addr": "10.0.0.7"})
    registry.notify(BeforeRetry(request, RuntimeError("serialization failure")))
    assert not [key for key in request.environ if key.startswith("ehs.") and key != "ehs.proxy_addr"]
    assert request.environ["ehs.proxy_addr"] == "10.0.0.7"
    assert request.environ["PATH_INFO"] == "/api/incidents/1/transitions"
