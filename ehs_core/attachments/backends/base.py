"""The interface every attachment store implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import BinaryIO

from sqlalchemy.orm import Session

# Bytes move in pieces of this size: big enough that a 10 MB photo is a
# handful of round trips, small enough that memory stays flat under load.
CHUNK_SIZE = 1024 * 1024


class Missing(LookupError):
    """The store holds nothing under this key."""


class Backend(ABC):
    """One place attachment bytes are kept, under the attachment's generated
    `storage_name`.

    `dbsession` is the caller's session, so a `transactional` store (the
    database) writes and deletes inside the request's transaction and an
    abort undoes them; the other stores ignore it and are kept clean by
    transaction hooks in `ehs_core.attachments.storage`.
    """

    name: str
    transactional: bool = False

    @abstractmethod
    def write(self, dbsession: Session, key: str, source: BinaryIO) -> int:
        """Copy `source` from its start under `key`; returns the size in bytes."""

    @abstractmethod
    def open(self, key: str) -> Iterator[bytes]:
        """The bytes under `key`, in chunks; raises Missing at once (not on
        the first chunk) when there are none, so a caller can still answer 404."""

    @abstractmethod
    def delete(self, dbsession: Session, key: str) -> None:
        """Remove `key`; removing what is not there is not an error."""

    @abstractmethod
    def keys(self) -> Iterator[str]:
        """Every key the store holds (for moving and for finding orphans)."""

    def describe(self) -> str:
        return self.name
