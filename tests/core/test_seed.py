"""`ehs seed`: a small realistic data set written through the models, numbered
1..N without gaps, refused on a database that has incidents unless forced,
the same for the same seed, and served by the app like any other data."""

from __future__ import annotations

import configparser
import dataclasses
import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ehs_core import cli
from ehs_core.config import configure
from ehs_core.migrations import upgrade
from ehs_core.seed import SeedError, SeedOptions, seed
from ehs_core.testing import PASSWORD, PUBLIC_URL, Client, base_settings, postgres_database
from tests.core.incidents import WORD_COUNT_DRIFT

ROOT = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 3, 4, 10, 30, tzinfo=dt.UTC)
OPTIONS = SeedOptions(incidents=50, years=1, sites=2, seed=7, password=PASSWORD)
ADMIN = "admin1@seed.example"


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("EHS_") and not name.startswith("EHS_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    monkeypatch.delenv("TZ", raising=False)


@pytest.fixture
def build(clean_environ: None, tmp_path: Path) -> Iterator[Any]:
    """A migrated SQLite database with every built-in plugin; returns its registry."""
    configs = []

    def make(name: str = "seed.sqlite") -> Any:
        settings = base_settings(f"sqlite:///{tmp_path / name}", 1, str(tmp_path / "uploads"))
        config = configure(dict(settings, **{"ehs.plugins": "osha kiosk analytics"}))
        upgrade(config.registry)
        config.registry["wsgi_app"] = config.make_wsgi_app()
        configs.append(config)
        return config.registry

    yield make
    for config in configs:
        config.registry["db.engine"].dispose()


@pytest.fixture
def seeded(build: Any) -> tuple[Any, dict[str, int]]:
    registry = build()
    return registry, seed(registry, OPTIONS, progress=lambda _: None, now=NOW)


def rows(registry: Any, query: str) -> list[Any]:
    with registry["db.engine"].connect() as conn:
        return list(conn.execute(sa.text(query)))


def test_seeding_writes_every_kind_of_row_numbered_one_to_n(seeded):
    registry, counts = seeded
    assert counts["incidents"] == 50
    numbers = [n for (n,) in rows(registry, "SELECT number FROM incidents ORDER BY number")]
    assert numbers == list(range(1, 51))
    assert rows(registry, "SELECT last_number FROM incident_counters") == [(50,)]
    assert {t for (t,) in rows(registry, "SELECT DISTINCT type FROM incidents")} == {
        "near_miss", "hazard", "injury", "illness", "property_damage", "environmental"}
    assert {s for (s,) in rows(registry, "SELECT DISTINCT severity FROM incidents")} == {
        "low", "medium", "high", "critical"}
    assert {s for (s,) in rows(registry, "SELECT DISTINCT status FROM incidents")} == {
        "reported", "triage", "investigation", "actions", "verification", "closed"}
    assert {r for (r,) in rows(registry, "SELECT DISTINCT role FROM users")} == {
        "reporter", "supervisor", "safety_manager", "admin"}
    sites = rows(registry, "SELECT name, ein, naics_code, zip, timezone FROM sites")
    assert len(sites) == 2 and all(all(site) for site in sites)
    assert rows(registry, "SELECT count(*) FROM areas WHERE parent_id IS NOT NULL")[0][0] > 0
    for table in ("investigations", "root_causes", "corrective_actions", "comments", "audit_entries",
                  "osha_cases", "osha_site_hours"):
        assert counts[table] > 0, table
        assert rows(registry, f"SELECT count(*) FROM {table}") == [(counts[table],)]
    # Every incident has its creation in the audit trail, and closed ones a closing time.
    assert rows(registry, "SELECT count(DISTINCT incident_id) FROM audit_entries "
                          "WHERE action = 'incident.created'") == [(50,)]
    assert rows(registry, "SELECT count(*) FROM incidents WHERE (status = 'closed') != "
                          "(closed_at IS NOT NULL)") == [(0,)]
    # Spread over the year before NOW, none in the future.
    first, last = rows(registry, "SELECT min(occurred_at), max(occurred_at) FROM incidents")[0]
    assert str(first) >= str(NOW - dt.timedelta(days=366))[:19]
    assert str(last) <= str(NOW)[:19]


def test_seeded_injury_cases_are_classified_like_the_api_does(seeded):
    registry, _ = seeded
    cases = rows(registry, "SELECT c.recordable, c.outcome, i.type FROM osha_cases c "
                           "JOIN incidents i ON i.id = c.incident_id")
    assert {kind for _, _, kind in cases} <= {"injury", "illness"}
    assert all((outcome is not None) == bool(recordable) for recordable, outcome, _ in cases)


def test_the_workflow_state_of_seeded_incidents_is_consistent(seeded):
    registry, _ = seeded
    # Verification: at least one action and none pending; closed after actions: all verified or cancelled.
    assert rows(registry, """SELECT count(*) FROM incidents i WHERE i.status = 'verification' AND (
        NOT EXISTS (SELECT 1 FROM corrective_actions a WHERE a.incident_id = i.id) OR
        EXISTS (SELECT 1 FROM corrective_actions a WHERE a.incident_id = i.id
                AND a.status IN ('open', 'in_progress')))""") == [(0,)]
    assert rows(registry, """SELECT count(*) FROM incidents i
        JOIN corrective_actions a ON a.incident_id = i.id
        WHERE i.status = 'closed' AND a.status NOT IN ('verified', 'cancelled')""") == [(0,)]
    assert rows(registry, """SELECT count(*) FROM incidents i WHERE i.status IN ('reported', 'triage')
        AND EXISTS (SELECT 1 FROM corrective_actions a WHERE a.incident_id = i.id)""") == [(0,)]


def test_the_app_serves_the_seeded_incidents(seeded):
    registry, _ = seeded
    browser = Client(registry["wsgi_app"], origin=PUBLIC_URL)
    browser.login(ADMIN)
    listed = browser.get("/api/incidents").json
    assert listed["total"] == 50
    assert [item["number"] for item in listed["items"]] == list(range(50, 25, -1))
    detail = browser.get("/api/incidents/1").json
    assert detail["reference"] == "INC-0001"
    assert "transitions" in detail and "actions" in detail
    site_id = detail["siteId"]
    year = (NOW - dt.timedelta(days=100)).year
    assert browser.get(f"/api/osha/log?siteId={site_id}&year={year}").json["site"]["id"] == site_id
    overview = browser.get("/api/stats/overview").json
    assert sum(overview["statusCounts"].values()) == 50
    # A seeded reporter signs in with the same password and sees only their own.
    reporter = Client(registry["wsgi_app"], origin=PUBLIC_URL)
    reporter.login("reporter1@seed.example")
    assert reporter.get("/api/incidents").json["total"] < 50
    # A new report continues the numbering.
    site = browser.get("/api/sites").json[0]
    created = browser.post_json("/api/incidents", {
        "title": "After seeding", "type": "hazard", "severity": "low", "siteId": site["id"],
        "occurredAt": dt.datetime.now(dt.UTC).isoformat(), "anonymous": False}, status=201).json
    assert created["number"] == 51


def test_the_same_seed_writes_the_same_data(build):
    query = "SELECT number, title, type, severity, status, occurred_at, site_id, reporter_id FROM incidents"
    first, second = build("one.sqlite"), build("two.sqlite")
    seed(first, OPTIONS, progress=lambda _: None, now=NOW)
    seed(second, OPTIONS, progress=lambda _: None, now=NOW)
    assert rows(first, query) == rows(second, query)
    audit = "SELECT count(*) FROM audit_entries"
    assert rows(first, audit) == rows(second, audit)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A database of its own on the test PostgreSQL server."""
    with postgres_database("ehs_seed") as url:
        yield url


@pytest.mark.postgres
@pytest.mark.skipif(not os.environ.get("EHS_TEST_POSTGRES_URL"), reason="needs EHS_TEST_POSTGRES_URL")
def test_postgresql_gets_the_same_incidents_and_counts_their_words(build, postgres_url, tmp_path):
    """On PostgreSQL the incidents go out by COPY (their word counts then
    move once a batch): the same rows as SQLite's INSERTs, every word
    counted once per incident that has it."""
    query = ("SELECT number, title, description, location_detail, immediate_action, type, severity, status, "
             "occurred_at, occurred_offset_minutes, site_id, area_id, reporter_id, anonymous, client_id, "
             "created_at, updated_at, closed_at FROM incidents ORDER BY number")
    lite = build()
    seed(lite, OPTIONS, progress=lambda _: None, now=NOW)
    config = configure(dict(base_settings(postgres_url, 1, str(tmp_path / "uploads")),
                            **{"ehs.plugins": "osha kiosk analytics"}))
    try:
        upgrade(config.registry)
        seed(config.registry, dataclasses.replace(OPTIONS, batch=20), progress=lambda _: None, now=NOW)

        def as_stored_by_sqlite(value: Any) -> Any:
            if isinstance(value, dt.datetime):
                return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
            return value

        assert [tuple(map(as_stored_by_sqlite, row)) for row in rows(config.registry, query)] == [
            tuple(row) for row in rows(lite, query)]
        assert rows(config.registry, WORD_COUNT_DRIFT) == []
        assert rows(config.registry, "SELECT count(*) FROM incident_word_counts WHERE word = 'the'")[0][0] > 0
    finally:
        config.registry["db.engine"].dispose()


def test_a_database_with_incidents_is_refused_unless_forced(seeded):
    registry, _ = seeded
    with pytest.raises(SeedError, match="already has 50 incidents"):
        seed(registry, OPTIONS, progress=lambda _: None, now=NOW)
    counts = seed(registry, SeedOptions(incidents=10, years=1, sites=1, seed=8, force=True),
                  progress=lambda _: None, now=NOW)
    assert counts["incidents"] == 10
    numbers = [n for (n,) in rows(registry, "SELECT number FROM incidents ORDER BY number")]
    assert numbers == list(range(1, 61))
    assert rows(registry, "SELECT last_number FROM incident_counters") == [(60,)]


@pytest.fixture
def ini(clean_environ: None, tmp_path: Path) -> Path:
    """development.ini pointed at a scratch SQLite database, migrated."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(ROOT / "development.ini")
    app = parser["app:main"]
    app["sqlalchemy.url"] = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    app["ehs.plugins"] = "osha"
    app["ehs.auto_migrate"] = "false"
    app["ehs.upload_dir"] = str(tmp_path / "uploads")
    app["mail.port"] = "1"
    path = tmp_path / "ehs.ini"
    with path.open("w") as handle:
        parser.write(handle)
    assert cli.main(["migrate", str(path)]) == 0
    return path


def test_the_seed_command_seeds_and_then_refuses_a_second_run(ini, capsys):
    args = ["seed", str(ini), "--incidents", "30", "--years", "1", "--sites", "2", "--seed", "3"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "incidents\t30" in out and "osha_cases\t" in out
    assert cli.main(args) == 1
    assert "already has 30 incidents" in capsys.readouterr().err
    assert cli.main([*args, "--force"]) == 0


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def seeded_on(request: pytest.FixtureRequest, build: Any, tmp_path: Path) -> Iterator[Any]:
    """A small seeded database on each engine (PostgreSQL: written by COPY)."""
    if request.param == "sqlite":
        registry = build()
        seed(registry, OPTIONS, progress=lambda _: None, now=NOW)
        yield registry
        return
    if not os.environ.get("EHS_TEST_POSTGRES_URL"):
        pytest.skip("needs EHS_TEST_POSTGRES_URL")
    with postgres_database("ehs_seed") as url:
        config = configure(dict(base_settings(url, 1, str(tmp_path / "uploads")),
                                **{"ehs.plugins": "osha kiosk analytics"}))
        try:
            upgrade(config.registry)
            config.registry["wsgi_app"] = config.make_wsgi_app()
            seed(config.registry, dataclasses.replace(OPTIONS, batch=20), progress=lambda _: None, now=NOW)
            yield config.registry
        finally:
            config.registry["db.engine"].dispose()


def test_a_seeded_database_is_consistent_and_the_next_report_gets_the_next_number(seeded_on):
    """Issue #42 item 7: however the rows went in (COPY on PostgreSQL), the
    data set is whole: numbered 1..N, the counter at N so the next report
    filed gets N+1, each investigation's lead copied on its incident, every
    incident counted once by the analytics, the audit trail readable, and
    (PostgreSQL) the search's indexes there again."""
    registry = seeded_on
    count = OPTIONS.incidents
    assert [n for (n,) in rows(registry, "SELECT number FROM incidents ORDER BY number")] == list(
        range(1, count + 1))
    assert rows(registry, "SELECT last_number FROM incident_counters") == [(count,)]
    assert rows(registry, "SELECT count(*) FROM investigations v JOIN incidents i ON i.id = v.incident_id "
                          "WHERE i.investigation_lead_id IS NULL "
                          "OR i.investigation_lead_id <> v.lead_id") == [(0,)]
    assert rows(registry, "SELECT count(*) FROM incidents i WHERE i.investigation_lead_id IS NOT NULL AND "
                          "NOT EXISTS (SELECT 1 FROM investigations v WHERE v.incident_id = i.id)") == [(0,)]
    assert rows(registry, "SELECT count(*) FROM analytics_counted") == [(count,)]
    if registry["db.engine"].dialect.name == "postgresql":
        indexes = {name for (name,) in rows(registry, "SELECT indexname FROM pg_indexes "
                                                      "WHERE tablename = 'incidents'")}
        assert {"ix_incidents_title_trgm", "ix_incidents_search_words"} <= indexes
    browser = Client(registry["wsgi_app"], origin=PUBLIC_URL)
    browser.login(ADMIN)
    detail = browser.get("/api/incidents/1").json
    assert detail["reference"] == "INC-0001"
    assert browser.get("/api/incidents?q=forklift").json["total"] > 0
    site = browser.get("/api/sites").json[0]
    report = {"title": "Filed after seeding", "type": "hazard", "severity": "low", "siteId": site["id"],
              "occurredAt": dt.datetime.now(dt.UTC).isoformat(), "anonymous": False,
              "clientId": "5f0c7c7e-0000-4000-8000-000000000042"}
    created = browser.post_json("/api/incidents", report, status=201).json
    assert created["number"] == count + 1
    # The same report again (its clientId): the same incident, no number used up.
    again = browser.post_json("/api/incidents", report).json
    assert again["number"] == count + 1
    assert rows(registry, "SELECT last_number FROM incident_counters") == [(count + 1,)]
