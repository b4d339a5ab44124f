"""Tallies: the statistics' sums kept up to date as incidents change, so the
overview and the analytics of callers who see every incident read a few
thousand rows (`analytics_tallies`, see models.Tally) instead of every
incident, root cause, action and injury case of the period; the incident
list of such callers reads its total from the status tallies (`totals`).

What an incident adds is a function of its *state* (`State`: the counted
fields, its local month and hour of the week at its site, its close time,
and a summary of its root causes, actions and recordable cases). Its state
as counted is kept beside it (`analytics_counted`); a change computes the
new state from the database and adds the difference (`contributions`) to
the tallies, in the request's transaction, just before it commits:

- listeners of the typed events (IncidentCreated, IncidentUpdated,
  IncidentTransitioned, RootCauseChanged, ActionCreated, ActionUpdated, the
  injury-case event the figures provider names, SiteUpdated) only note what
  changed (`Pending`); the work runs once per request, at commit, after the
  incident's number is taken, so the rows it locks are held only while the
  request commits;
- concurrency: the counted row of an incident is locked (`FOR UPDATE`)
  before its state is read, so two changes of one incident queue and the
  second sees the first's state; the tallies move by `INSERT … ON CONFLICT
  DO UPDATE SET n = n + excluded.n` in one statement per request, keys
  sorted (no deadlock between two requests), each tally kept in shards that
  add up to it (`models.Tally.shard`), so concurrent reports mostly move
  different rows instead of each waiting for the other's commit; the site zone an incident was
  placed in is re-read by the very statement that stores its state, and a
  zone changed meanwhile is caught there (`_store`);
- a site's zone change re-counts that site's incidents (`rebuild`), holding
  the counted rows' table lock for the while, so writers queue behind it;
- `ehs seed` writes in bulk without events: a seeder rebuilds everything
  once the other seeders are done (at the seed's commit);
- the analytics migration fills the tables from the rows (`rebuild`), and
  `python -m ehs_plugins.analytics.tallies CONFIG.ini` rebuilds them
  whenever in doubt (after running with the plugin disabled, or after
  changing TZ: until then statistics read the rows, see
  `stats.figures_for`). Nothing tells that the plugin was disabled for a
  while: the statistics and the list's totals are off until that rebuild."""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import (
    JSON,
    Integer,
    Select,
    bindparam,
    delete,
    func,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.db import mark_written
from ehs_core.events import (
    ActionCreated,
    ActionUpdated,
    Event,
    IncidentCreated,
    IncidentTransitioned,
    IncidentUpdated,
    OrganizationCreated,
    RootCauseChanged,
    SiteUpdated,
    before_commit,
)
from ehs_core.incidents.models import Incident
from ehs_core.investigation.models import RootCause
from ehs_core.seed import bulk_insert
from ehs_core.sites.models import Site
from ehs_core.sites.services import site_timezone
from ehs_core.sites.zones import server_zone, site_zone
from ehs_plugins.analytics.figures import injury_figures
from ehs_plugins.analytics.models import CountedIncident, Tally, TallyState

log = logging.getLogger(__name__)

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)
MICROSECOND = dt.timedelta(microseconds=1)
DAY = dt.timedelta(days=1)
ALL_TIME = 0  # the month of the `status` tallies
# The incident fields whose change moves a tally (JSON names, as in the events' changes).
COUNTED_FIELDS = frozenset({"type", "severity", "siteId", "areaId", "occurredAt"})
# What an incident's state is made of: its own fields and three kinds of rows hanging off it.
SOURCES = ("incident", "cause", "action", "case")
BATCH = 5_000
# Kinds also kept per quarter (kind.q) and year (kind.y), their month the
# first of the quarter or year: a long period reads a few rows per year.
ROLLED_UP = frozenset({"place", "severity", "heat", "heatz", "cause", "causez"})

Key = tuple[str, int, int, str, str, int]  # kind, month, site id, type, k1, k2
Sums = dict[Key, list[int]]  # key -> [n, total, closed]
State = dict[str, Any]


# --- local time -----------------------------------------------------------------------


def zone_key(zone: dt.tzinfo) -> str:
    """A name for a zone, to tell whether the server's zone changed."""
    return getattr(zone, "key", None) or f"{zone}"


@functools.lru_cache(maxsize=4096)
def month_start(month: int, zone: dt.tzinfo) -> dt.datetime:
    """The UTC instant month `month` (year x 12 + month - 1) starts in `zone`:
    its first local midnight (as `stats.utc_start`)."""
    return dt.datetime(month // 12, month % 12 + 1, 1, tzinfo=zone).astimezone(dt.UTC)


def month_of(instant: dt.datetime, zone: dt.tzinfo) -> int:
    """The local month an instant falls in: the one between its start and the
    next month's start (see `month_start`)."""
    local = instant.astimezone(zone)
    month = local.year * 12 + local.month - 1
    if instant < month_start(month, zone):
        return month - 1
    if instant >= month_start(month + 1, zone):
        return month + 1
    return month


def hour_of_week(instant: dt.datetime, zone: dt.tzinfo) -> int:
    """Monday 00:00-00:59 local = 0 … Sunday 23:00-23:59 = 167, as
    `sqltime.hour_of_week` computes it from the UTC seconds plus the zone's
    offset at the instant (1970-01-01 was a Thursday, hour 72 of its week)."""
    offset = instant.astimezone(zone).utcoffset() or dt.timedelta()
    seconds = (instant - EPOCH) // SECOND + int(offset.total_seconds())
    return (seconds // 3600 + 72) % 168


def date_month(day: dt.date) -> int:
    return day.year * 12 + day.month - 1


def close_micros(created_at: dt.datetime, closed_at: dt.datetime | None) -> int:
    """Whole microseconds from report to closure (0 while open)."""
    return (closed_at - created_at) // MICROSECOND if closed_at is not None else 0


# --- an incident's state and what it adds -----------------------------------------------


def incident_fields(row: Any, zone: dt.tzinfo) -> State:
    """The counted fields of an incident row (site_id, area_id, type,
    severity, status, occurred_at, created_at, closed_at) placed in `zone`."""
    return {"s": row.site_id, "a": row.area_id or 0, "t": row.type, "v": row.severity, "st": row.status,
            "m": month_of(row.occurred_at, zone), "h": hour_of_week(row.occurred_at, zone),
            "z": zone_key(zone),
            "cu": close_micros(row.created_at, row.closed_at), "c": int(row.closed_at is not None)}


def action_class(status: str, due: dt.date, finished: dt.datetime | None, zone: dt.tzinfo) -> str | None:
    """on_time or late (done or verified: finished before the end of the due
    day in the server's zone, or not), pending (open or in progress; late
    or not is decided on the day of reading), None (cancelled)."""
    if status in PENDING:
        return "pending"
    if status in (ActionStatus.done, ActionStatus.verified) and finished is not None:
        due_end = dt.datetime.combine(due + DAY, dt.time(), zone).astimezone(dt.UTC)
        return "on_time" if finished < due_end else "late"
    return None


def action_items(rows: Iterable[Any], zone: dt.tzinfo) -> list[list[Any]]:
    """[due month, class, due day (pending only, else 0), actions] of an
    incident's actions with a due date (rows: status, due_date, done_at, updated_at)."""
    counts: dict[tuple[int, str, int], int] = defaultdict(int)
    for row in rows:
        if row.due_date is None:
            continue
        kind = action_class(row.status, row.due_date, row.done_at or row.updated_at, zone)
        if kind is not None:
            counts[(date_month(row.due_date), kind, row.due_date.day if kind == "pending" else 0)] += 1
    return [[*key, n] for key, n in sorted(counts.items())]


def case_items(rows: Iterable[Any]) -> list[list[int]]:
    """[DART 1 + lost time 2, cases, days away] of an incident's recordable
    cases (rows: days_away, dart, lost_time)."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        item = counts[int(bool(row.dart)) + 2 * int(bool(row.lost_time))]
        item[0] += 1
        item[1] += row.days_away or 0
    return [[flags, n, days] for flags, (n, days) in sorted(counts.items())]


def contributions(state: State) -> Sums:
    """What an incident in `state` adds to the tallies."""
    site, kind, month = state["s"], state["t"], state["m"]
    zone = state["z"]
    sums: Sums = {
        ("count", month, site, kind, "", 0): [1, state["cu"], state["c"]],
        ("place", month, site, kind, "", state["a"]): [1, state["cu"], state["c"]],
        ("severity", month, site, kind, state["v"], 0): [1, 0, 0],
        ("heat", month, site, kind, "", state["h"]): [1, 0, 0],
        ("heatz", month, 0, zone, "", state["h"]): [1, 0, 0],
        ("status", ALL_TIME, site, kind, state["st"], 0): [1, state["cu"], state["c"]],
    }
    for category, n in state.get("rc", {}).items():
        sums[("cause", month, site, kind, category, 0)] = [n, 0, 0]
        sums[("causez", month, 0, zone, category, 0)] = [n, 0, 0]
    for due_month, action, day, n in state.get("ac", []):
        sums[("action", due_month, site, kind, action, day)] = [n, 0, 0]
    for flags, n, days in state.get("cs", []):
        sums[("case", month, site, kind, "", flags)] = [n, days, 0]
    # The figures read over long periods are also kept per quarter and year.
    for (tallied, first, *rest), values in list(sums.items()):
        if tallied in ROLLED_UP:
            sums[(f"{tallied}.q", first - first % 3, *rest)] = values
            sums[(f"{tallied}.y", first - first % 12, *rest)] = values
    return sums


def difference(old: State | None, new: State | None) -> Sums:
    """new minus old, without the keys that do not move."""
    moved: Sums = {key: list(values) for key, values in (contributions(new) if new else {}).items()}
    for key, values in (contributions(old) if old else {}).items():
        item = moved.setdefault(key, [0, 0, 0])
        for i, value in enumerate(values):
            item[i] -= value
    return {key: values for key, values in moved.items() if any(values)}


# --- reading states from the database ------------------------------------------------------


def cases_query(registry: Registry) -> Select | None:
    """The registered injury figures' recordable cases (incident_id,
    days_away, dart, lost_time), if a provider is registered."""
    figures = injury_figures(registry)
    return figures.cases() if figures is not None else None


INCIDENT_COLUMNS = (Incident.id, Incident.organization_id, Incident.site_id, Incident.area_id, Incident.type,
                    Incident.severity, Incident.status, Incident.occurred_at, Incident.created_at,
                    Incident.closed_at)


def read_states(session: Session, registry: Registry, incidents: Any, sources: Iterable[str] = SOURCES,
                ids: Iterable[int] = ()) -> dict[int, State]:
    """The states of the incidents `incidents` (a condition on Incident)
    selects, built from the database: the parts named by `sources` (the rest
    left out; without "incident", the states of `ids`)."""
    sources = set(sources)
    states: dict[int, State] = {incident_id: {} for incident_id in ids}
    if "incident" in sources:
        for row in session.execute(select(*INCIDENT_COLUMNS, Site.timezone)
                                   .join(Site, Site.id == Incident.site_id).where(incidents)):
            states[row.id] = incident_fields(row, site_zone(row.timezone, registry))
    if "cause" in sources:
        for state in states.values():
            state["rc"] = {}
        for incident_id, category, n in session.execute(
                select(RootCause.incident_id, RootCause.category, func.count())
                .join(Incident, Incident.id == RootCause.incident_id).where(incidents)
                .group_by(RootCause.incident_id, RootCause.category)):
            states[incident_id]["rc"][category] = n
    if "action" in sources:
        server = server_zone(registry)
        actions: dict[int, list[Any]] = defaultdict(list)
        for row in session.execute(
                select(CorrectiveAction.incident_id, CorrectiveAction.status, CorrectiveAction.due_date,
                       CorrectiveAction.done_at, CorrectiveAction.updated_at)
                .join(Incident, Incident.id == CorrectiveAction.incident_id)
                .where(incidents, CorrectiveAction.due_date.is_not(None))):
            actions[row.incident_id].append(row)
        for incident_id, state in states.items():
            state["ac"] = action_items(actions.get(incident_id, ()), server)
    if "case" in sources:
        query = cases_query(registry)
        cases: dict[int, list[Any]] = defaultdict(list)
        if query is not None and _tables_exist(session, query):
            found = query.subquery()
            for row in session.execute(select(found).join(Incident, Incident.id == found.c.incident_id)
                                       .where(incidents)):
                cases[row.incident_id].append(row)
        for incident_id, state in states.items():
            state["cs"] = case_items(cases.get(incident_id, ()))
    return states


def _tables_exist(session: Session, query: Select) -> bool:
    """Whether the tables a provider's query reads exist yet (a plugin's
    migration may run after this one's backfill)."""
    names = {table.name for table in query.get_final_froms() if hasattr(table, "name")}
    inspector = inspect(session.connection())
    return all(inspector.has_table(name) for name in names)


# --- writing ------------------------------------------------------------------------------


@functools.cache
def _upsert(dialect_name: str) -> Any:
    """INSERT … ON CONFLICT DO UPDATE adding to a tally: one statement,
    made once, run with every row's values (a multi-row VALUES built per
    request cost a new SQL compilation each time: half of a create)."""
    table = Tally.__table__
    statement = (postgresql.insert if dialect_name == "postgresql" else sqlite.insert)(table)
    return statement.on_conflict_do_update(
        index_elements=[c.name for c in table.primary_key.columns],
        set_={"n": table.c.n + statement.excluded.n, "total": table.c.total + statement.excluded.total,
              "closed": table.c.closed + statement.excluded.closed})


# PostgreSQL: the same as `_upsert`, every row in one statement, the rows
# as one JSON parameter (one statement to bind and run where psycopg's
# executemany sent one per row: with the counted state's INSERT, a sixth
# of a report's instructions; arrays, one per column, cost as much again in
# psycopg's array dumper). Rows go in the JSON array's order.
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
# `_store` does) and, if that zone is the one it was placed in (:zone), the
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


def _store(session: Session, organization_id: int, incident_id: int, state: State, exists: bool) -> Any:
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
    made once (built per report through the ORM, it cost as much as the
    tallies' own statement)."""
    table, sites = CountedIncident.__table__, Site.__table__
    insert = postgresql.insert if dialect_name == "postgresql" else sqlite.insert
    return (insert(table).from_select(
        ["incident_id", "organization_id", "zone", "state"],
        select(bindparam("incident_id", type_=Integer), bindparam("organization_id", type_=Integer),
               sites.c.timezone, bindparam("state", type_=JSON))
        .where(sites.c.id == bindparam("site_id", type_=Integer)))
        .on_conflict_do_nothing().returning(table.c.zone))


KEPT = object()


class Pending:
    """What changed in one request, counted at its commit (`flush`)."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.created: dict[int, Incident] = {}
        self.dirty: dict[int, set[str]] = defaultdict(set)
        self.sites: set[int] = set()

    def flush(self) -> None:
        request = self.request
        session: Session = request.dbsession
        registry = request.registry
        session.flush()
        if self._count_one_report(session, registry):
            return
        for site_id in sorted(self.sites):
            organization_id = session.execute(select(Site.organization_id).where(Site.id == site_id)).scalar()
            rebuild(session, registry, organization_id, site_id=site_id)
        moved: dict[int, Sums] = defaultdict(dict)
        for organization_id, old, new in self._recount(session, registry):
            for key, values in difference(old, new).items():
                item = moved[organization_id].setdefault(key, [0, 0, 0])
                for i, value in enumerate(values):
                    item[i] += value
        for organization_id in sorted(moved):
            move_tallies(session, organization_id,
                         {key: values for key, values in moved[organization_id].items() if any(values)})

    def _count_one_report(self, session: Session, registry: Registry) -> bool:
        """A request that filed one report and changed nothing else (the
        common write), on PostgreSQL: its counted state and the tallies it
        adds to in one statement (`COUNT_REPORT`), one round trip instead of
        two. False when that does not apply or the site's zone changed
        since it was read (then `_recount` places the report again)."""
        if (self.sites or len(self.created) != 1 or set(self.dirty) - set(self.created)
                or any(self.dirty.values()) or session.get_bind().dialect.name != "postgresql"):
            return False
        (incident_id, incident), = self.created.items()
        zone = site_timezone(self.request, incident.site_id)  # no statement for a signed-in caller
        state = {**incident_fields(incident, site_zone(zone, registry)), "rc": {}, "ac": [], "cs": []}
        rows = [dict(zip(UPSERT_COLUMNS, (*key, *values), strict=True))
                for key, values in sorted(difference(None, state).items())]
        organization_id = incident.organization_id
        written = session.connection().execute(COUNT_REPORT, {
            "incident_id": incident_id, "organization_id": organization_id, "site_id": incident.site_id,
            "state": json.dumps(state), "zone": zone, "rows": json.dumps(rows)}).first()
        mark_written(session)
        if written is None:
            log.warning("incident %s was counted by another request meanwhile", incident_id)
        elif written.zone != zone:
            # The site's zone changed since it was read: stored, but the
            # tallies not moved; placed in the zone stored, as `_store` does.
            state = {**state, **incident_fields(incident, site_zone(written.zone, registry))}
            _store(session, organization_id, incident_id, state, True)
            move_tallies(session, organization_id, difference(None, state))
        return True

    def _recount(self, session: Session, registry: Registry) -> Iterator[tuple[int, State | None, State]]:
        """(organization, state as counted, new state) of each incident
        changed in the request, its new state stored."""
        existing = sorted(set(self.dirty) - set(self.created))
        counted: dict[int, Any] = {}
        if existing:
            # Lock what is counted of each incident (in id order): a
            # concurrent change of the same incident waits for this commit
            # and then reads this one's state. The incident's row is this
            # request's own (flushed) version when its fields changed; its
            # site's zone is checked again when the state is stored.
            counted = {row.incident_id: row for row in session.execute(
                select(CountedIncident.incident_id, CountedIncident.state, *INCIDENT_COLUMNS, Site.timezone)
                .join(Incident, Incident.id == CountedIncident.incident_id)
                .join(Site, Site.id == Incident.site_id)
                .where(CountedIncident.incident_id.in_(existing)).order_by(CountedIncident.incident_id)
                .with_for_update(of=CountedIncident))}
        for incident_id, incident in sorted(self.created.items()):
            zone = site_timezone(self.request, incident.site_id)  # no statement for a signed-in caller
            state = {**incident_fields(incident, site_zone(zone, registry)), "rc": {}, "ac": [], "cs": []}
            if self.dirty.get(incident_id):  # rows added to it in the same request
                children = self.dirty[incident_id] - {"incident"}
                state.update(read_states(session, registry, Incident.id == incident_id, children,
                                         ids=[incident_id])[incident_id])
            stored = self._store(session, registry, incident, state, exists=False, placed_in=zone)
            if stored is not None:
                yield incident.organization_id, None, stored
        for incident_id in existing:
            row = counted.get(incident_id)
            if row is None:  # never counted (the plugin was disabled meanwhile): count it whole
                state = read_states(session, registry, Incident.id == incident_id)[incident_id]
                incident = session.get(Incident, incident_id)
                stored = self._store(session, registry, incident, state, exists=False,
                                     placed_in=session.get(Site, incident.site_id).timezone)
                if stored is not None:
                    yield incident.organization_id, None, stored
                continue
            sources = self.dirty[incident_id]
            state = dict(row.state)
            if "incident" in sources:
                state.update(incident_fields(row, site_zone(row.timezone, registry)))
            children = sources - {"incident"}
            if children:
                state.update(read_states(session, registry, Incident.id == incident_id, children,
                                         ids=[incident_id])[incident_id])
            stored = self._store(session, registry, row, state, exists=True,
                                 placed_in=row.timezone if "incident" in sources else KEPT)
            yield row.organization_id, row.state, stored

    def _store(self, session: Session, registry: Registry, incident: Any, state: State, *, exists: bool,
               placed_in: Any) -> State | None:
        """Store `state`, whose incident fields were placed in the site zone
        `placed_in` (KEPT: taken from the stored state, placed in the zone
        stored with it); if the site's zone turns out to have changed
        meanwhile, place the incident again."""
        written = _store(session, incident.organization_id, incident.id, state, exists)
        if written is None:
            log.warning("incident %s was counted by another request meanwhile", incident.id)
            return None
        if placed_in is not KEPT and written.zone != placed_in:
            state = {**state, **incident_fields(incident, site_zone(written.zone, registry))}
            _store(session, incident.organization_id, incident.id, state, True)
        return state


# Where a request keeps its `Pending` counts (in its environ), from its first change on.
PENDING_COUNTS = "ehs.analytics.pending"


def pending(request: Request) -> Pending:
    """The request's pending counts, flushed just before it commits.

    Kept in the environ, which pyramid_retry hands to the next attempt of a
    request that failed (a serialization failure, a dropped connection):
    the counts of an earlier attempt, whose transaction was rolled back
    with its flush, are not this attempt's (they were, and its changes
    never reached the tallies)."""
    found = request.environ.get(PENDING_COUNTS)
    if found is None or found.request is not request:
        found = request.environ[PENDING_COUNTS] = Pending(request)
        before_commit(request, found.flush)
    return found


def counts_pending(request: Request) -> bool:
    """This request changed what the tallies count, not moved yet (they
    move as it commits)."""
    found = request.environ.get(PENDING_COUNTS)
    return found is not None and found.request is request


def incident_created(event: IncidentCreated) -> None:
    pending(event.request).created[event.incident.id] = event.incident


def incident_updated(event: IncidentUpdated) -> None:
    if COUNTED_FIELDS & set(event.changes):
        pending(event.request).dirty[event.incident.id].add("incident")


def incident_transitioned(event: IncidentTransitioned) -> None:
    pending(event.request).dirty[event.incident.id].add("incident")


def root_cause_changed(event: RootCauseChanged) -> None:
    pending(event.request).dirty[event.incident_id].add("cause")


def action_changed(event: ActionCreated | ActionUpdated) -> None:
    pending(event.request).dirty[event.incident.id].add("action")


def case_changed(event: Event) -> None:
    """The injury figures' provider names the events that change an
    incident's cases (`changed_by`; each has the `incident`)."""
    figures = injury_figures(event.request.registry)
    if figures is not None and figures.changed_by and isinstance(event, figures.changed_by):
        pending(event.request).dirty[event.incident.id].add("case")


def site_updated(event: SiteUpdated) -> None:
    if "timezone" in event.changes:
        pending(event.request).sites.add(event.site.id)


def organization_created(event: OrganizationCreated) -> None:
    """A new organization has nothing to count: its (empty) tallies are complete."""
    session = event.request.dbsession
    session.flush()
    session.add(TallyState(organization_id=event.organization.id,
                           server_zone=zone_key(server_zone(event.request.registry))))


# --- rebuilding ----------------------------------------------------------------------------


def rebuild(session: Session, registry: Registry, organization_id: int, *, site_id: int | None = None) -> int:
    """Count the organization's incidents (or one site's) again from the
    rows, in the session's transaction; returns how many. Writers of counts
    wait meanwhile (PostgreSQL: a lock on the counted rows' table; SQLite
    has one writer at a time anyway). A site's incidents are taken out of
    the tallies as they were counted and put back as they are now (some
    tallies sum several sites); an organization's tallies are written anew."""
    postgresql = session.get_bind().dialect.name == "postgresql"
    if postgresql:
        session.execute(text("LOCK TABLE analytics_counted IN EXCLUSIVE MODE"))
    session.flush()
    chosen = Incident.organization_id == organization_id
    if site_id is not None:
        chosen = chosen & (Incident.site_id == site_id)
    zones = dict(session.execute(select(Site.id, Site.timezone)
                                 .where(Site.organization_id == organization_id)).all())
    states = read_states(session, registry, chosen)
    sums: Sums = {}

    def add(state: State, sign: int) -> None:
        for key, values in contributions(state).items():
            item = sums.setdefault(key, [0, 0, 0])
            for i, value in enumerate(values):
                item[i] += sign * value

    for state in states.values():
        add(state, 1)
    if site_id is None:
        session.execute(delete(Tally).where(Tally.organization_id == organization_id))
        session.execute(delete(CountedIncident).where(CountedIncident.organization_id == organization_id))
    else:
        counted = CountedIncident.incident_id.in_(select(Incident.id).where(chosen))
        for state in session.execute(select(CountedIncident.state).where(counted)).scalars():
            add(state, -1)
        session.execute(delete(CountedIncident).where(counted))
    # One row an incident: by COPY on PostgreSQL (the core's bulk writer),
    # a million of them at the end of `ehs seed` (issue #42 item 7).
    bulk_insert(session, CountedIncident, [
        {"incident_id": incident_id, "organization_id": organization_id,
         "zone": zones.get(state["s"]), "state": state}
        for incident_id, state in states.items()], BATCH, copy=True)
    moved = sorted((key, values) for key, values in sums.items() if any(values))
    for offset in range(0, len(moved), BATCH):
        batch = dict(moved[offset:offset + BATCH])
        if site_id is None:
            bulk_insert(session, Tally, [
                {"organization_id": organization_id, "kind": kind, "month": month, "site_id": site,
                 "type": type_, "k1": k1, "k2": k2, "n": n, "total": total, "closed": closed}
                for (kind, month, site, type_, k1, k2), (n, total, closed) in batch.items()],
                BATCH, copy=True)
        else:
            move_tallies(session, organization_id, batch)
    if site_id is None:
        session.execute(delete(TallyState).where(TallyState.organization_id == organization_id))
        session.add(TallyState(organization_id=organization_id, server_zone=zone_key(server_zone(registry))))
        session.flush()
        if postgresql:  # fresh planner statistics for the new rows
            session.execute(text("ANALYZE analytics_tallies"))
            session.execute(text("ANALYZE analytics_counted"))
    log.info("tallies of organization %s%s rebuilt from %d incidents", organization_id,
             f" site {site_id}" if site_id is not None else "", len(states))
    return len(states)


def rebuild_all(session: Session, registry: Registry) -> int:
    """Rebuild the tallies of every organization; returns the incidents counted."""
    from ehs_core.users.models import Organization

    organizations = session.execute(select(Organization.id).order_by(Organization.id)).scalars().all()
    return sum(rebuild(session, registry, organization_id) for organization_id in organizations)


def seed_tallies(ctx: Any) -> dict[str, int]:
    """Seeder for `ehs seed`: the seeded rows come in bulk, without events;
    count them once every seeder has written its rows (at the seed's commit)."""
    from sqlalchemy import event

    done = []

    def count(session: Session) -> None:
        if not done and not session.in_nested_transaction():
            done.append(rebuild(session, ctx.registry, ctx.organization_id))

    event.listen(ctx.session, "before_commit", count)
    return {}


def main(argv: list[str] | None = None) -> int:
    """`python -m ehs_plugins.analytics.tallies CONFIG.ini`: rebuild every
    organization's tallies from the rows, in one transaction."""
    from pyramid.paster import get_appsettings, setup_logging

    from ehs_core.config import configure

    parser = argparse.ArgumentParser(prog="python -m ehs_plugins.analytics.tallies", description=main.__doc__)
    parser.add_argument("config", help="path to the ini file")
    args = parser.parse_args(argv)
    setup_logging(args.config)
    registry = configure(dict(get_appsettings(args.config))).registry
    with registry["dbsession_factory"]() as session, session.begin():
        counted = rebuild_all(session, registry)
    print(f"tallies rebuilt from {counted} incidents")
    return 0


def includeme(config: Configurator) -> None:
    for listener, event_type in (
            (incident_created, IncidentCreated), (incident_updated, IncidentUpdated),
            (incident_transitioned, IncidentTransitioned), (root_cause_changed, RootCauseChanged),
            (action_changed, ActionCreated), (action_changed, ActionUpdated),
            (site_updated, SiteUpdated), (organization_created, OrganizationCreated),
            # Any event: the injury figures' provider (registered at commit,
            # maybe by a plugin included later) names its own.
            (case_changed, Event)):
        config.add_subscriber(listener, event_type)
    config.add_seeder("analytics", seed_tallies)


if __name__ == "__main__":
    raise SystemExit(main())
