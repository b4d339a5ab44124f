"""Moving attachment bytes from the configured store to another one.

Used when a deployment grows from one host (local folder) to several
(database or S3), or changes object store. The attachments table is the
list of what must be moved; bytes in the source that no attachment names are
orphans and are reported, not copied. Each file is copied through a
spooled temporary file (at most one chunk in memory) and written in a
transaction of its own, so an interrupted move can simply be run again: a
file already in the target is not copied twice. The source keeps its copy
unless asked to delete it, because the running service still reads from it
until `ehs.storage` is switched.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from ehs_core.attachments.backends import CHUNK_SIZE, Backend, Missing
from ehs_core.attachments.models import Attachment

log = logging.getLogger(__name__)


@dataclass
class MoveReport:
    copied: int = 0
    already_there: int = 0
    deleted_from_source: int = 0
    missing: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)


class MoveError(Exception):
    """A copy did not arrive whole; nothing was deleted from the source."""


def move_files(registry: Any, target: Backend, delete_source: bool = False,
               progress: Callable[[str], None] = lambda line: None) -> MoveReport:
    source: Backend = registry["attachments.storage"]
    factory = registry["dbsession_factory"]
    with factory() as session:
        wanted = session.execute(select(Attachment.storage_name, Attachment.size)
                                 .order_by(Attachment.id)).all()
    in_target = set(target.keys())
    names = {name for name, _size in wanted}
    report = MoveReport(orphans=sorted(set(source.keys()) - names))
    for count, (name, size) in enumerate(wanted, 1):
        if name in in_target:
            report.already_there += 1
        else:
            try:
                chunks = source.open(name)
            except Missing:
                log.error("attachment file %s is missing from %s", name, source.describe())
                report.missing.append(name)
                continue
            with tempfile.SpooledTemporaryFile(max_size=CHUNK_SIZE) as spool:
                for chunk in chunks:
                    spool.write(chunk)
                with factory() as session, session.begin():
                    written = target.write(session, name, spool)
            if written != size:
                raise MoveError(f"{name}: {written} bytes arrived in {target.describe()}, expected {size}")
            report.copied += 1
        if delete_source:
            with factory() as session, session.begin():
                source.delete(session, name)
            report.deleted_from_source += 1
        if count % 100 == 0:
            progress(f"{count} of {len(wanted)} files")
    return report
