"""Schema migrations with alembic: the core's history and one per enabled
plugin, each with its own version table, upgraded in that order."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from pyramid.config import Configurator
from pyramid.registry import Registry
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from ehs_core.plugins import MigrationBranch

log = logging.getLogger(__name__)


def alembic_config(branch: MigrationBranch, connection: Connection | None = None,
                   registry: Registry | None = None) -> AlembicConfig:
    """`registry`: the configured application, for revisions that backfill
    derived data and need its settings or extensions
    (`op.get_context().config.attributes.get("registry")`)."""
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(Path(__file__).parent))
    cfg.set_main_option("path_separator", "os")
    package, _, path = branch.location.partition(":")
    module = __import__(package, fromlist=["_"])
    cfg.set_main_option("version_locations", str(Path(module.__file__).parent / path))
    cfg.attributes["version_table"] = branch.version_table
    cfg.attributes["branch"] = branch.name
    if connection is not None:
        cfg.attributes["connection"] = connection
    if registry is not None:
        cfg.attributes["registry"] = registry
    return cfg


# The advisory lock `upgrade` holds on PostgreSQL (any fixed number, the same in every process).
MIGRATION_LOCK = 0x4548535F4D494752  # "EHS_MIGR"


def upgrade(registry: Registry) -> None:
    """Bring the core and every enabled plugin to head, one process at a
    time: two `ehs migrate` (or two auto-migrating starts) at once on an
    empty database had one crash on a table the other had just made (issue
    35). On PostgreSQL a session advisory lock is held from the first
    branch to the last, so the second waits and then finds nothing to do;
    SQLite's write lock, taken when each branch's transaction begins,
    does the same there."""
    engine = registry["db.engine"]
    with _migration_lock(engine):
        for branch in registry["migration_branches"]:
            with engine.begin() as connection:
                command.upgrade(alembic_config(branch, connection, registry), "heads")
            log.info("schema of %s is at head", branch.name)


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    if engine.dialect.name != "postgresql":
        yield
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as holder:
        if not holder.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": MIGRATION_LOCK}).scalar():
            log.info("another process is migrating the schema; waiting for it")
            holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        try:
            yield
        finally:
            holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})


def upgrade_if_enabled(registry: Registry) -> None:
    if registry.settings.get("ehs.auto_migrate"):
        upgrade(registry)


def includeme(config: Configurator) -> None:
    config.add_migrations("core", "ehs_core.migrations:versions")
