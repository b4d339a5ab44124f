"""Schema migrations: alembic brings an empty database to head (SQLite, and
PostgreSQL when EHS_TEST_POSTGRES_URL is set), one history and version table
per branch, repeatable, and in step with the models."""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

import ehs_core
import ehs_plugins
from ehs_core.config import configure
from ehs_core.db import Base
from ehs_core.incidents.search import SEARCH_OBJECTS
from ehs_core.migrations import alembic_config, upgrade
from ehs_core.testing import PASSWORD, PUBLIC_URL, Client, base_settings, postgres_database
from tests.core.incidents import WORD_COUNT_DRIFT

PLUGINS = ("osha", "kiosk", "analytics", "calosha")
CORE_TABLES = {"organizations", "users", "user_sessions", "auth_tokens", "rate_limit_hits", "sites", "areas"}
VERSION_TABLES = {"alembic_version"} | {f"alembic_version_{name}" for name in PLUGINS}
BACKENDS = ["sqlite", pytest.param("postgresql", marks=[
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("EHS_TEST_POSTGRES_URL"),
                       reason="EHS_TEST_POSTGRES_URL is not set"),
])]


@pytest.fixture(params=BACKENDS)
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a database created for this test and holding nothing."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.sqlite'}"
        return
    with postgres_database("ehs_migrations") as url:
        yield url


@pytest.fixture
def build(clean_environ: None, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Assemble the application (core and all built-in plugins) on a database."""
    configs: list[Any] = []

    def make(url: str, plugins: str = " ".join(PLUGINS)) -> Any:
        settings = base_settings(url, 1025, str(tmp_path / "uploads"))
        config = configure(dict(settings, **{"ehs.plugins": plugins}))
        configs.append(config)
        return config

    yield make
    for config in configs:
        config.registry["db.engine"].dispose()


def table_names(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def branch_heads(registry: Any) -> dict[str, tuple[str, ...]]:
    return {branch.version_table: ScriptDirectory.from_config(alembic_config(branch)).get_heads()
            for branch in registry["migration_branches"]}


def recorded_versions(engine: sa.Engine, tables: set[str]) -> dict[str, list[str]]:
    with engine.connect() as conn:
        return {table: sorted(conn.execute(sa.text(f"SELECT version_num FROM {table}")).scalars())
                for table in tables}


def schema_snapshot(engine: sa.Engine) -> dict[str, Any]:
    inspector = sa.inspect(engine)
    snapshot: dict[str, Any] = {}
    for table in sorted(inspector.get_table_names()):
        snapshot[table] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)],
            "indexes": sorted((i["name"] or "", tuple(i["column_names"]))
                              for i in inspector.get_indexes(table)),
            "foreign_keys": sorted((fk["name"] or "", tuple(fk["constrained_columns"]), fk["referred_table"])
                                   for fk in inspector.get_foreign_keys(table)),
            "unique": sorted((u["name"] or "", tuple(u["column_names"]))
                             for u in inspector.get_unique_constraints(table)),
        }
    return snapshot


def import_all_models() -> None:
    """Models register their tables on Base.metadata when imported."""
    for package in (ehs_core, ehs_plugins):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if module.name.rsplit(".", 1)[-1] == "models":
                importlib.import_module(module.name)


# --- every history has one head ----------------------------------------------------------


def test_each_migration_history_has_a_single_head(build, tmp_path):
    config = build(f"sqlite:///{tmp_path / 'unused.sqlite'}")
    heads = branch_heads(config.registry)
    assert set(heads) == VERSION_TABLES
    forked = {table: found for table, found in heads.items() if len(found) != 1}
    assert forked == {}


# --- upgrade -----------------------------------------------------------------------------


def test_upgrade_on_an_empty_database_creates_core_tables_and_a_version_table_per_branch(
        empty_database, build):
    config = build(empty_database)
    engine = config.registry["db.engine"]
    assert table_names(engine) == set()

    upgrade(config.registry)

    tables = table_names(engine)
    assert tables >= CORE_TABLES
    assert {t for t in tables if t.startswith("alembic_version")} == VERSION_TABLES
    heads = {table: sorted(found) for table, found in branch_heads(config.registry).items()}
    assert recorded_versions(engine, VERSION_TABLES) == heads


def test_running_upgrade_twice_changes_nothing(empty_database, build):
    config = build(empty_database)
    engine = config.registry["db.engine"]
    upgrade(config.registry)
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO organizations (name, created_at) "
                             "VALUES ('Acme Works', '2026-01-01 00:00:00')"))
    schema = schema_snapshot(engine)
    versions = recorded_versions(engine, VERSION_TABLES)

    upgrade(config.registry)

    assert schema_snapshot(engine) == schema
    assert recorded_versions(engine, VERSION_TABLES) == versions
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT name FROM organizations")).scalars().all() == ["Acme Works"]


def test_the_migrated_schema_matches_the_models(empty_database, build):
    """What alembic autogenerate would write next is nothing: no model
    change is missing a migration, and no migration drifted from the models."""
    import_all_models()
    config = build(empty_database)
    upgrade(config.registry)

    def ours(name: str | None, type_: str, parent_names: Any) -> bool:
        # Not modelled: the version tables, and the text search's PostgreSQL-only
        # words (a generated column, its index and the word list; search.py).
        return not (type_ == "table" and name is not None and name.startswith("alembic_version")) \
            and name not in SEARCH_OBJECTS

    with config.registry["db.engine"].connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "include_name": ours})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []


def test_the_app_on_a_freshly_migrated_database_answers_setup_and_login(empty_database, build):
    config = build(empty_database)
    upgrade(config.registry)
    app = config.make_wsgi_app()

    first = Client(app, origin=PUBLIC_URL)
    created = first.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                             "email": "ada@acme.test", "password": PASSWORD}, status=201)
    assert created.json["user"]["role"] == "admin"

    browser = Client(app, origin=PUBLIC_URL)
    signed_in = browser.post_json("/api/auth/login", {"email": "ada@acme.test", "password": PASSWORD})
    assert signed_in.json["user"]["email"] == "ada@acme.test"
    assert browser.get("/api/auth/me").json["user"]["name"] == "Ada Admin"


@pytest.mark.parametrize("empty_database", BACKENDS[1:], indirect=True)
def test_migrating_a_database_with_incidents_counts_their_words(empty_database, build):
    """0013_search_word_counts on a database that already has incidents:
    every word of every incident is counted, as the triggers would have."""
    config = build(empty_database)
    registry = config.registry
    upgrade(registry)
    browser = Client(config.make_wsgi_app(), origin=PUBLIC_URL)
    browser.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                     "email": "ada@acme.test", "password": PASSWORD}, status=201)
    site = browser.post_json("/api/sites", {"name": "Plant North"}, status=201).json["id"]
    for title in ("Forklift near miss", "Forklift hit a rack", "Hydraulic hose burst"):
        browser.post_json("/api/incidents", {"title": title, "type": "hazard", "severity": "low",
                                             "occurredAt": "2026-01-05T08:00:00Z", "siteId": site})
    browser.patch_json("/api/incidents/2", {"title": "Pallet jack hit a rack"}, status=200)
    core = next(branch for branch in registry["migration_branches"] if branch.name == "core")
    engine = registry["db.engine"]
    with engine.begin() as conn:
        command.downgrade(alembic_config(core, conn, registry), "0012_investigation_lead")
    assert "incident_word_counts" not in table_names(engine)

    upgrade(registry)

    with engine.connect() as conn:
        assert conn.execute(sa.text(WORD_COUNT_DRIFT)).all() == []
        counted = dict(conn.execute(sa.text("SELECT word, incidents FROM incident_word_counts")).all())
    assert (counted["forklift"], counted["rack"], counted["hydraulic"], counted["pallet"]) == (1, 1, 1, 1)
    assert browser.get("/api/incidents?q=rack").json["total"] == 1


# --- ehs.auto_migrate -------------------------------------------------------------------------


def start(settings: dict[str, Any]) -> Any:
    """The WSGI app as a web process starts it, its job runner stopped and
    finished before the test goes on. A web process's runner queues the
    clock's jobs at once; started on the tenth minute it runs the purge, and
    a runner left running after its test failed that purge on the test's
    removed database while later tests ran. Its traceback, formatted on the
    runner's thread (Python 3.11 parses each line for its carets), is the
    likely partner of a later test's `ast.parse` failing once in CI with
    "AST constructor recursion depth mismatch": CPython 3.11 keeps that
    depth in state every thread shares."""
    app = ehs_core.main({}, **settings)
    runner = app.registry.get("job_runner")
    if runner is not None:
        runner.stop()
        if runner.is_alive():
            runner.join(10)
    app.registry["db.engine"].dispose()
    return app


def test_auto_migrate_brings_an_empty_database_to_head_at_start_up(clean_environ, tmp_path):
    url = f"sqlite:///{tmp_path / 'ehs.sqlite'}"
    settings = dict(base_settings(url, 1025, str(tmp_path)),
                    **{"ehs.auto_migrate": "true", "ehs.plugins": " ".join(PLUGINS)})
    start(settings)
    engine = sa.create_engine(url)
    try:
        tables = table_names(engine)
    finally:
        engine.dispose()
    assert tables >= CORE_TABLES | VERSION_TABLES


def test_without_auto_migrate_start_up_leaves_the_database_alone(clean_environ, tmp_path):
    url = f"sqlite:///{tmp_path / 'ehs.sqlite'}"
    settings = dict(base_settings(url, 1025, str(tmp_path)), **{"ehs.auto_migrate": "false"})
    start(settings)
    engine = sa.create_engine(url)
    try:
        tables = table_names(engine)
    finally:
        engine.dispose()
    assert tables == set()
