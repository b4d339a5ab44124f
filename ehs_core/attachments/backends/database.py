"""Attachments as chunks in the service's own database.

The simplest shared store for a deployment that already runs PostgreSQL:
every host reads what any host wrote, and backups of the database hold the
files too. Writes go through the caller's session, so they are part of the
request's transaction: an aborted upload leaves no chunk, and a deleted
attachment loses its chunks in the same commit. Reads take one chunk per
query on a session of their own, because a download is streamed after the
request's transaction has ended.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from ehs_core.attachments.backends.base import CHUNK_SIZE, Backend, Missing
from ehs_core.attachments.models import AttachmentChunk

CHUNKS = AttachmentChunk.__table__


class DatabaseBackend(Backend):
    name = "database"
    transactional = True

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def describe(self) -> str:
        return "database (table attachment_chunks)"

    def _session(self) -> Session:
        # Looked up at each use: tests bind the factory to their own transaction.
        return self.registry["dbsession_factory"]()

    def write(self, dbsession: Session, key: str, source: BinaryIO) -> int:
        source.seek(0)
        size = 0
        seq = 0
        while chunk := source.read(CHUNK_SIZE):
            dbsession.execute(insert(CHUNKS).values(storage_name=key, seq=seq, data=chunk))
            size += len(chunk)
            seq += 1
        return size

    def open(self, key: str) -> Iterator[bytes]:
        with self._session() as session:
            first = session.execute(select(CHUNKS.c.seq).where(
                CHUNKS.c.storage_name == key, CHUNKS.c.seq == 0)).first()
        if first is None:
            raise Missing(key)
        return self._read(key)

    def _read(self, key: str) -> Iterator[bytes]:
        with self._session() as session:
            seq = 0
            while True:
                chunk = session.execute(select(CHUNKS.c.data).where(
                    CHUNKS.c.storage_name == key, CHUNKS.c.seq == seq)).scalar()
                if chunk is None:
                    return
                yield bytes(chunk)
                seq += 1

    def delete(self, dbsession: Session, key: str) -> None:
        dbsession.execute(delete(CHUNKS).where(CHUNKS.c.storage_name == key))

    def keys(self) -> Iterator[str]:
        with self._session() as session:
            yield from session.execute(select(CHUNKS.c.storage_name).distinct()).scalars().all()
