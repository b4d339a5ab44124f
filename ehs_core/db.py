"""Database wiring: engine, one session per request joined to its transaction.

Follows Pyramid's cookiecutter: `request.dbsession` is reified and joined to
`request.tm` through zope.sqlalchemy, so a request commits or aborts as one
unit and `pyramid_retry` can re-run it after a PostgreSQL serialization or
deadlock failure.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import zope.sqlalchemy
from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.tweens import EXCVIEW
from pyramid_retry import IBeforeRetry, mark_error_retryable
from sqlalchemy import (
    DateTime,
    MetaData,
    ScalarSelect,
    Select,
    create_engine,
    event,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator
from zope.sqlalchemy.datamanager import STATUS_ACTIVE, join_transaction, mark_changed

# A naming convention makes constraint names stable, so migrations can drop
# and alter them by name on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator):
    """Instants stored in UTC; SQLite has no zone-aware type, so store naive UTC
    there and always hand back aware UTC datetimes."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given for a UTC column")
        value = value.astimezone(dt.UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        return _aware_utc(value)

    def result_processor(self, dialect: Any, coltype: Any) -> Callable[[Any], dt.datetime | None]:
        """`process_result_value` as the column's processor itself where the
        driver's value needs no other processing (psycopg's datetimes):
        TypeDecorator's wrapper around it was two calls per instant read,
        a tenth of the incident list's instructions."""
        inner = self.impl_instance.result_processor(dialect, coltype)
        if inner is None:
            return _aware_utc
        return lambda value: _aware_utc(inner(value))


def _aware_utc(value: dt.datetime | None) -> dt.datetime | None:
    """An instant read from the database, as an aware datetime in UTC."""
    if value is None:
        return None
    zone = value.tzinfo
    if zone is dt.UTC:  # PostgreSQL's, read in UTC (see `_make_engine`)
        return value
    if zone is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# Every engine made here, so a forked child can leave its parent's
# connections alone (`_forget_inherited_connections`).
_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


def _forget_inherited_connections() -> None:
    """After a fork, in the child: give every engine a new, empty pool.

    `pserve production.ini` builds the application, engines included, in
    gunicorn's arbiter and then forks the workers. A connection the arbiter
    had pooled by then (its in-process job runner runs the clock's jobs
    there) would be inherited by every worker: several processes writing to
    one PostgreSQL socket read each other's answers, fail with "result object
    does not return rows" or wait forever. SQLAlchemy's documented remedy
    ("Using Connection Pools with Multiprocessing or os.fork()"):
    `dispose(close=False)` in the child, which neither closes nor touches the
    parent's connections, and costs requests nothing (unlike a pid check at
    every checkout)."""
    for engine in list(_ENGINES):
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_inherited_connections)


def make_engine(settings: dict[str, Any], **options: Any) -> Engine:
    engine = _make_engine(settings, **options)
    _ENGINES.add(engine)
    return engine


def _make_engine(settings: dict[str, Any], **options: Any) -> Engine:
    url: str = settings["sqlalchemy.url"]
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30})
        _serialise_sqlite_writers(engine)
        return engine
    _keep_long_statements()
    return create_engine(
        url,
        # Date functions in SQL then read instants in UTC, whatever the server's default.
        connect_args={"options": "-c timezone=UTC"},
        pool_size=settings.get("ehs.pool_size", 5),
        max_overflow=10,
        # No pre-ping: it was a round trip before every request's first
        # statement (a quarter of the signed-in floor's time under load). A
        # connection that died with the server (a restart, a failover) fails
        # its first statement instead; SQLAlchemy then drops every pooled
        # connection of that age and `disconnect_retry_tween_factory` has
        # pyramid_retry run the request again on a fresh one.
        pool_pre_ping=False,
        pool_recycle=1800,
        **options,
    )


# The longest statement text whose conversion psycopg keeps.
LONGEST_KEPT_STATEMENT = 32768


def _keep_long_statements() -> None:
    """psycopg converts a statement's placeholders (`%(name)s` to `$1`) once
    per text and keeps the result, but only for texts of up to 4,096 bytes
    (longer ones are mostly an ORM's many-row INSERTs that never repeat:
    psycopg discussion 628). The incident page's one statement is longer
    and the same on every request; converting it again was a thirtieth of
    the page. psycopg still keeps only its 128 latest texts, and never one
    with more than 50 parameters."""
    from psycopg import _queries

    _queries.MAX_CACHED_STATEMENT_LENGTH = max(_queries.MAX_CACHED_STATEMENT_LENGTH, LONGEST_KEPT_STATEMENT)


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _serialise_sqlite_writers(engine: Engine) -> None:
    """SQLite: take the write lock at BEGIN (BEGIN IMMEDIATE) so two requests
    never deadlock upgrading read locks, and let SQLAlchemy manage BEGIN so
    savepoints work (SQLAlchemy pysqlite docs, "Serializable isolation")."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        # SQLite's lower() folds ASCII only; searches must fold "Ü" too.
        dbapi_connection.create_function("lower", 1, _lower, deterministic=True)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


class RequestSession(Session):
    """A request's session, joined to the request's transaction manager
    (`info["tm"]`) by zope.sqlalchemy's events registered once on this class
    (below) instead of seven `event.listen` calls on every request's session,
    an eighth of the cost of the signed-in floor."""


class _RequestTransactionEvents(zope.sqlalchemy.ZopeTransactionEvents):
    """zope.sqlalchemy's events with each session's own transaction manager;
    sessions made outside a request (jobs, the purge) have none and manage
    their own transactions."""

    def __init__(self) -> None:
        super().__init__(initial_state=STATUS_ACTIVE)

    def after_begin(self, session: Session, transaction: Any, connection: Any) -> None:
        if (tm := session.info.get("tm")) is not None:
            join_transaction(session, STATUS_ACTIVE, tm)

    def after_attach(self, session: Session, instance: Any) -> None:
        if (tm := session.info.get("tm")) is not None:
            join_transaction(session, STATUS_ACTIVE, tm)

    def after_flush(self, session: Session, flush_context: Any) -> None:
        if (tm := session.info.get("tm")) is not None:
            mark_changed(session, tm)

    def after_bulk_update(self, update_context: Any) -> None:
        self.after_flush(update_context.session, None)

    def after_bulk_delete(self, delete_context: Any) -> None:
        self.after_flush(delete_context.session, None)

    def before_commit(self, session: Session) -> None:
        if (tm := session.info.get("tm")) is not None:
            assert session.in_nested_transaction() or tm.get().status == "Committing", \
                "Transaction must be committed using the transaction manager"

    def do_orm_execute(self, execute_state: Any) -> None:
        if execute_state.is_orm_statement and (execute_state.is_update or execute_state.is_insert
                                               or execute_state.is_delete):
            self.after_flush(execute_state.session, None)


_events = _RequestTransactionEvents()
for _name in ("after_begin", "after_attach", "after_flush", "after_bulk_update", "after_bulk_delete",
              "before_commit", "do_orm_execute"):
    event.listen(RequestSession, _name, getattr(_events, _name))


def mark_written(dbsession: Session) -> None:
    """A statement sent on the session's connection without the ORM (Core,
    for a hot path) wrote: the request's transaction must commit the session
    (zope.sqlalchemy commits only sessions it knows changed; ORM writes mark
    them themselves)."""
    if (tm := dbsession.info.get("tm")) is not None:
        mark_changed(dbsession, tm)


# Methods that change nothing (RFC 9110 9.2.1): on PostgreSQL they read without
# a transaction (see `includeme`).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def get_tm_session(factory: sessionmaker, transaction_manager: Any,
                   request: Request | None = None, bind: Any = None) -> Session:
    dbsession = factory(info={"request": request, "tm": transaction_manager},
                        **({"bind": bind} if bind is not None else {}))
    if not isinstance(dbsession, RequestSession):
        zope.sqlalchemy.register(dbsession, transaction_manager=transaction_manager)
    return dbsession


class AutocommitReads:
    """A safe request's connection on PostgreSQL, reading in autocommit (see
    `includeme`), taken from the pool on first use and returned when the
    request ends. Its session (`request.dbsession`, made only when a view
    needs the ORM) uses the same connection; the signed-in identity is one
    statement on its DBAPI cursor (`CursorRead`), so a request that needs
    nothing else, such as `GET /api/auth/me`, makes no ORM session and no
    SQLAlchemy `Connection` at all (making and closing one was 3% of that
    request's instructions).
    Neither is joined to the request's transaction manager: there is no
    transaction to commit (joining the session, and committing it through
    the two-phase protocol, was a tenth of the signed-in floor's CPU). The
    transaction manager still runs, so `after_commit` work a safe request
    queues runs as before."""

    def __init__(self, request: Request, engine: Engine) -> None:
        self.engine = engine
        try:
            # The pool's connection; the SQLAlchemy `Connection` over it is
            # made when something asks for it (the signed-in identity runs
            # on the DBAPI cursor, `CursorRead`, and needs none).
            self.dbapi_connection = engine.raw_connection()
        except engine.dialect.loaded_dbapi.Error as error:
            # Reported as `engine.connect()` reports it.
            Connection._handle_dbapi_exception_noconnection(error, engine.dialect, engine)
        self._connection: Connection | None = None
        self.session: Session | None = None
        request.add_finished_callback(self.close)

    @property
    def connection(self) -> Connection:
        """The request's SQLAlchemy connection, over the pool's connection."""
        connection = self._connection
        if connection is None:
            connection = self._connection = Connection(self.engine, self.dbapi_connection)
        return connection

    def session_for(self, request: Request, factory: sessionmaker) -> Session:
        self.session = factory(bind=self.connection, info={"request": request, "tm": None})
        return self.session

    def close(self, _request: Request) -> None:
        try:
            if self.session is not None:
                self.session.close()
        finally:
            dbapi_connection = self.dbapi_connection
            if dbapi_connection.is_valid:
                # The pool's reset-on-return is off for these connections
                # (see `includeme`): a transaction one did open (an explicit
                # BEGIN) is rolled back here. Read from libpq's status, an
                # int (psycopg's `info` makes an enum of it, which cost more
                # than the rollback it saves).
                driver = dbapi_connection.driver_connection
                if driver.pgconn.transaction_status:  # not IDLE
                    driver.rollback()
            if self._connection is not None:
                self._connection.close()
            else:
                dbapi_connection.close()


def read_rows(request: Request, statement: Any, parameters: dict[str, Any] | None = None) -> Any:
    """Run a Core statement of plain columns: on a safe request's autocommit
    connection without the ORM session (a tenth of a millisecond less per
    statement: no ORM execution context), else through the session, which
    first flushes what the request has changed, so the read sees it."""
    reads = request.autocommit_reads
    if reads is not None:
        return reads.connection.execute(statement, parameters)
    return request.dbsession.execute(statement, parameters)


class _CursorPlan(NamedTuple):
    """A `CursorRead`'s statement for one dialect."""

    sql: str
    positions: Sequence[str] | None  # parameter names in order, for a positional paramstyle
    binds: dict[str, Callable[[Any], Any]]  # the parameters' bind processors
    defaults: dict[str, Any]  # values the statement carries (SQLite's `OFFSET ?` of a LIMIT: 0)
    processors: tuple[tuple[int, Callable[[Any], Any]], ...]  # (column index, result processor)
    keeps_cursor: bool  # psycopg: one cursor per connection, and prepared statements


# Where a connection keeps its `CursorRead` cursor: the pool's `info` of the
# DBAPI connection, which lives and is cleared with it.
CURSOR_KEY = "ehs.cursor_read"


class CursorRead:
    """A select of plain columns that every request runs (the signed-in
    identity), sent on the DBAPI cursor as SQL compiled once per dialect.

    SQLAlchemy's execution of a statement (its execution context, the
    result's metadata and processing, a `Row`) cost more than psycopg and
    PostgreSQL together: 85 µs against 35 µs on a bare cursor, the largest
    part of the signed-in floor. The answer is the same: the parameters and
    each column's value go through their type's bind and result processors
    as SQLAlchemy applies them (aware UTC instants, booleans on SQLite), and
    the row comes back as a tuple. On psycopg the statement is prepared on
    its first run on each connection (psycopg's default is the fifth), and
    each connection keeps one cursor for it (making a psycopg cursor, its
    adapters and transformer, was 8% of the floor's instructions; a
    client-side cursor holds nothing between statements but the last
    answer). Other drivers get a cursor per statement, closed after it (a
    sqlite3 cursor left open holds its statement).

    Through SQLAlchemy instead while anything listens to the connection's
    statements (the tests' statement counts, instrumentation), and a DBAPI
    error is handed to SQLAlchemy as any statement's would be: a dropped
    connection invalidates the pool, and the error is the same
    `DBAPIError` that `disconnect_retry_tween_factory` has retried."""

    # What listens to a statement's execution (ConnectionEvents); `begin`
    # and the pool's events (SQLite's BEGIN IMMEDIATE, its PRAGMAs) are not
    # about statements and run as before.
    EXECUTE_EVENTS = ("before_execute", "before_cursor_execute", "after_cursor_execute",
                      "after_execute")

    def __init__(self, statement: Select[Any], prepare: bool = True) -> None:
        """`prepare=False`: PostgreSQL plans the statement for each run's
        values, never with a generic plan (see `listing._kept_statement`)."""
        self.statement = statement
        self.prepare = prepare
        self._plans: dict[Any, _CursorPlan] = {}

    def _plan(self, dialect: Any) -> _CursorPlan:
        compiled = self.statement.compile(dialect=dialect)
        if compiled.post_compile_params or compiled.literal_execute_params:
            # Their SQL is written at each execution (an IN of a list of
            # values, say): bind each value as a parameter of its own.
            raise ValueError("a CursorRead's statement has parameters written when it runs")
        binds = {name: bind.type.dialect_impl(dialect).bind_processor(dialect)
                 for name, bind in compiled.binds.items()}
        processors = tuple(
            (index, processor) for index, column in enumerate(self.statement.selected_columns)
            if (processor := column.type.dialect_impl(dialect).result_processor(dialect, None)) is not None)
        plan = self._plans[dialect] = _CursorPlan(
            str(compiled), compiled.positiontup if compiled.positional else None,
            {name: processor for name, processor in binds.items() if processor is not None},
            {name: bind.value for name, bind in compiled.binds.items()
             if not bind.required and bind.callable is None},
            processors, dialect.driver == "psycopg")
        return plan

    @classmethod
    def _observed(cls, engine: Engine, connection: Connection | None) -> bool:
        """Whether something sees the statements: the engine's logging, or a
        listener of their execution. (SQLAlchemy's own flags first, the
        ones it checks before each event: looking the listeners up on every
        request cost more than the flags.)"""
        if connection is not None and (connection._echo or connection._has_events):
            return True
        if Connection._has_events or engine.echo:
            return True
        if not engine._has_events:
            return False
        dispatch = engine.dispatch
        return any(getattr(dispatch, name) for name in cls.EXECUTE_EVENTS)

    def first(self, request: Request, parameters: dict[str, Any]) -> tuple[Any, ...] | None:
        """The first row of the statement's answer on the request's
        connection (`request.db_connection`'s), or None."""
        return self._on_request(request, parameters, False)

    def all(self, request: Request, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of the statement's answer on the request's connection,
        as tuples (a page of the incident list)."""
        return self._on_request(request, parameters, True)

    def first_on(self, connection: Connection, parameters: dict[str, Any]) -> tuple[Any, ...] | None:
        """The first row of the statement's answer on `connection`, or None."""
        return self._on(connection, parameters, False)

    def all_on(self, connection: Connection, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of the statement's answer on `connection`, as tuples."""
        return self._on(connection, parameters, True)

    def _on_request(self, request: Request, parameters: dict[str, Any], every: bool) -> Any:
        reads = request.autocommit_reads
        if reads is None:
            return self._on(request.db_connection, parameters, every)
        if self._observed(reads.engine, reads._connection):
            return self._on(reads.connection, parameters, every)
        return self._run(reads.engine.dialect, reads.dbapi_connection, lambda: reads.connection, parameters,
                         every)

    def _on(self, connection: Connection, parameters: dict[str, Any], every: bool) -> Any:
        """`every`: all the rows, as a list; else the first or None."""
        if self._observed(connection.engine, connection):
            result = connection.execute(self.statement, parameters)
            if every:
                return [tuple(row) for row in result.all()]
            row = result.first()
            return None if row is None else tuple(row)
        return self._run(connection.dialect, connection.connection, lambda: connection, parameters, every)

    def _run(self, dialect: Any, dbapi_connection: Any, connection: Callable[[], Connection],
             parameters: dict[str, Any], every: bool) -> Any:
        plan = self._plans.get(dialect) or self._plan(dialect)
        if plan.defaults:
            parameters = {**plan.defaults, **parameters}
        if plan.binds:
            binds = plan.binds
            parameters = {name: binds[name](value) if name in binds else value
                          for name, value in parameters.items()}
        values = parameters if plan.positions is None else tuple(parameters[name] for name in plan.positions)
        cursor = None
        try:
            if plan.keeps_cursor:
                info = dbapi_connection.info
                cursor = info.get(CURSOR_KEY)
                if cursor is None:
                    cursor = info[CURSOR_KEY] = dbapi_connection.cursor()
                cursor.execute(plan.sql, values, prepare=self.prepare)
                found = cursor.fetchall() if every else cursor.fetchone()
            else:
                cursor = dbapi_connection.cursor()
                cursor.execute(plan.sql, values)
                found = cursor.fetchall() if every else cursor.fetchone()
                cursor.close()
        except dialect.loaded_dbapi.Error as error:
            if plan.keeps_cursor:
                # SQLAlchemy closes the cursor of a failed statement: the
                # connection's next read makes a new one.
                dbapi_connection.info.pop(CURSOR_KEY, None)
            connection()._handle_dbapi_exception(error, plan.sql, values, cursor, None)
        if not found or not plan.processors:
            return found
        if every:
            return [_processed(row, plan.processors) for row in found]
        return _processed(found, plan.processors)


def _processed(row: Sequence[Any],
               processors: tuple[tuple[int, Callable[[Any], Any]], ...]) -> tuple[Any, ...]:
    """A row with its columns' result processors applied."""
    values = list(row)
    for index, processor in processors:
        values[index] = processor(values[index])
    return tuple(values)


# Paths whose GET writes (`writes_on_get`).
WRITING_GETS = "db.writing_get_paths"


def writes_on_get(config: Configurator, *paths: str) -> None:
    """The GETs of these paths write, and run in a transaction as unsafe
    requests do: a sign-in that another site redirects back to can only be a
    GET (the OpenID Connect callback, and the redirect to the provider,
    which keeps what the answer must match)."""
    config.registry.setdefault(WRITING_GETS, set()).update(paths)


def reads_in_autocommit(request: Request) -> bool:
    """Whether this request's statements run in autocommit: a safe method on
    PostgreSQL, with the session factory bound to the service's engine (tests
    bind it to an outer transaction instead), on a path that does not write
    (`writes_on_get`)."""
    registry = request.registry
    return (request.method in SAFE_METHODS and "db.autocommit_engine" in registry
            and registry["dbsession_factory"].kw.get("bind") is registry["db.engine"]
            and request.environ.get("PATH_INFO") not in registry.get(WRITING_GETS, ()))


def needs_transaction(request: Request) -> bool:
    """pyramid_tm's `activate_hook`: every request runs in a transaction
    except those that read in autocommit, which have none to begin or commit
    (the transaction manager's begin and commit were a twentieth of the
    signed-in floor's CPU). What such a request queues for after the commit
    runs when it ends (`ehs_core.events.after_commit`)."""
    return not reads_in_autocommit(request)


@contextmanager
def streaming_session(request: Request) -> Iterator[Session]:
    """A session whose statements may stream through a server-side cursor
    (`yield_per`), which needs a transaction: the request's own, or, for a
    safe request on PostgreSQL that reads in autocommit, one of its own for
    the duration (closed afterwards)."""
    if request.autocommit_reads is None:
        yield request.dbsession
        return
    with request.registry["dbsession_factory"]() as reader:
        yield reader


def disconnect_retry_tween_factory(handler: Any, registry: Any) -> Any:
    """A request that met a dropped database connection (a PostgreSQL restart,
    a failover) is re-run by pyramid_retry on a fresh connection instead of
    failing: the error is marked retryable before the exception views see it."""

    def tween(request: Request) -> Any:
        try:
            return handler(request)
        except DBAPIError as exc:
            if exc.connection_invalidated:
                mark_error_retryable(exc)
            raise

    return tween


# What a request's environ holds from the WSGI server, not from the
# application: kept when pyramid_retry runs the request again.
SERVER_KEYS = frozenset({"ehs.proxy_addr"})


def forget_attempt(event: Any) -> None:
    """pyramid_retry runs a failed request again (a serialization failure,
    a dropped connection) with the same WSGI environ, where the core and
    the plugins keep what a request has read and decided under "ehs."
    keys: its incident contexts, the workflow's moves, the columns read
    with the sections, a plugin's cases or pending tallies. They belong to
    the attempt whose transaction was rolled back; the next attempt must
    read again, or it would check a transition against the state another
    transaction has just changed. (`pyramid_retry.IBeforeRetry`.)"""
    environ = event.environ
    for key in [key for key in environ if key.startswith("ehs.") and key not in SERVER_KEYS]:
        del environ[key]


def includeme(config: Configurator) -> None:
    settings = config.get_settings()
    settings["tm.manager_hook"] = "pyramid_tm.explicit_manager"
    # pyramid_tm would look the caller up before the view, outside the
    # exception views and the retry marking below; the views do it.
    settings["tm.annotate_user"] = False
    # A safe request on PostgreSQL reads in autocommit: no transaction to manage.
    settings["tm.activate_hook"] = needs_transaction
    settings.setdefault("retry.attempts", 3)
    # A body that will be refused for its size is not copied for retries.
    settings.setdefault("retry.activate_hook", "ehs_core.intake.retry_attempts")
    config.include("pyramid_tm")
    config.include("pyramid_retry")
    config.add_subscriber(forget_attempt, IBeforeRetry)

    engine = make_engine(settings)
    config.registry["db.engine"] = engine
    config.registry["dbsession_factory"] = sessionmaker(bind=engine, expire_on_commit=False,
                                                        class_=RequestSession)
    if engine.dialect.name == "postgresql":
        # A safe request on PostgreSQL runs its statements in autocommit: the
        # BEGIN and COMMIT around a read are two round trips to the server
        # that every page, detail and the signed-in floor paid for nothing.
        # Under READ COMMITTED each statement sees its own snapshot inside a
        # transaction too, so what a read answers does not change. What a
        # safe request does write (a session's last activity, once a minute)
        # is a single statement, committed as it runs.
        #
        # No rollback when a connection goes back to the pool: in autocommit
        # each statement commits as it runs, so the connection is already
        # outside any transaction, and psycopg's `rollback()` would only find
        # that out (its lock and generator were 1% of the signed-in floor's
        # instructions). A statement that failed leaves no transaction
        # either. The one way to leave one open, an explicit BEGIN, is
        # caught when the request gives the connection back
        # (`AutocommitReads.close`); the connections of `db.engine`, which
        # do run transactions, keep the pool's rollback.
        config.registry["db.autocommit_engine"] = make_engine(
            settings, isolation_level="AUTOCOMMIT", pool_reset_on_return=None)

    def autocommit_reads(request: Request) -> AutocommitReads | None:
        if reads_in_autocommit(request):
            return AutocommitReads(request, request.registry["db.autocommit_engine"])
        return None

    def dbsession(request: Request) -> Session:
        # Looked up per request so tests can bind the factory to an outer
        # transaction that is rolled back after each test.
        factory = request.registry["dbsession_factory"]
        reads = request.autocommit_reads
        if reads is not None:
            return reads.session_for(request, factory)
        return get_tm_session(factory, request.tm, request)

    def db_connection(request: Request) -> Connection:
        """The request's connection, for Core statements of plain columns
        (the signed-in identity): the safe request's autocommit connection,
        else the session's (in the request's transaction)."""
        reads = request.autocommit_reads
        return reads.connection if reads is not None else request.dbsession.connection()

    config.add_request_method(autocommit_reads, reify=True)
    config.add_request_method(dbsession, reify=True)
    config.add_request_method(db_connection, reify=True)
    config.add_tween("ehs_core.db.disconnect_retry_tween_factory", under=EXCVIEW)


_WORD = re.compile(r"[A-Za-z0-9_.]+")  # nothing to quote or escape in '…'


def constant(value: str | int) -> ColumnElement[Any]:
    """A fixed value of the code's own (a status, a limit) written into the
    statement's text instead of sent as a bound parameter.

    psycopg prepares a statement the fifth time a connection runs it, and
    PostgreSQL then weighs a generic plan, made without the parameters'
    values, against planning each run afresh. Compared with a parameter, a
    status cannot select a partial index (`… WHERE status = 'investigation'`)
    nor be estimated: the generic plan of the menu's counts read all 100,000
    incidents (38 ms), so PostgreSQL planned that statement again on every
    page (1 ms of a 0.3 ms statement). Written as constants, the generic
    plan is the good one and is kept.

    Written when the statement is compiled (SQLAlchemy's `literal_execute`
    would write it again at every execution), so only plain words and whole
    numbers are taken (dotted words too: an audit action): nothing that needs quoting."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"not a constant for SQL: {value!r}")
    if isinstance(value, int):
        return literal_column(str(int(value)))
    if not _WORD.fullmatch(value):
        raise ValueError(f"not a plain word: {value!r}")
    return literal_column(f"'{value}'")


def count_up_to(stmt: Select[Any], limit: int | None) -> ScalarSelect[int]:
    """`SELECT count(*)` of `stmt`'s rows as a scalar subquery, reading at
    most `limit` of them (all when None): a count shown as "99+" need not
    read thousands of rows to say so. The limit is a constant of the
    statement's text (see `constant`)."""
    if limit is None:
        return select(func.count()).select_from(stmt.subquery()).scalar_subquery()
    return select(func.count()).select_from(
        stmt.with_only_columns(literal_column("1")).limit(constant(limit)).subquery()).scalar_subquery()


def advisory_lock(dbsession: Session, key: str) -> None:
    """Serialise transactions that decide on the same thing (the last admin,
    one-time setup, a rate-limit bucket) until commit. PostgreSQL takes a
    transaction-scoped advisory lock; SQLite already serialises writers
    because every transaction begins IMMEDIATE."""
    if dbsession.get_bind().dialect.name == "postgresql":
        lock_id = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
        dbsession.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": lock_id})
