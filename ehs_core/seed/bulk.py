"""Bulk writing for `ehs seed`: rows into mapped tables in batches (COPY on
PostgreSQL, executemany in the one transaction on SQLite: issue #42 item 7),
and the search indexes set aside while an empty table fills. The rows are the
ones an INSERT through the models would write: each column's bind processing
and Python-side defaults apply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql
from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session

BATCH = 5_000


def reserve_ids(session: Session, model: Any, count: int) -> list[int]:
    """`count` new primary keys of `model`'s table: taken from its sequence on
    PostgreSQL (safe beside a running service); on SQLite, where writers are
    serialised for the whole transaction, the ones after the highest key.

    Inserting rows with their keys known lets each batch go out as one
    multi-row INSERT; RETURNING keys in row order would make SQLAlchemy send
    one INSERT per row on PostgreSQL."""
    if count == 0:
        return []
    table = model.__table__
    if session.get_bind().dialect.name == "postgresql":
        query = text("SELECT nextval(pg_get_serial_sequence(:table, 'id')) FROM generate_series(1, :n)")
        return sorted(session.execute(query, {"table": table.name, "n": count}).scalars())
    last = session.execute(select(func.max(table.c.id))).scalar() or 0
    return list(range(last + 1, last + count + 1))


def bulk_insert(session: Session, model: Any, rows: Sequence[dict[str, Any]], batch: int = BATCH,
                ids: bool = False, copy: bool = False) -> list[int]:
    """Write `rows` (dicts of column values) into `model`'s table.

    `copy`: on PostgreSQL, each batch as one COPY (psycopg's public
    `Cursor.copy()` on the session's own connection, so in its transaction)
    instead of multi-row INSERTs: a million incidents' fifteen million rows
    in minutes rather than the better part of an hour (issue #42 item 7),
    and statement-level triggers (the word counts, migration 0013) run once
    a batch. The values go through each column's own bind processing (JSON,
    UTC times, booleans) and the columns a row leaves out get their
    Python-side defaults, so the rows are the ones an INSERT would write.
    On SQLite, executemany in the caller's one transaction."""
    keys: list[int] = []
    if ids:
        keys = reserve_ids(session, model, len(rows))
        rows = [dict(row, id=key) for row, key in zip(rows, keys, strict=True)]
    if copy and rows and session.get_bind().dialect.name == "postgresql":
        copy_rows(session, model, rows, batch)
        return keys
    for offset in range(0, len(rows), batch):
        session.execute(insert(model).execution_options(render_nulls=True), rows[offset:offset + batch])
    return keys


def copy_rows(session: Session, model: Any, rows: Sequence[dict[str, Any]], batch: int = BATCH) -> None:
    """COPY `rows` into `model`'s table on the session's PostgreSQL
    connection (the driver connection: `Connection.connection
    .driver_connection`, SQLAlchemy's public way to it)."""
    table = model.__table__
    dialect = session.get_bind().dialect
    given = list(rows[0])
    defaults: dict[str, Any] = {}
    for column in table.c:
        default = column.default
        if column.name in given or column.primary_key or default is None or column.server_default is not None:
            continue
        if getattr(default, "is_scalar", False):
            defaults[column.name] = default.arg
        elif getattr(default, "is_callable", False):
            defaults[column.name] = default.arg
    columns = given + list(defaults)
    processors = [table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in columns]
    processed = [(index, processor) for index, processor in enumerate(processors) if processor is not None]
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, columns)))
    cursor = session.connection().connection.driver_connection.cursor()
    fixed = [value(None) if callable(value) else value for value in defaults.values()]
    for offset in range(0, len(rows), batch):
        with cursor.copy(statement) as copying:
            for row in rows[offset:offset + batch]:
                values = [row[name] for name in given]
                values.extend(fixed)
                for index, processor in processed:
                    values[index] = processor(values[index])
                copying.write_row(values)


def set_aside_gin_indexes(session: Session, model: Any) -> list[str]:
    """On PostgreSQL, when `model`'s table is empty, drop its GIN indexes
    (the trigram and word indexes of the search) and return their
    definitions, for `rebuild_indexes` after the rows are written: a GIN
    index built once over a million rows takes a minute, kept up to date
    row by row it takes most of the seed. Both happen in the seed's one
    transaction (PostgreSQL's DDL is transactional), so a seed that fails
    leaves every index as it was; the table is locked meanwhile, as a seed
    of an empty database can afford. Nothing is dropped beside data."""
    if session.get_bind().dialect.name != "postgresql":
        return []
    table = model.__table__.name
    if session.execute(select(model.id).limit(1)).first() is not None:
        return []
    found = session.execute(text(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
        "AND tablename = :table AND indexdef LIKE '% USING gin %'"), {"table": table}).all()
    for name, _ in found:
        session.execute(text(f'DROP INDEX "{name}"'))
    return [definition for _, definition in found]


def rebuild_indexes(session: Session, definitions: list[str]) -> None:
    """Create again the indexes `set_aside_gin_indexes` dropped, with room
    to sort (maintenance_work_mem, for this transaction only)."""
    if definitions:
        # Deferred foreign-key checks of the rows written are run now (as
        # the commit would): PostgreSQL builds no index on a table with
        # trigger events pending.
        session.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
        session.execute(text("SET LOCAL maintenance_work_mem = '256MB'"))
    for definition in definitions:
        session.execute(text(definition))
