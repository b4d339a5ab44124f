"""Attachments as files in one folder (`ehs.upload_dir`).

Bytes are written to a hidden temporary name, flushed to disk and renamed
into place, so a reader never sees half a file and a crash leaves only a
`.partial` file that `keys()` does not list.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from sqlalchemy.orm import Session

from ehs_core.attachments.backends.base import CHUNK_SIZE, Backend, Missing


class LocalBackend(Backend):
    name = "local"

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def describe(self) -> str:
        return f"local folder {self.directory}"

    def path(self, key: str) -> Path:
        return self.directory / key

    def write(self, dbsession: Session, key: str, source: BinaryIO) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.directory / f".{key}.partial"
        source.seek(0)
        try:
            with open(temporary, "xb") as target:
                shutil.copyfileobj(source, target, CHUNK_SIZE)
                target.flush()
                os.fsync(target.fileno())
                size = target.tell()
            os.replace(temporary, self.path(key))
        finally:
            temporary.unlink(missing_ok=True)
        return size

    def open(self, key: str) -> Iterator[bytes]:
        try:
            handle = open(self.path(key), "rb")
        except FileNotFoundError:
            raise Missing(key) from None
        return _read(handle)

    def delete(self, dbsession: Session, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def keys(self) -> Iterator[str]:
        if not self.directory.is_dir():
            return
        for entry in os.scandir(self.directory):
            if entry.is_file() and not entry.name.startswith("."):
                yield entry.name


def _read(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        while chunk := handle.read(CHUNK_SIZE):
            yield chunk
