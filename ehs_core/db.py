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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import zope.sqlalchemy
from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.tweens import EXCVIEW
from pyramid_retry import mark_error_retryable
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
from zope.sqlalchemy import mark_changed

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
    return create_engine(
        url,
        # Date functions in SQL then read instants in UTC, whatever the server's default.
        connect_args={"options": "-c timezone=UTC"},
        pool_size=settings.get("ehs.pool_size", 5),
        max_overflow=10,
        # No pre-ping (a statement before every request's first): a
        # connection that died with the server (a restart, a failover) fails
        # its first statement instead; SQLAlchemy then drops every pooled
        # connection of that age and `disconnect_retry_tween_factory` has
        # pyramid_retry run the request again on a fresh one.
        pool_pre_ping=False,
        pool_recycle=1800,
        **options,
    )


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
    zope.sqlalchemy.register(dbsession, transaction_manager=transaction_manager)
    return dbsession


class AutocommitReads:
    """A safe request's connection on PostgreSQL, reading in autocommit (see
    `includeme`), taken from the pool on first use and returned when the
    request ends; its session (`request.dbsession`) uses the same
    connection. Neither is joined to the request's transaction manager:
    there is no transaction to commit. The transaction manager still runs,
    so `after_commit` work a safe request queues runs as before."""

    def __init__(self, request: Request, engine: Engine) -> None:
        self.engine = engine
        self._connection: Connection | None = None
        self.session: Session | None = None
        request.add_finished_callback(self.close)

    @property
    def connection(self) -> Connection:
        """The request's SQLAlchemy connection, made on first use."""
        if self._connection is None:
            self._connection = self.engine.connect()
        return self._connection

    def session_for(self, request: Request, factory: sessionmaker) -> Session:
        self.session = factory(bind=self.connection, info={"request": request, "tm": None})
        return self.session

    def close(self, _request: Request) -> None:
        try:
            if self.session is not None:
                self.session.close()
        finally:
            connection = self._connection
            if connection is not None:
                if not connection.invalidated:
                    # The pool's reset-on-return is off for these connections
                    # (see `includeme`): a transaction one did open (an
                    # explicit BEGIN) is rolled back here.
                    driver = connection.connection.driver_connection
                    if driver.info.transaction_status.name != "IDLE":
                        driver.rollback()
                connection.close()


def read_rows(request: Request, statement: Any, parameters: dict[str, Any] | None = None) -> Any:
    """Run a Core statement of plain columns: on a safe request's autocommit
    connection without the ORM session (plain columns need no ORM
    execution context), else through the session, which
    first flushes what the request has changed, so the read sees it."""
    reads = request.autocommit_reads
    if reads is not None:
        return reads.connection.execute(statement, parameters)
    return request.dbsession.execute(statement, parameters)


class PlainRead:
    """A select of plain columns that a request runs on its connection
    (`request.db_connection`: a safe request's autocommit connection, else
    the session's, in the request's transaction, without flushing it),
    answered as tuples: the signed-in identity, a panel's rows."""

    def __init__(self, statement: Select[Any]) -> None:
        self.statement = statement

    def first(self, request: Request, parameters: dict[str, Any]) -> tuple[Any, ...] | None:
        """The first row of the statement's answer, or None."""
        return self.first_on(request.db_connection, parameters)

    def all(self, request: Request, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of the statement's answer, as tuples."""
        return self.all_on(request.db_connection, parameters)

    def first_on(self, connection: Connection, parameters: dict[str, Any]) -> tuple[Any, ...] | None:
        row = connection.execute(self.statement, parameters).first()
        return None if row is None else tuple(row)

    def all_on(self, connection: Connection, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in connection.execute(self.statement, parameters)]


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
    except those that read in autocommit, which have none to begin or
    commit. What such a request queues for after the commit
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

    engine = make_engine(settings)
    config.registry["db.engine"] = engine
    config.registry["dbsession_factory"] = sessionmaker(bind=engine, expire_on_commit=False)
    if engine.dialect.name == "postgresql":
        # A safe request on PostgreSQL runs its statements in autocommit: a
        # read has nothing to commit. Under READ COMMITTED each statement sees its own snapshot inside a
        # transaction too, so what a read answers does not change. What a
        # safe request does write (a session's last activity, once a minute)
        # is a single statement, committed as it runs.
        #
        # No rollback when a connection goes back to the pool: in autocommit
        # each statement commits as it runs, so the connection is already
        # outside any transaction. A statement that failed leaves no transaction
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
    nor be estimated, so the generic plan of a count by status reads every
    incident. Written as constants, the generic plan is the good one.

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
