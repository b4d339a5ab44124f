"""Realistic synthetic data for benchmarks and demonstrations: `ehs seed`.

Everything goes through the mapped tables in batches (COPY on PostgreSQL,
with each column's bind processing and Python-side defaults; executemany in
the one transaction on SQLite: issue #42 item 7), so the rows look exactly
like the ones the API writes: users of
every role, sites with areas and establishment fields, incidents of every
type, severity and status with the history their status implies
(investigations, root causes, corrective actions, comments and the audit
trail), numbered 1..N without gaps and spread over the last Y years.

Plugins add their own data with the `add_seeder` directive: each seeder is
called as `seeder(context)` after the core's rows are written, in the same
transaction, and returns {table: rows written} (the OSHA plugin writes injury
cases and monthly hours this way). The core knows nothing about them.

The output is determined by `seed` (random.Random) and the current day.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from psycopg import sql
from pyramid.config import Configurator
from pyramid.registry import Registry
from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session

from ehs_core import audit
from ehs_core.actions.models import ActionStatus, CorrectiveAction
from ehs_core.audit.models import AuditEntry
from ehs_core.auth.passwords import passwords
from ehs_core.incidents.models import Comment, Incident, IncidentCounter, IncidentType, Severity, Status
from ehs_core.investigation.models import Investigation, RootCause
from ehs_core.security import Role
from ehs_core.sites.models import Area, AreaKind, Site
from ehs_core.users.models import Organization, User

log = logging.getLogger(__name__)

BATCH = 5_000
EMAIL_DOMAIN = "seed.example"
DAY = dt.timedelta(days=1)
HOUR = dt.timedelta(hours=1)


class SeedError(Exception):
    """The database cannot be seeded as asked (e.g. it already has incidents)."""


@dataclass(frozen=True)
class SeedOptions:
    incidents: int
    years: float = 3
    sites: int = 5
    seed: int = 1
    password: str | None = None
    force: bool = False
    batch: int = BATCH


@dataclass(slots=True)
class SeededIncident:
    """What seeders get to know about each incident written."""

    id: int
    number: int
    type: str
    severity: str
    status: str
    occurred_at: dt.datetime
    offset_minutes: int
    created_at: dt.datetime
    site_id: int
    area_id: int | None
    title: str


@dataclass
class SeedContext:
    """Handed to each seeder: the open session (one transaction), the random
    source, the moment the data ends, and what the core wrote."""

    session: Session
    registry: Registry
    rng: random.Random
    options: SeedOptions
    now: dt.datetime
    start: dt.datetime
    organization_id: int
    sites: list[Site]
    users: dict[str, list[int]]
    incidents: list[SeededIncident] = field(default_factory=list)

    def insert(self, model: type, rows: Sequence[dict[str, Any]], ids: bool = False,
               copy: bool = True) -> list[int]:
        """Bulk write in batches; with `ids`, each row first gets a primary
        key reserved for it, and the keys are returned in row order. On
        PostgreSQL the batches go out by COPY (see `bulk_insert`): seeders
        get it without asking."""
        return bulk_insert(self.session, model, rows, self.options.batch, ids, copy)


Seeder = Callable[[SeedContext], dict[str, int] | None]


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


def creation_entry(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`audit.diff({}, values)`, the entry of a row just made (every field
    that has a value), without comparing each field twice: the seed writes
    ten million of them at a million incidents."""
    jsonable = audit.jsonable
    return {key: {"old": None, "new": jsonable(value)} for key, value in values.items() if value is not None}


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


# --- vocabulary ---------------------------------------------------------------

FIRST_NAMES = ("Ada", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jamal", "Kira",
               "Luis", "Mei", "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sam", "Tariq", "Uma", "Victor",
               "Wen", "Ximena", "Yusuf", "Zoe")
LAST_NAMES = ("Adams", "Brooks", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Haddad", "Ivanova",
              "Johnson", "Kim", "Lopez", "Murphy", "Nguyen", "Okafor", "Patel", "Rossi", "Silva",
              "Tanaka", "Walsh")
SITE_PLACES = (
    ("Riverside Plant", "1200 River Rd", "Dayton", "OH", "45402", "America/New_York"),
    ("North Distribution Center", "88 Logistics Pkwy", "Joliet", "IL", "60431", "America/Chicago"),
    ("Gulf Terminal", "5 Harbor Way", "Baytown", "TX", "77520", "America/Chicago"),
    ("Mesa Assembly", "4100 E Valley Blvd", "Mesa", "AZ", "85204", "America/Phoenix"),
    ("Cascade Mill", "300 Timber Ln", "Eugene", "OR", "97402", "America/Los_Angeles"),
    ("Piedmont Works", "77 Industrial Dr", "Greenville", "SC", "29605", "America/New_York"),
    ("Front Range Fabrication", "950 Foundry St", "Pueblo", "CO", "81003", "America/Denver"),
    ("Lakeshore Foods", "12 Dock St", "Green Bay", "WI", "54303", "America/Chicago"),
    ("Bayou Chemicals", "2 Refinery Rd", "Lake Charles", "LA", "70601", "America/Chicago"),
    ("Valley Packaging", "640 Orchard Ave", "Fresno", "CA", "93706", "America/Los_Angeles"),
)
INDUSTRIES = (("336390", "Other motor vehicle parts manufacturing"), ("493110", "General warehousing"),
              ("325211", "Plastics material and resin manufacturing"), ("311999", "Food manufacturing"),
              ("332710", "Machine shops"), ("322211", "Corrugated box manufacturing"))
BUILDINGS = ("Main Building", "Warehouse", "Workshop", "Utilities Block")
AREAS = (("Loading Dock", AreaKind.area), ("Assembly Line 1", AreaKind.line),
         ("Assembly Line 2", AreaKind.line),
         ("Paint Shop", AreaKind.area), ("Maintenance Bay", AreaKind.area), ("Packing Line", AreaKind.line),
         ("Chemical Store", AreaKind.area), ("Office", AreaKind.other), ("Yard", AreaKind.other),
         ("Press Line", AreaKind.line), ("Cold Store", AreaKind.area), ("Boiler Room", AreaKind.other))
TITLES = {
    IncidentType.near_miss: ("Forklift nearly struck a pedestrian", "Pallet fell from racking, nobody hurt",
                             "Unsecured load shifted during transport",
                             "Worker almost slipped on spilled oil",
                             "Reversing truck close call", "Tool dropped from a mezzanine"),
    IncidentType.hazard: ("Damaged guard on conveyor", "Blocked fire exit", "Frayed electrical cable",
                          "Missing handrail on stairs", "Leaking hydraulic hose", "Poor lighting in aisle"),
    IncidentType.injury: ("Hand laceration while cutting banding", "Back strain lifting a box",
                          "Finger caught in press tooling", "Slip and fall on wet floor",
                          "Eye struck by metal fragment", "Burn from hot surface"),
    IncidentType.illness: ("Dermatitis after solvent contact", "Respiratory irritation from fumes",
                           "Heat stress on the shop floor", "Noise-induced hearing complaint",
                           "Nausea after chemical exposure"),
    IncidentType.property_damage: ("Forklift hit racking upright", "Truck damaged the dock door",
                                   "Crane load dropped onto machine", "Water leak damaged stock"),
    IncidentType.environmental: ("Diesel spill at fuel point", "Coolant released to drain",
                                 "Dust emission above permit", "Chemical drum leaking in yard"),
}
DESCRIPTIONS = (
    "It happened during the change of shift while the area was busy.",
    "The operator was following the written procedure at the time.",
    "Visibility was limited because of stacked material near the walkway.",
    "A contractor crew was working nearby on unrelated maintenance.",
    "The equipment had been reported as faulty the week before.",
    "Two people witnessed the event and gave statements to the supervisor.",
    "The floor had been cleaned shortly before and was still wet.",
    "Production was running above the usual rate to meet an order.",
    "The forklift horn and blue light were working normally.",
    "PPE was worn as required for the task.",
)
IMMEDIATE = ("Area cordoned off and supervisor informed.", "Machine locked out and tagged.",
             "First aid given on site.", "Spill contained with absorbent pads.",
             "Work stopped until the hazard was removed.", "Stock moved away from the walkway.")
LOCATION_DETAILS = ("Aisle {n}", "Bay {n}", "Dock door {n}", "Near column C{n}", "Station {n}",
                    "Rack row {n}")
INVESTIGATION_METHODS = ("5 whys", "Fishbone", "Fault tree", "ICAM", "Root cause map")
ROOT_CAUSE_CATEGORIES = ("equipment", "procedure", "training", "human factors", "environment", "management",
                         "design", "communication")
WHYS = ("The guard was removed for cleaning", "No check after maintenance", "Procedure did not cover it",
        "Training was overdue", "Supervisor was covering two areas", "Schedule pressure",
        "The hazard had been normalised")
ACTION_TITLES = ("Replace damaged guard", "Retrain the shift on the procedure", "Install mirror at junction",
                 "Mark pedestrian walkway", "Update the risk assessment", "Add inspection to checklist",
                 "Fit anti-slip flooring", "Relocate storage away from exit", "Repair lighting",
                 "Provide cut-resistant gloves")
ACTION_KINDS = ("engineering", "administrative", "ppe", "training", "elimination", "substitution")
COMMENTS = ("Photos added to the file.", "Spoke with the people involved.", "Waiting for the contractor.",
            "Discussed at the safety committee.", "Parts ordered.", "Checked again today: still fine.")

TYPE_WEIGHTS = ((IncidentType.near_miss, 34), (IncidentType.hazard, 24), (IncidentType.injury, 16),
                (IncidentType.illness, 5), (IncidentType.property_damage, 12),
                (IncidentType.environmental, 9))
SEVERITY_WEIGHTS = ((Severity.low, 40), (Severity.medium, 35), (Severity.high, 20), (Severity.critical, 5))
# Incidents age through the workflow: recent ones are still open.
STATUS_BY_AGE = (
    (3, ((Status.reported, 45), (Status.triage, 30), (Status.investigation, 12), (Status.actions, 8),
         (Status.verification, 2), (Status.closed, 3))),
    (14, ((Status.reported, 5), (Status.triage, 12), (Status.investigation, 25), (Status.actions, 33),
          (Status.verification, 10), (Status.closed, 15))),
    (60, ((Status.reported, 1), (Status.triage, 3), (Status.investigation, 10), (Status.actions, 22),
          (Status.verification, 9), (Status.closed, 55))),
    (None, ((Status.investigation, 1), (Status.actions, 1), (Status.verification, 1), (Status.closed, 97))),
)
# Reports cluster in working hours (local time of the site).
HOUR_WEIGHTS = (1, 1, 1, 1, 1, 2, 5, 8, 9, 9, 8, 7, 6, 8, 9, 8, 7, 5, 3, 2, 2, 2, 1, 1)


def weighted(rng: random.Random, pairs: Sequence[tuple[Any, int]]) -> Any:
    return rng.choices([value for value, _ in pairs], [weight for _, weight in pairs])[0]


def person_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def client_uuid(rng: random.Random, number: int) -> str:
    """A random UUID carrying the incident number in its last 32 bits, so it
    is unique even when the same seed is used again with --force."""
    return str(uuid.UUID(int=(rng.getrandbits(96) << 32) | (number & 0xFFFFFFFF), version=4))


# --- organization, users, sites --------------------------------------------------


def ensure_organization(session: Session) -> int:
    org = session.execute(select(Organization).order_by(Organization.id)).scalar()
    if org is None:
        org = Organization(name="Seeded Manufacturing Co.")
        session.add(org)
        session.flush()
    if session.get(IncidentCounter, org.id) is None:
        session.add(IncidentCounter(organization_id=org.id, last_number=0))
        session.flush()
    return org.id


def user_counts(incidents: int) -> dict[str, int]:
    return {Role.admin: 2, Role.safety_manager: max(2, incidents // 10_000),
            Role.supervisor: max(3, incidents // 2_000), Role.reporter: max(6, incidents // 400)}


def seed_users(session: Session, rng: random.Random, organization_id: int, incidents: int,
               password_hash: str | None) -> dict[str, list[int]]:
    """`{role}{n}@seed.example` for each role; users already there are reused."""
    existing = dict(session.execute(select(User.email, User.id)).all())
    now = dt.datetime.now(dt.UTC)
    rows, emails = [], []
    for role, count in user_counts(incidents).items():
        for n in range(1, count + 1):
            email = f"{role.value.replace('_', '')}{n}@{EMAIL_DOMAIN}"
            emails.append((role, email))
            if email not in existing:
                # One reporter has left: inactive users exist in real data too.
                active = not (role == Role.reporter and n == count)
                rows.append({"organization_id": organization_id, "name": person_name(rng), "email": email,
                             "role": role.value, "active": active, "password_hash": password_hash,
                             "created_at": now})
    for email, user_id in zip([r["email"] for r in rows],
                              bulk_insert(session, User, rows, ids=True), strict=True):
        existing[email] = user_id
    by_role: dict[str, list[int]] = {role.value: [] for role in Role}
    inactive = {r["email"] for r in rows if not r["active"]}
    for role, email in emails:
        if email not in inactive:
            by_role[role.value].append(existing[email])
    return by_role


def seed_sites(session: Session, rng: random.Random, organization_id: int, count: int) -> list[Site]:
    taken = set(session.execute(select(Site.name)).scalars())
    sites = []
    for n in range(count):
        name, street, city, state, zip_code, zone = SITE_PLACES[n % len(SITE_PLACES)]
        if n >= len(SITE_PLACES):
            name = f"{name} {n // len(SITE_PLACES) + 1}"
        while name in taken:
            name += " (seed)"
        taken.add(name)
        naics, industry = rng.choice(INDUSTRIES)
        site = Site(organization_id=organization_id, name=name,
                    address=f"{street}, {city}, {state} {zip_code}", timezone=zone, archived=False,
                    street_address=street, city=city, state=state,
                    zip=zip_code, naics_code=naics, industry_description=industry,
                    ein=f"{rng.randrange(10**8, 10**9)}", establishment_type=1)
        session.add(site)
        sites.append(site)
    session.flush()
    for site in sites:
        buildings = []
        for building in rng.sample(BUILDINGS, 2 + rng.randrange(2)):
            area = Area(site_id=site.id, name=building, kind=AreaKind.building, archived=False)
            session.add(area)
            buildings.append(area)
        session.flush()
        for building in buildings:
            for name, kind in rng.sample(AREAS, 3):
                session.add(Area(site_id=site.id, parent_id=building.id, name=name, kind=kind,
                                 archived=False))
    # An archived area, as sites change over the years.
    if sites:
        session.add(Area(site_id=sites[0].id, name="Old Canteen", kind=AreaKind.other, archived=True))
    session.flush()
    return sites


# --- incidents and their history ------------------------------------------------


@dataclass(slots=True)
class Draft:
    """An incident before it is written, with the events of its history."""

    occurred_at: dt.datetime
    offset: int
    site: Site
    type: str = ""
    severity: str = ""
    status: str = ""
    row: dict[str, Any] = field(default_factory=dict)
    path: list[tuple[str, dt.datetime]] = field(default_factory=list)
    lead: int | None = None


def occurrence(rng: random.Random, start: dt.datetime, now: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    span = (now - start).total_seconds()
    for _ in range(3):
        day = (start + dt.timedelta(seconds=rng.random() * span)).astimezone(zone)
        if day.weekday() < 5 or rng.random() < 0.35:  # fewer reports at weekends
            break
    hour = rng.choices(range(24), HOUR_WEIGHTS)[0]
    local = dt.datetime(day.year, day.month, day.day, hour, rng.randrange(60), tzinfo=zone)
    moment = local.astimezone(dt.UTC)
    if moment >= now:
        moment = now - dt.timedelta(minutes=rng.randrange(5, 240))
    return max(moment, start)


def status_for(rng: random.Random, age: dt.timedelta) -> str:
    for limit, weights in STATUS_BY_AGE:
        if limit is None or age.days < limit:
            return weighted(rng, weights)
    raise AssertionError("unreachable")


def workflow_path(rng: random.Random, status: str, severity: str) -> list[str]:
    """The statuses an incident went through to reach `status` (in order, after 'reported')."""
    investigate = rng.random() < 0.75
    to_actions = ["triage", "investigation", "actions"] if investigate else ["triage", "actions"]
    if status == Status.reported:
        return []
    if status == Status.triage:
        return ["triage"]
    if status == Status.investigation:
        return ["triage", "investigation"]
    if status == Status.actions:
        return to_actions
    if status == Status.verification:
        return [*to_actions, "verification"]
    if severity in (Severity.low, Severity.medium) and rng.random() < 0.45:
        return ["triage", "closed"]
    return [*to_actions, "verification", "closed"]


def timed(rng: random.Random, created: dt.datetime, now: dt.datetime,
          steps: list[str]) -> list[tuple[str, dt.datetime]]:
    """Moments for each step after `created`, squeezed to end before now."""
    gaps = []
    for step in steps:
        if step == "triage":
            gaps.append(rng.uniform(0.5, 30) * 3600)
        elif step == "closed":
            gaps.append(rng.uniform(1, 12) * 86400)
        else:
            gaps.append(rng.uniform(0.5, 8) * 86400)
    room = (now - created).total_seconds() - 60
    total = sum(gaps)
    if total > room > 0:
        gaps = [g * room / total for g in gaps]
    elif room <= 0:
        gaps = [0.0] * len(gaps)
    moments, at = [], created
    for step, gap in zip(steps, gaps, strict=True):
        at = at + dt.timedelta(seconds=gap)
        moments.append((step, at))
    return moments


def covering_order(count: int) -> list[tuple[str, str, str]]:
    """Type, severity and status for the newest incidents, so that every
    value of each appears even in a tiny data set."""
    types, severities, statuses = list(IncidentType), list(Severity), list(Status)
    return [(types[i % len(types)], severities[i % len(severities)], statuses[i % len(statuses)])
            for i in range(min(count, 24))]


class IncidentWriter:
    """Writes one batch of incidents and everything that hangs off them."""

    def __init__(self, ctx: SeedContext) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        users = ctx.users
        self.supervisors = users[Role.supervisor] + users[Role.safety_manager]
        self.managers = users[Role.safety_manager] + users[Role.admin]
        self.assignees = users[Role.supervisor] + users[Role.reporter] + users[Role.safety_manager]
        self.counts: dict[str, int] = {}

    def count(self, table: str, n: int) -> None:
        self.counts[table] = self.counts.get(table, 0) + n

    def write(self, drafts: list[Draft]) -> list[SeededIncident]:
        ctx, rng = self.ctx, self.rng
        # The word counts' trigger (migration 0013) once a batch: once a row,
        # every incident would update the same counts again in this one
        # transaction, a chain of row versions that each update walks.
        # The investigation's lead is chosen before the incident is written:
        # the incident carries its copy (investigation.services), and an
        # UPDATE of each incident afterwards would run its row triggers
        # (word counts, queues) once an investigation.
        for draft in drafts:
            investigated = any(step == "investigation" for step, _ in draft.path)
            draft.lead = rng.choice(self.supervisors) if investigated else None
            draft.row["investigation_lead_id"] = draft.lead
        ids = ctx.insert(Incident, [d.row for d in drafts], ids=True)
        self.count("incidents", len(ids))
        investigations, causes, cause_owner, comments, audits = [], [], [], [], []
        planned_actions: list[tuple[int, Draft, dt.datetime]] = []
        seeded = []
        for incident_id, draft in zip(ids, drafts, strict=True):
            row = draft.row
            seeded.append(SeededIncident(incident_id, row["number"], draft.type, draft.severity, draft.status,
                                         row["occurred_at"], draft.offset, row["created_at"], row["site_id"],
                                         row["area_id"], row["title"]))
            reported = {"title": row["title"], "type": row["type"], "severity": row["severity"],
                        "siteId": row["site_id"], "areaId": row["area_id"],
                        "locationDetail": row["location_detail"], "description": row["description"],
                        "immediateAction": row["immediate_action"], "occurredAt": row["occurred_at"],
                        "anonymous": row["anonymous"]}
            audits.append(self.audit_row(incident_id, row["created_at"], row["reporter_id"],
                                         "incident.created", creation_entry(reported)))
            previous = Status.reported.value
            for step, at in draft.path:
                actor = rng.choice(self.managers if step == "closed" and previous == "verification"
                                   else self.supervisors)
                changes: dict[str, Any] = {"status": {"old": previous, "new": step}}
                if step == "closed":
                    changes["closedAt"] = {"old": None, "new": audit.jsonable(at)}
                if rng.random() < 0.3:
                    note = rng.choice(COMMENTS)
                    changes["note"] = {"old": None, "new": note}
                    comments.append({"incident_id": incident_id, "author_id": actor, "body": note,
                                     "transition_to": step, "created_at": at})
                audits.append(self.audit_row(incident_id, at, actor, "incident.transitioned", changes))
                previous = step
                if step == "investigation":
                    investigations.append(self.investigation(incident_id, draft, at, audits))
                    for _ in range(self.cause_count(draft)):
                        causes.append(self.root_cause(incident_id, at))
                        cause_owner.append(incident_id)
                elif step == "actions":
                    planned_actions.append((incident_id, draft, at))
            for _ in range(rng.choice((0, 0, 1, 1, 2))):
                created = draft.row["created_at"] + dt.timedelta(hours=rng.uniform(1, 72))
                if created < ctx.now:
                    comments.append({"incident_id": incident_id, "author_id": rng.choice(self.assignees),
                                     "body": rng.choice(COMMENTS), "transition_to": None,
                                     "created_at": created})
        ctx.insert(Investigation, investigations)
        self.count("investigations", len(investigations))
        cause_ids = ctx.insert(RootCause, causes, ids=True)
        self.count("root_causes", len(cause_ids))
        causes_of: dict[int, list[int]] = {}
        for cause_id, incident_id, cause in zip(cause_ids, cause_owner, causes, strict=True):
            causes_of.setdefault(incident_id, []).append(cause_id)
            audits.append(self.audit_row(incident_id, cause["created_at"], rng.choice(self.supervisors),
                                         "root_cause.created",
                                         creation_entry({"category": cause["category"],
                                                         "description": cause["description"],
                                                         "whys": cause["whys"]})
                                         | {"id": {"old": None, "new": cause_id}}))
        action_rows, action_audits = [], []
        for incident_id, draft, at in planned_actions:
            for row, updates in self.actions(incident_id, draft, at, causes_of.get(incident_id, [])):
                action_rows.append(row)
                action_audits.append((row, updates))
        action_ids = ctx.insert(CorrectiveAction, action_rows, ids=True)
        self.count("corrective_actions", len(action_ids))
        for action_id, (row, updates) in zip(action_ids, action_audits, strict=True):
            data = {"title": row["title"], "description": row["description"], "kind": row["kind"],
                    "assigneeId": row["assignee_id"], "dueDate": row["due_date"],
                    "rootCauseId": row["root_cause_id"], "status": ActionStatus.open.value}
            audits.append(self.audit_row(row["incident_id"], row["created_at"], rng.choice(self.supervisors),
                                         "action.created",
                                         creation_entry(data) | {"id": {"old": None, "new": action_id}}))
            for at, actor, old, new in updates:
                audits.append(self.audit_row(row["incident_id"], at, actor, "action.updated",
                                             {"status": {"old": old, "new": new},
                                              "id": {"old": action_id, "new": action_id}}))
        ctx.insert(Comment, comments)
        self.count("comments", len(comments))
        audits.sort(key=lambda a: (a["incident_id"], a["at"]))
        ctx.insert(AuditEntry, audits)
        self.count("audit_entries", len(audits))
        return seeded

    @staticmethod
    def audit_row(incident_id: int, at: dt.datetime, actor: int | None, action: str,
                  changes: dict[str, Any]) -> dict[str, Any]:
        return {"incident_id": incident_id, "at": at, "actor_id": actor, "action": action, "changes": changes}

    def cause_count(self, draft: Draft) -> int:
        if draft.status == Status.investigation:
            return self.rng.choice((0, 0, 1, 2))
        # Past investigation on the way to actions: at least one cause (the workflow needs it).
        return self.rng.choice((1, 1, 2, 3))

    def investigation(self, incident_id: int, draft: Draft, at: dt.datetime,
                      audits: list[dict[str, Any]]) -> dict[str, Any]:
        rng = self.rng
        completed = draft.status != Status.investigation and rng.random() < 0.9
        row = {"incident_id": incident_id, "lead_id": draft.lead,
               "method": rng.choice(INVESTIGATION_METHODS),
               "summary": " ".join(rng.sample(DESCRIPTIONS, 2)), "completed": completed,
               "created_at": at, "updated_at": at}
        audits.append(self.audit_row(incident_id, at, row["lead_id"], "investigation.created",
                                     creation_entry({"leadId": row["lead_id"], "method": row["method"],
                                                     "summary": row["summary"], "completed": completed})))
        return row

    def root_cause(self, incident_id: int, at: dt.datetime) -> dict[str, Any]:
        rng = self.rng
        moment = min(at + dt.timedelta(hours=rng.uniform(1, 48)), self.ctx.now)
        return {"incident_id": incident_id, "category": rng.choice(ROOT_CAUSE_CATEGORIES),
                "description": rng.choice(DESCRIPTIONS), "whys": rng.sample(WHYS, rng.randrange(0, 5)),
                "created_at": moment}

    def actions(self, incident_id: int, draft: Draft, at: dt.datetime,
                causes: list[int]) -> Iterable[tuple[dict[str, Any], list[tuple[Any, ...]]]]:
        """Actions created when the incident entered 'actions', with statuses
        its current status allows (verification needs none pending, closing
        needs every uncancelled one verified)."""
        rng, now = self.rng, self.ctx.now
        count = rng.choice((1, 1, 2, 2, 3))
        for n in range(count):
            created = min(at + dt.timedelta(hours=rng.uniform(0.2, 24)), now)
            due = (created + dt.timedelta(days=rng.randrange(5, 45))).date()
            if draft.status == Status.actions:
                status = weighted(rng, ((ActionStatus.open, 40), (ActionStatus.in_progress, 35),
                                        (ActionStatus.done, 25)))
            elif draft.status == Status.verification:
                status = ActionStatus.done if n == 0 or rng.random() < 0.9 else ActionStatus.cancelled
            elif draft.status == Status.closed:
                status = ActionStatus.verified if n == 0 or rng.random() < 0.92 else ActionStatus.cancelled
            else:  # back in investigation after actions were planned: none of that here
                status = ActionStatus.open
            assignee = rng.choice(self.assignees) if rng.random() < 0.95 else None
            updates: list[tuple[Any, ...]] = []
            done_at = None
            updated = created
            if status in (ActionStatus.done, ActionStatus.verified):
                # Most finish on time, some late.
                finish = dt.datetime.combine(due, dt.time(12), dt.UTC) + dt.timedelta(
                    days=rng.uniform(-20, 8))
                done_at = min(max(finish, created + HOUR), now)
                updates.append((done_at, assignee or rng.choice(self.supervisors), "open", "done"))
                updated = done_at
                if status == ActionStatus.verified:
                    verified = min(done_at + dt.timedelta(days=rng.uniform(0.5, 5)), now)
                    updates.append((verified, rng.choice(self.managers), "done", "verified"))
                    updated = verified
            elif status != ActionStatus.open:
                updated = min(created + dt.timedelta(days=rng.uniform(0.5, 10)), now)
                updates.append((updated, assignee or rng.choice(self.supervisors), "open", status.value))
            yield ({"incident_id": incident_id, "title": rng.choice(ACTION_TITLES),
                    "description": rng.choice(DESCRIPTIONS) if rng.random() < 0.7 else None,
                    "kind": rng.choice(ACTION_KINDS), "assignee_id": assignee, "due_date": due,
                    "root_cause_id": rng.choice(causes) if causes and rng.random() < 0.7 else None,
                    "status": status.value, "created_at": created, "updated_at": updated,
                    "done_at": done_at}, updates)


def draft_incidents(ctx: SeedContext, areas: dict[int, list[int]], first_number: int) -> list[Draft]:
    rng, now, count = ctx.rng, ctx.now, ctx.options.incidents
    zones = {site.id: ZoneInfo(site.timezone or "UTC") for site in ctx.sites}
    # Bigger sites report more.
    site_weights = [rng.uniform(0.5, 2.0) for _ in ctx.sites]
    drafts = []
    for site in rng.choices(ctx.sites, site_weights, k=count):
        zone = zones[site.id]
        moment = occurrence(rng, ctx.start, now, zone)
        offset = int(moment.astimezone(zone).utcoffset().total_seconds() // 60)
        drafts.append(Draft(moment, offset, site))
    drafts.sort(key=lambda d: d.occurred_at)
    covering = covering_order(count)
    reporters = ctx.users[Role.reporter] + ctx.users[Role.supervisor]
    for index, draft in enumerate(drafts):
        newest = count - 1 - index
        if newest < len(covering):
            draft.type, draft.severity, draft.status = covering[newest]
        else:
            draft.type = weighted(rng, TYPE_WEIGHTS)
            draft.severity = weighted(rng, SEVERITY_WEIGHTS)
            draft.status = status_for(rng, now - draft.occurred_at)
        created = min(draft.occurred_at + dt.timedelta(minutes=rng.uniform(5, 600)), now)
        steps = workflow_path(rng, draft.status, draft.severity)
        draft.path = timed(rng, created, now, steps)
        anonymous = rng.random() < 0.07
        site_areas = areas.get(draft.site.id, [])
        title = rng.choice(TITLES[draft.type])
        draft.row = {
            "organization_id": ctx.organization_id, "number": first_number + index, "title": title,
            "type": draft.type.value, "severity": draft.severity.value, "status": draft.status.value,
            "occurred_at": draft.occurred_at, "occurred_offset_minutes": draft.offset,
            "site_id": draft.site.id,
            "area_id": rng.choice(site_areas) if site_areas and rng.random() < 0.85 else None,
            "location_detail": rng.choice(LOCATION_DETAILS).format(n=rng.randrange(1, 40))
            if rng.random() < 0.8 else None,
            "description": " ".join(rng.sample(DESCRIPTIONS, rng.randrange(1, 4))),
            "immediate_action": rng.choice(IMMEDIATE) if rng.random() < 0.85 else None,
            "anonymous": anonymous, "reporter_id": None if anonymous else rng.choice(reporters),
            "client_id": client_uuid(rng, first_number + index) if rng.random() < 0.6 else None,
            "created_at": created, "updated_at": draft.path[-1][1] if draft.path else created,
            "closed_at": draft.path[-1][1] if draft.status == Status.closed else None,
        }
    return drafts


# --- the command ------------------------------------------------------------------


def add_seeder(config: Configurator, name: str, seeder: Seeder) -> None:
    """Directive: `seeder(context)` adds the plugin's rows to `ehs seed`'s
    data set (see SeedContext) and returns {table: rows written}."""
    from ehs_core.directives import register_once

    seeder = config.maybe_dotted(seeder)

    def register() -> None:
        config.registry.setdefault("ehs.seeders", []).append(seeder)

    register_once(config, "ehs.seeder", name, register)


def seeders(registry: Registry) -> list[Seeder]:
    """The registered seeders, in the order they were added."""
    return list(registry.get("ehs.seeders", []))


def includeme(config: Configurator) -> None:
    config.add_directive("add_seeder", add_seeder)


def seed(registry: Registry, options: SeedOptions, progress: Callable[[str], None] = log.info,
         now: dt.datetime | None = None) -> dict[str, int]:
    """Write the data set in one transaction; returns {table: rows written}.
    The data ends at `now` (default: the current time)."""
    if options.incidents < 1 or options.sites < 1 or options.years <= 0:
        raise SeedError("--incidents and --sites must be at least 1 and --years above 0")
    engine = registry["db.engine"]
    factory = registry["dbsession_factory"]
    rng = random.Random(options.seed)
    now = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).replace(microsecond=0)
    started = time.monotonic()
    counts: dict[str, int] = {}
    with factory() as session, session.begin():
        existing = session.execute(select(func.count()).select_from(Incident)).scalar()
        if existing and not options.force:
            raise SeedError(f"the database already has {existing} incidents; pass --force to add more")
        organization_id = ensure_organization(session)
        counter = session.execute(select(IncidentCounter).where(
            IncidentCounter.organization_id == organization_id).with_for_update()).scalar_one()
        first_number = counter.last_number + 1
        password_hash = passwords(registry).hash(options.password) if options.password else None
        users = seed_users(session, rng, organization_id, options.incidents, password_hash)
        sites = seed_sites(session, rng, organization_id, options.sites)
        counts["users"] = sum(len(v) for v in users.values())
        counts["sites"] = len(sites)
        leaf_areas: dict[int, list[int]] = {}
        for area in session.execute(select(Area).where(Area.site_id.in_([s.id for s in sites]),
                                                       Area.parent_id.is_not(None))).scalars():
            leaf_areas.setdefault(area.site_id, []).append(area.id)
        counts["areas"] = session.execute(select(func.count()).select_from(Area).where(
            Area.site_id.in_([s.id for s in sites]))).scalar()
        ctx = SeedContext(session=session, registry=registry, rng=rng, options=options, now=now,
                          start=now - dt.timedelta(days=365.25 * options.years),
                          organization_id=organization_id, sites=sites, users=users)
        set_aside = set_aside_gin_indexes(session, Incident)
        drafts = draft_incidents(ctx, leaf_areas, first_number)
        progress(f"drafted {len(drafts)} incidents in {time.monotonic() - started:.1f}s")
        writer = IncidentWriter(ctx)
        for offset in range(0, len(drafts), options.batch):
            ctx.incidents.extend(writer.write(drafts[offset:offset + options.batch]))
            progress(f"incidents {min(offset + options.batch, len(drafts))}/{len(drafts)} written "
                     f"({time.monotonic() - started:.1f}s)")
        counts.update(writer.counts)
        rebuild_indexes(session, set_aside)
        if set_aside:
            progress(f"{len(set_aside)} search indexes built ({time.monotonic() - started:.1f}s)")
        counter.last_number = first_number + len(drafts) - 1
        session.flush()
        for seeder in seeders(registry):
            added = seeder(ctx) or {}
            for table, n in added.items():
                counts[table] = counts.get(table, 0) + n
            progress(f"{getattr(seeder, '__module__', seeder)}: {added} ({time.monotonic() - started:.1f}s)")
    if engine.dialect.name == "postgresql":
        # Fresh planner statistics and visibility map, as autovacuum would leave them.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
    progress(f"seeded in {time.monotonic() - started:.1f}s")
    return counts
