"""Schema migrations with alembic: the core's history and one per enabled
plugin, each with its own version table, upgraded in that order."""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from pyramid.config import Configurator
from pyramid.registry import Registry
from sqlalchemy.engine import Connection

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


def upgrade(registry: Registry) -> None:
    """Bring the core and every enabled plugin to head."""
    engine = registry["db.engine"]
    for branch in registry["migration_branches"]:
        with engine.begin() as connection:
            command.upgrade(alembic_config(branch, connection, registry), "heads")
        log.info("schema of %s is at head", branch.name)


def upgrade_if_enabled(registry: Registry) -> None:
    if registry.settings.get("ehs.auto_migrate"):
        upgrade(registry)


def includeme(config: Configurator) -> None:
    config.add_migrations("core", "ehs_core.migrations:versions")
