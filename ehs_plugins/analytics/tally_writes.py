"""The statements that write the tallies and the incidents' counted states.

Concurrency: a tally is kept in shards that add up to it
(`models.Tally.shard`), and moved by `INSERT … ON CONFLICT DO UPDATE SET
n = n + excluded.n` in one statement per request, keys sorted, so
concurrent reports mostly move different rows and never lock shared rows
in opposite orders (no deadlock). A counted state is written with its
site's zone read by the same statement, so a zone changed since the state
was computed is seen (`store_state`)."""

from __future__ import annotations

import functools
import json
from typing import Any

from sqlalchemy import JSON, Integer, bindparam, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ehs_core.db import mark_written
from ehs_core.sites.models import Site
from ehs_plugins.analytics.counted_state import State, Sums
from ehs_plugins.analytics.models import CountedIncident, Tally


@functools.cache
def _upsert(dialect_name: str) -> Any:
    """INSERT … ON CONFLICT DO UPDATE adding to a tally: one statement of one
    row, made once and run with every row's values, so its SQL is compiled
    once (a multi-row VALUES differs with each request's number of rows)."""
    table = Tally.__table__
    statement = (postgresql.insert if dialect_name == "postgresql" else sqlite.insert)(table)
    return statement.on_conflict_do_update(
        index_elements=[c.name for c in table.primary_key.columns],
        set_={"n": table.c.n + statement.excluded.n, "total": table.c.total + statement.excluded.total,
              "closed": table.c.closed + statement.excluded.closed})


# PostgreSQL: the same as `_upsert`, every row in one statement, the rows
# as one JSON parameter: one statement to bind and run, where psycopg's
# executemany sends one per row. Rows go in the JSON array's order.
UPSERT_JSON = text(
    "INSERT INTO analytics_tallies (organization_id, kind, month, site_id, type, k1, k2, n, total, closed) "
    "SELECT :organization_id, * FROM json_to_recordset(CAST(:rows AS json)) AS moved(kind varchar, "
    "month integer, site_id integer, type varchar, k1 varchar, k2 integer, n bigint, total bigint, "
    "closed bigint) "
    "ON CONFLICT (organization_id, kind, month, site_id, type, k1, k2, shard) DO UPDATE SET "
    "n = analytics_tallies.n + excluded.n, total = analytics_tallies.total + excluded.total, "
    "closed = analytics_tallies.closed + excluded.closed")
UPSERT_COLUMNS = ("kind", "month", "site_id", "type", "k1", "k2", "n", "total", "closed")
# PostgreSQL: a new report's counted state (its zone read from its site, as
# `store_state` does) and, if that zone is the one it was placed in (:zone), the
# tallies it adds to (as UPSERT_JSON), in one statement. Answers the zone
# stored, or no row when another request counted the report first.
COUNT_REPORT = text(
    "WITH counted AS (INSERT INTO analytics_counted (incident_id, organization_id, zone, state) "
    "SELECT :incident_id, :organization_id, sites.timezone, CAST(:state AS json) FROM sites "
    "WHERE sites.id = :site_id ON CONFLICT DO NOTHING RETURNING zone), "
    "moved AS (INSERT INTO analytics_tallies (organization_id, kind, month, site_id, type, k1, k2, n, total, "
    "closed) SELECT :organization_id, * FROM json_to_recordset(CAST(:rows AS json)) AS moved(kind varchar, "
    "month integer, site_id integer, type varchar, k1 varchar, k2 integer, n bigint, total bigint, "
    "closed bigint) "
    "WHERE EXISTS (SELECT FROM counted WHERE zone IS NOT DISTINCT FROM CAST(:zone AS varchar)) "
    "ON CONFLICT (organization_id, kind, month, site_id, type, k1, k2, shard) DO UPDATE SET "
    "n = analytics_tallies.n + excluded.n, total = analytics_tallies.total + excluded.total, "
    "closed = analytics_tallies.closed + excluded.closed) "
    "SELECT zone FROM counted")


def move_tallies(session: Session, organization_id: int, moved: Sums) -> None:
    """Add `moved` to the tallies, the keys in order, so concurrent requests
    lock shared rows in the same order (no deadlock)."""
    if not moved:
        return
    rows = [dict(zip(UPSERT_COLUMNS, (*key, *values), strict=True)) for key, values in sorted(moved.items())]
    if session.get_bind().dialect.name == "postgresql":
        parameters = {"organization_id": organization_id, "rows": json.dumps(rows)}
        session.connection().execute(UPSERT_JSON, parameters)
        mark_written(session)
        return
    session.execute(_upsert(session.get_bind().dialect.name),
                    [{"organization_id": organization_id, **row} for row in rows])


def _zone_of(site_id: int) -> Any:
    return select(Site.timezone).where(Site.id == site_id).scalar_subquery()


def store_state(session: Session, organization_id: int, incident_id: int, state: State, exists: bool) -> Any:
    """Write an incident's counted state, taking its site's zone in the same
    statement (so a zone changed since the state was computed is seen);
    returns a row with that zone, or None when another request counted a
    new incident first."""
    value = bindparam("state", state, type_=JSON)
    if exists:
        return session.execute(
            update(CountedIncident).where(CountedIncident.incident_id == incident_id)
            .values(state=value, zone=_zone_of(state["s"])).returning(CountedIncident.zone)).one()
    written = session.connection().execute(_store_new(session.get_bind().dialect.name), {
        "incident_id": incident_id, "organization_id": organization_id, "state": state,
        "site_id": state["s"]}).first()
    mark_written(session)
    return written


@functools.cache
def _store_new(dialect_name: str) -> Any:
    """INSERT … SELECT … ON CONFLICT DO NOTHING RETURNING zone of a new
    incident's counted state, its zone read from its site: a Core statement
    made once, as `_upsert`, for the write every report makes."""
    table, sites = CountedIncident.__table__, Site.__table__
    insert = postgresql.insert if dialect_name == "postgresql" else sqlite.insert
    return (insert(table).from_select(
        ["incident_id", "organization_id", "zone", "state"],
        select(bindparam("incident_id", type_=Integer), bindparam("organization_id", type_=Integer),
               sites.c.timezone, bindparam("state", type_=JSON))
        .where(sites.c.id == bindparam("site_id", type_=Integer)))
        .on_conflict_do_nothing().returning(table.c.zone))

