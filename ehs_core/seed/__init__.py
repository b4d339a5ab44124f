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
from collections.abc import Callable

from pyramid.config import Configurator
from pyramid.registry import Registry
from sqlalchemy import func, select, text

from ehs_core.auth.passwords import passwords
from ehs_core.incidents.models import Incident, IncidentCounter
from ehs_core.seed.bulk import bulk_insert, rebuild_indexes, set_aside_gin_indexes
from ehs_core.seed.context import SeedContext, SeededIncident, Seeder, SeedError, SeedOptions
from ehs_core.seed.drafts import draft_incidents
from ehs_core.seed.history import IncidentWriter
from ehs_core.seed.organization import ensure_organization, seed_sites, seed_users
from ehs_core.sites.models import Area

# What the command line, plugins' seeders and the analytics plugin's tallies
# import from here (docs/plugins.md names `ehs_core.seed.SeedContext`).
__all__ = ["SeedContext", "SeedError", "SeedOptions", "SeededIncident", "Seeder", "add_seeder", "bulk_insert",
           "includeme", "seed", "seeders"]

log = logging.getLogger(__name__)


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
