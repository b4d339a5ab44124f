"""What one incident adds to the tallies: its *state* (the counted fields,
its local month and hour of the week at its site, its close time, and a
summary of its root causes, actions, recordable cases and its injured or
ill people's parts of the body), read from the database (`read_states`),
and the sums that state adds (`contributions`). A change moves the tallies
by the difference between the state as counted (`analytics_counted`) and
the new one (`difference`)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import Column, Select, Table, func, inspect, select
from sqlalchemy.orm import Session
from sqlalchemy.sql import visitors

from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.incidents.models import Incident
from ehs_core.investigation.models import RootCause
from ehs_core.sites.models import Site
from ehs_core.sites.zones import server_zone, site_zone
from ehs_plugins.analytics.figures import injury_figures
from ehs_plugins.analytics.months import date_month, hour_of_week, month_of, zone_key

MICROSECOND = dt.timedelta(microseconds=1)
DAY = dt.timedelta(days=1)
ALL_TIME = 0  # the month of the `status` tallies
# What an incident's state is made of: its own fields and three kinds of rows hanging off it.
SOURCES = ("incident", "cause", "action", "case")
# Kinds also kept per quarter (kind.q) and year (kind.y), their month the
# first of the quarter or year: a long period reads a few rows per year.
ROLLED_UP = frozenset({"place", "severity", "heat", "heatz", "cause", "causez", "body"})
# The tallies' key (k1) of the injured or ill people whose part of the body is not coded yet.
UNCODED = ""

Key = tuple[str, int, int, str, str, int]  # kind, month, site id, type, k1, k2
Sums = dict[Key, list[int]]  # key -> [n, total, closed]
State = dict[str, Any]


def close_micros(created_at: dt.datetime, closed_at: dt.datetime | None) -> int:
    """Whole microseconds from report to closure (0 while open)."""
    return (closed_at - created_at) // MICROSECOND if closed_at is not None else 0


def incident_fields(row: Any, zone: dt.tzinfo) -> State:
    """The counted fields of an incident row (site_id, area_id, type,
    severity, status, occurred_at, created_at, closed_at) placed in `zone`."""
    return {"s": row.site_id, "a": row.area_id or 0, "t": row.type, "v": row.severity, "st": row.status,
            "m": month_of(row.occurred_at, zone), "h": hour_of_week(row.occurred_at, zone),
            "z": zone_key(zone),
            "cu": close_micros(row.created_at, row.closed_at), "c": int(row.closed_at is not None)}


def new_state(row: Any, zone: dt.tzinfo) -> State:
    """The state of an incident just filed: its fields, nothing hanging off
    it yet (no root cause, action, case or injured person counted)."""
    return {**incident_fields(row, zone), "rc": {}, "ac": [], "cs": [], "bp": []}


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
    """[due month, class, due day, actions] of an incident's actions with a
    due date (rows: status, due_date, done_at, updated_at)."""
    counts: dict[tuple[int, str, int], int] = defaultdict(int)
    for row in rows:
        if row.due_date is None:
            continue
        kind = action_class(row.status, row.due_date, row.done_at or row.updated_at, zone)
        if kind is not None:
            counts[(date_month(row.due_date), kind, row.due_date.day)] += 1
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


def body_part_items(codes: Iterable[str | None]) -> list[list[Any]]:
    """[code (None: not coded yet), people] of an incident's injured or ill
    people, per part of the body."""
    counts: dict[str | None, int] = defaultdict(int)
    for code in codes:
        counts[code] += 1
    ordered = sorted(counts.items(), key=lambda item: (item[0] is None, item[0] or ""))
    return [[code, n] for code, n in ordered]


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
        # Per due month (the day only for pending ones, late or not as of
        # the day of reading) and, for a period's first and last months, per day.
        key = ("action", due_month, site, kind, action, day if action == "pending" else 0)
        sums[key] = [sums[key][0] + n, 0, 0] if key in sums else [n, 0, 0]
        sums[("action.d", due_month, site, kind, action, day)] = [n, 0, 0]
    for flags, n, days in state.get("cs", []):
        sums[("case", month, site, kind, "", flags)] = [n, days, 0]
    for code, n in state.get("bp", []):
        sums[("body", month, site, kind, UNCODED if code is None else code, 0)] = [n, 0, 0]
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
        # The registered injury figures' recordable cases (incident_id,
        # days_away, dart, lost_time) and injured people's parts of the body
        # (incident_id, code), if a provider is registered.
        figures = injury_figures(registry)
        cases: dict[int, list[Any]] = defaultdict(list)
        codes: dict[int, list[str | None]] = defaultdict(list)
        if figures is not None and _tables_exist(session, query := figures.cases()):
            found = query.subquery()
            for row in session.execute(select(found).join(Incident, Incident.id == found.c.incident_id)
                                       .where(incidents)):
                cases[row.incident_id].append(row)
        if figures is not None and figures.body_parts is not None \
                and _tables_exist(session, query := figures.body_parts()):
            found = query.subquery()
            for incident_id, code in session.execute(
                    select(found.c.incident_id, found.c.code)
                    .join(Incident, Incident.id == found.c.incident_id).where(incidents)):
                codes[incident_id].append(code)
        for incident_id, state in states.items():
            state["cs"] = case_items(cases.get(incident_id, ()))
            state["bp"] = body_part_items(codes.get(incident_id, ()))
    return states


def _tables_exist(session: Session, query: Select) -> bool:
    """Whether the tables and columns a provider's query reads exist yet (a
    plugin's migration may run after this one's backfill)."""
    columns: dict[str, set[str]] = defaultdict(set)
    for element in visitors.iterate(query):
        if isinstance(element, Column) and isinstance(element.table, Table):
            columns[element.table.name].add(element.name)
    inspector = inspect(session.connection())
    return all(inspector.has_table(name) and names <= {found["name"] for found in inspector.get_columns(name)}
               for name, names in columns.items())
