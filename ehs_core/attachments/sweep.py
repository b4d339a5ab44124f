"""The periodic sweep of orphan files: bytes in the local store that no
attachment row names, older than a day (issue 35: a worker killed between
writing a file and committing left a file nothing removed; an abort hook
never ran). Younger files are left alone: an upload's file is written
before its row commits. The `database` store cannot leave orphans (bytes
and row share a transaction); an S3 store is swept by a lifecycle rule of
the bucket (README, "Backups and retention")."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import select

from ehs_core.attachments.models import Attachment

log = logging.getLogger(__name__)

SWEEP_JOB = "attachments.sweep"
OLDER_THAN = 24 * 3600  # seconds


def sweep_orphans(registry: Registry, now: float | None = None) -> int:
    """Remove the local store's files older than OLDER_THAN that no
    attachment names (and unfinished `.partial` files as old); returns how
    many."""
    backend: Any = registry["attachments.storage"]
    if backend.name != "local" or not os.path.isdir(backend.directory):
        return 0
    cutoff = (now if now is not None else time.time()) - OLDER_THAN
    old = [entry for entry in os.scandir(backend.directory)
           if entry.is_file() and entry.stat().st_mtime < cutoff]
    names = [entry.name for entry in old if not entry.name.startswith(".")]
    known: set[str] = set()
    with registry["dbsession_factory"]() as dbsession:
        for start in range(0, len(names), 500):
            known.update(dbsession.execute(select(Attachment.storage_name).where(
                Attachment.storage_name.in_(names[start:start + 500]))).scalars())
    removed = 0
    for entry in old:
        if entry.name in known:
            continue
        if entry.name.startswith(".") and not entry.name.endswith(".partial"):
            continue
        try:
            os.unlink(entry.path)
            removed += 1
        except FileNotFoundError:
            pass
    if removed:
        log.warning("removed %d orphan file(s) from %s", removed, backend.describe())
    return removed
