"""`ehs backup` then `ehs restore` into an empty database and upload folder:
every incident, file (the same bytes), audit entry and injury case comes
back (issue 35), on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
import webtest

from ehs_core import cli
from ehs_core.backup import BackupError, backup, restore
from ehs_core.config import configure
from ehs_core.migrations import upgrade
from ehs_core.testing import PASSWORD, PUBLIC_URL, base_settings, file_report, postgres_database
from tests.core.attachments import samples
from tests.plugins.osha import new_case

TABLES = {"incidents": "id", "attachments": "id", "audit_entries": "id", "osha_cases": "id",
          "comments": "id", "users": "id"}


@contextmanager
def database(kind: str, folder: Path, name: str):
    if kind == "sqlite":
        yield f"sqlite:///{folder / f'{name}.sqlite'}"
    else:
        with postgres_database(f"ehs_backup_{name}") as url:
            yield url


def app_on(url: str, uploads: Path, smtp_port: int, migrate: bool = True):
    config = configure(dict(base_settings(url, smtp_port, str(uploads))))
    if migrate:
        upgrade(config.registry)
    web = webtest.TestApp(config.make_wsgi_app(), extra_environ={"HTTP_ORIGIN": PUBLIC_URL,
                                                                 "REMOTE_ADDR": "127.0.0.1"})
    return config.registry, web


def rows(registry) -> dict[str, list[tuple]]:
    with registry["db.engine"].connect() as connection:
        return {table: [tuple(row) for row in connection.execute(sa.text(
            f"SELECT * FROM {table} ORDER BY {key}"))] for table, key in TABLES.items()}


@pytest.fixture(params=["sqlite", "postgresql"])
def kind(request):
    if request.param == "postgresql" and not os.environ.get("EHS_TEST_POSTGRES_URL"):
        pytest.skip("needs EHS_TEST_POSTGRES_URL")
    return request.param


def test_a_backup_restored_into_an_empty_database_brings_everything_back(kind, tmp_path, smtp_server,
                                                                         clean_environ, monkeypatch, capsys):
    with ExitStack() as stack:
        first_url = stack.enter_context(database(kind, tmp_path, "first"))
        second_url = stack.enter_context(database(kind, tmp_path, "second"))
        registry, web = app_on(first_url, tmp_path / "uploads-first", smtp_server.port)
        stack.callback(registry["db.engine"].dispose)
        web.post_json("/api/setup", {"organizationName": "Acme", "name": "Ada", "email": "admin@acme.test",
                                     "password": PASSWORD}, status=201)
        site = web.post_json("/api/sites", {"name": "Plant"}, status=201).json["id"]
        numbers = [file_report(web, site, type="injury", title=f"Report {n}").json["number"]
                   for n in range(3)]
        files = {}
        for number, (name, data, kind_) in zip(numbers, [("a.png", samples.PNG, "image/png"),
                                                          ("b.pdf", samples.PDF, "application/pdf")],
                                               strict=False):
            item = web.post(f"/api/incidents/{number}/attachments",
                            upload_files=[("file", name, data, kind_)], status=201).json
            files[item["id"]] = web.get(item["url"]).body
        web.post_json(f"/api/incidents/{numbers[0]}/comments", {"body": "Seen"}, status=201)
        new_case(web, numbers[0])
        before = rows(registry)
        assert all(before[table] for table in TABLES)

        monkeypatch.setattr(cli, "_bootstrap", lambda ini: registry)
        assert cli.main(["backup", "production.ini", str(tmp_path / "backup")]) == 0
        assert "backup written" in capsys.readouterr().out
        with pytest.raises(BackupError, match="not empty"):
            backup(registry, tmp_path / "backup")

        target, restored_web = app_on(second_url, tmp_path / "uploads-second", smtp_server.port,
                                      migrate=False)
        stack.callback(target["db.engine"].dispose)
        restore(target, tmp_path / "backup")
        target["db.engine"].dispose()
        assert rows(target) == before
        restored_web.post_json("/api/auth/login", {"email": "admin@acme.test", "password": PASSWORD})
        for attachment_id, data in files.items():
            assert restored_web.get(f"/api/attachments/{attachment_id}").body == data
        assert restored_web.get(f"/api/incidents/{numbers[2]}").json["number"] == numbers[2]
        # A restore never mixes two histories.
        with pytest.raises(BackupError, match="not empty"):
            restore(target, tmp_path / "backup")
