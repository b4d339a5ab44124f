"""The installed `ehs` console script, run as an operator runs it: a real
process, an ini file with the same sections as development.ini, and an
environment without the developer's EHS_* variables (runtime contract,
"Console scripts")."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.core import example_plugin

ROOT = Path(__file__).resolve().parents[2]
EHS = Path(sys.executable).with_name("ehs")
CORE_TABLES = {"organizations", "users", "user_sessions", "auth_tokens", "rate_limit_hits", "sites", "areas"}


def clean_environ(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("EHS_") and name not in {"MAX_UPLOAD_MB", "TZ"}}
    env.update(extra)
    return env


def ehs(command: str, ini: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EHS), command, str(ini)], capture_output=True, text=True,
                          env=clean_environ(**env), cwd=ini.parent, timeout=120)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ehs-cli")


@pytest.fixture(scope="module")
def ini(workdir: Path) -> Path:
    """development.ini with its values pointed at a scratch directory."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep keys as written
    parser.read(ROOT / "development.ini")
    app = parser["app:main"]
    app["sqlalchemy.url"] = f"sqlite:///{workdir / 'ehs.sqlite'}"
    app["ehs.plugins"] = "osha"
    app["ehs.auto_migrate"] = "false"
    app["ehs.upload_dir"] = str(workdir / "uploads")
    app["mail.port"] = "1"  # nothing may be delivered from these tests
    path = workdir / "ehs.ini"
    with path.open("w") as handle:
        parser.write(handle)
    return path


@pytest.fixture(scope="module")
def migrated(ini: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    return ehs("migrate", ini)


def tables(workdir: Path) -> set[str]:
    engine = sa.create_engine(f"sqlite:///{workdir / 'ehs.sqlite'}")
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_the_ini_written_for_these_tests_has_every_section_of_development_ini(ini):
    ours = configparser.ConfigParser(interpolation=None)
    theirs = configparser.ConfigParser(interpolation=None)
    ours.read(ini)
    theirs.read(ROOT / "development.ini")
    assert ours.sections() == theirs.sections()


def test_the_console_script_is_installed():
    assert EHS.is_file() and os.access(EHS, os.X_OK)


def test_migrate_brings_core_and_enabled_plugins_to_head(migrated, workdir):
    assert migrated.returncode == 0, migrated.stderr
    assert "schema is at head" in migrated.stdout
    found = tables(workdir)
    assert found >= CORE_TABLES | {"alembic_version", "alembic_version_osha"}
    # kiosk and analytics are not enabled in this ini
    assert not found & {"alembic_version_kiosk", "alembic_version_analytics"}


def test_plugins_lists_every_discovered_plugin_and_whether_it_is_enabled(ini):
    done = ehs("plugins", ini)
    assert done.returncode == 0, done.stderr
    states = {line.split("\t")[0]: line.split("\t")[1] for line in done.stdout.splitlines() if "\t" in line}
    assert states == {"osha": "enabled", "kiosk": "disabled", "analytics": "disabled", "calosha": "disabled"}


def test_plugins_lists_a_plugin_installed_outside_this_repository(ini, workdir):
    site = example_plugin.install_distribution(workdir / "site-packages")
    pythonpath = os.pathsep.join([str(site), str(ROOT)])
    disabled = ehs("plugins", ini, PYTHONPATH=pythonpath)
    assert disabled.returncode == 0, disabled.stderr
    assert "example\tdisabled\ttests.core.example_plugin:includeme" in disabled.stdout.splitlines()

    enabled = ehs("plugins", ini, PYTHONPATH=pythonpath, EHS_PLUGINS="osha example")
    assert enabled.returncode == 0, enabled.stderr
    assert "example\tenabled\ttests.core.example_plugin:includeme" in enabled.stdout.splitlines()


def test_digest_runs_and_exits_cleanly(migrated, ini):
    done = ehs("digest", ini)
    assert done.returncode == 0, done.stderr


def test_a_wrong_setting_stops_the_command_naming_the_env_var(ini):
    done = ehs("migrate", ini, EHS_SMTP_PORT="70000")
    assert done.returncode != 0
    assert "EHS_SMTP_PORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_plugin_stops_the_command_naming_it(ini):
    done = ehs("plugins", ini, EHS_PLUGINS="osha no_such_plugin")
    assert done.returncode != 0
    assert "no_such_plugin" in done.stderr
    assert "Traceback" not in done.stderr


def test_storage_move_copies_every_attachment_into_the_database_and_back(migrated, ini, workdir):
    subprocess.run([str(EHS), "seed", str(ini), "--incidents", "2", "--sites", "1"], check=True,
                   capture_output=True, env=clean_environ(), cwd=workdir, timeout=120)
    photo = os.urandom(3 * 1024 * 1024 + 7)  # several chunks
    (workdir / "uploads").mkdir(exist_ok=True)
    (workdir / "uploads" / ("a" * 32)).write_bytes(photo)
    engine = sa.create_engine(f"sqlite:///{workdir / 'ehs.sqlite'}")
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO attachments"
                " (incident_id, filename, storage_name, content_type, size, created_at)"
                " SELECT min(id), 'photo.jpg', :name, 'image/jpeg', :size, CURRENT_TIMESTAMP FROM incidents"),
                {"name": "a" * 32, "size": len(photo)})

        to_database = subprocess.run([str(EHS), "storage-move", str(ini), "--to", "database"],
                                     capture_output=True, text=True, env=clean_environ(), cwd=workdir,
                                     timeout=120)
        assert to_database.returncode == 0, to_database.stderr
        assert "copied\t1" in to_database.stdout
        assert "EHS_STORAGE=database" in to_database.stdout
        with engine.connect() as conn:
            chunks = conn.execute(sa.text("SELECT data FROM attachment_chunks WHERE storage_name = :name"
                                          " ORDER BY seq"), {"name": "a" * 32}).scalars().all()
        assert len(chunks) == 4 and b"".join(chunks) == photo

        back = subprocess.run([str(EHS), "storage-move", str(ini), "--to", "local", "--upload-dir",
                               str(workdir / "moved"), "--delete-source"], capture_output=True, text=True,
                              env=clean_environ(EHS_STORAGE="database"), cwd=workdir, timeout=120)
        assert back.returncode == 0, back.stderr
        assert (workdir / "moved" / ("a" * 32)).read_bytes() == photo
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM attachment_chunks")).scalar() == 0
    finally:
        engine.dispose()


def test_storage_move_refuses_an_unknown_store_by_name(ini):
    result = subprocess.run([str(EHS), "storage-move", str(ini), "--to", "ftp://files"],
                            capture_output=True, text=True, env=clean_environ(), timeout=120)
    assert result.returncode == 2
    assert "--to 'ftp://files'" in result.stderr


@pytest.mark.postgres
@pytest.mark.skipif(not os.environ.get("EHS_TEST_POSTGRES_URL"), reason="needs EHS_TEST_POSTGRES_URL")
@pytest.mark.parametrize("round_", range(2))
def test_two_migrations_at_once_on_an_empty_database_both_succeed(ini, round_):
    """Issue 35: two `ehs migrate` (or two auto-migrating starts) at once on
    an empty PostgreSQL database: one crashed. Under the migration lock the
    second waits, then finds nothing to do."""
    from ehs_core.testing import postgres_database

    with postgres_database("ehs_migrate") as url:
        env = clean_environ(EHS_DATABASE_URL=url, EHS_PLUGINS="osha kiosk analytics")
        both = [subprocess.Popen([str(EHS), "migrate", str(ini)], env=env, cwd=ini.parent, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        results = [(process.wait(120), *process.communicate()) for process in both]
        assert [code for code, _, _ in results] == [0, 0], [err[-2000:] for _, _, err in results]
        engine = sa.create_engine(url)
        try:
            with engine.connect() as connection:
                assert connection.execute(sa.text("SELECT count(*) FROM alembic_version")).scalar() == 1
                found = set(sa.inspect(connection).get_table_names())
        finally:
            engine.dispose()
        assert found >= CORE_TABLES | {"outbox_jobs", "alembic_version_analytics"}
