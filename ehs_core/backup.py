"""`ehs backup DIR` and `ehs restore DIR`: the database and the attachment
files together, for records 29 CFR 1904.33 says must be kept five years
(issue 35: no backup or restore anywhere; files copied before the database
dump left a row whose download was 404).

The order never leaves a row without its file. Backup: the files (local
store), then the database (`pg_dump --format=custom` on PostgreSQL, the
SQLite online backup API, both a consistent snapshot while the service
runs), then the files again, for those uploaded meanwhile: every row in
the dump was committed before the dump began, so its file was in the store
by then and is in one of the two copies (a file deleted after the dump
with its row is the only one that can be missing, and its row is gone
too). Restore: the files first, then the database. Files in the `database`
store are inside the dump; an S3 store is backed up by the bucket's own
versioning and replication (README, "Backups and retention").
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import func, inspect, select, table
from sqlalchemy.engine import make_url

DATABASE_DUMP = "database.dump"  # pg_dump's custom format
DATABASE_SQLITE = "database.sqlite"
FILES = "files"
MANIFEST = "manifest.json"


class BackupError(Exception):
    """What stops a backup or a restore, in an operator's words."""


def _pg_tool(name: str) -> str:
    """pg_dump / pg_restore: on PATH, else Debian's newest server binaries."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
                        key=lambda path: int(path.parts[-3]) if path.parts[-3].isdigit() else 0)
    if not candidates:
        raise BackupError(f"{name} is not installed (Debian: apt-get install postgresql-client)")
    return str(candidates[-1])


def _libpq_url(registry: Registry) -> str:
    """The database URL as libpq reads it (no SQLAlchemy driver name)."""
    url = make_url(registry["db.engine"].url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def _sqlite_path(registry: Registry) -> Path:
    database = registry["db.engine"].url.database
    if not database or database == ":memory:":
        raise BackupError("an in-memory SQLite database cannot be backed up")
    return Path(database)


def _local_files(registry: Registry) -> Path | None:
    """The folder of the local store, or None when the files live elsewhere."""
    backend = registry["attachments.storage"]
    return Path(backend.directory) if backend.name == "local" else None


def _copy_files(source: Path, target: Path) -> int:
    """Copy the store's finished files (not `.partial` ones) not yet copied."""
    target.mkdir(parents=True, exist_ok=True)
    copied = 0
    if not source.is_dir():
        return 0
    for path in source.iterdir():
        if path.is_file() and not path.name.startswith(".") and not (target / path.name).exists():
            shutil.copy2(path, target / path.name)
            copied += 1
    return copied


def _counts(registry: Registry) -> dict[str, int]:
    engine = registry["db.engine"]
    with engine.connect() as connection:
        tables = set(inspect(connection).get_table_names())
        return {name: connection.execute(select(func.count()).select_from(table(name))).scalar_one()
                for name in ("incidents", "attachments", "audit_entries", "osha_cases") if name in tables}


def backup(registry: Registry, directory: str | Path) -> dict[str, Any]:
    """Write a backup into `directory` (new or empty); returns its manifest."""
    target = Path(directory)
    if target.exists() and any(target.iterdir()):
        raise BackupError(f"{target} is not empty; give a new folder for each backup")
    target.mkdir(parents=True, exist_ok=True)
    files = _local_files(registry)
    if files is not None:
        _copy_files(files, target / FILES)
    dialect = registry["db.engine"].dialect.name
    if dialect == "postgresql":
        # The arguments are the service's own settings, not anyone's input.
        done = subprocess.run([_pg_tool("pg_dump"), "--format=custom", "--no-owner", "--file",  # noqa: S603
                               str(target / DATABASE_DUMP), _libpq_url(registry)], capture_output=True,
                              text=True)
        if done.returncode:
            raise BackupError(f"pg_dump failed: {done.stderr.strip()[-500:]}")
    else:
        source = sqlite3.connect(_sqlite_path(registry))
        copy = sqlite3.connect(target / DATABASE_SQLITE)
        try:
            source.backup(copy)  # a consistent snapshot, writers welcome meanwhile
        finally:
            copy.close()
            source.close()
    copied_after = _copy_files(files, target / FILES) if files is not None else 0
    manifest = {"createdAt": dt.datetime.now(dt.UTC).isoformat(), "database": dialect,
                "storage": registry.settings.get("ehs.storage", "local"), "files": files is not None,
                "filesCopiedAfterTheDump": copied_after, "rows": _counts(registry)}
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def restore(registry: Registry, directory: str | Path) -> dict[str, Any]:
    """Restore a backup into this configuration's database and store, which
    must be empty (a restore never mixes two histories): the files first,
    then the database. Returns the backup's manifest."""
    source = Path(directory)
    try:
        manifest = json.loads((source / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source} holds no backup ({MANIFEST}: {exc})") from None
    engine = registry["db.engine"]
    dialect = engine.dialect.name
    if manifest["database"] != dialect:
        raise BackupError(f"this backup is of a {manifest['database']} database; the target is {dialect}")
    with engine.connect() as connection:
        if inspect(connection).get_table_names():
            raise BackupError("the target database is not empty; restore into a new, empty database")
    files = _local_files(registry)
    if manifest.get("files"):
        if files is None:
            raise BackupError("the backup holds files but ehs.storage is not local; restore with "
                              "EHS_STORAGE=local, then move them with ehs storage-move")
        if files.is_dir() and any(path for path in files.iterdir() if not path.name.startswith(".")):
            raise BackupError(f"the upload folder {files} is not empty")
        _copy_files(source / FILES, files)
    if dialect == "postgresql":
        engine.dispose()
        done = subprocess.run([_pg_tool("pg_restore"), "--no-owner", "--exit-on-error",  # noqa: S603
                               "--dbname", _libpq_url(registry), str(source / DATABASE_DUMP)],
                              capture_output=True, text=True)
        if done.returncode:
            raise BackupError(f"pg_restore failed: {done.stderr.strip()[-500:]}")
    else:
        engine.dispose()
        copy = sqlite3.connect(source / DATABASE_SQLITE)
        target = sqlite3.connect(_sqlite_path(registry))
        try:
            copy.backup(target)
        finally:
            target.close()
            copy.close()
    return manifest
