"""Attachment bytes in the configured store, typed by their content.

The type comes from libmagic (python-magic), never from the name or the
client's Content-Type; only photos and PDFs are kept. Bytes go under a
generated name to the store `ehs.storage` names (ehs_core/attachments/
backends: a local folder, the database, or S3); if the request's transaction
does not commit, they are removed again, so a failure leaves neither bytes
without a row nor a row without bytes.
"""

from __future__ import annotations

import logging
import os
import secrets
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import magic
from pyramid.request import Request

from ehs_core.attachments.backends import Backend

log = logging.getLogger(__name__)

ALLOWED_TYPES = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "image/heic": ".heic",
    "image/heif": ".heif",
    "application/pdf": ".pdf",
}
# ISO-BMFF brands of HEIC/HEIF photos; libmagic versions disagree on these
# (some call a `mif1` file video/mp4), so the ftyp box is read directly too.
HEIC_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis"}
HEIF_BRANDS = {b"mif1", b"msf1"}


def detect_type(head: bytes) -> str | None:
    """The allowed MIME type of these leading bytes, or None."""
    if len(head) >= 12 and head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in HEIC_BRANDS:
            return "image/heic"
        if brand in HEIF_BRANDS:
            return "image/heif"
    detected = magic.from_buffer(head, mime=True)
    return detected if detected in ALLOWED_TYPES else None


def clean_filename(name: str | None, content_type: str) -> str:
    """A display name safe in headers and file systems: no path, no control
    characters, bounded length, extension matching the real type."""
    base = os.path.basename((name or "").replace("\\", "/"))
    base = unicodedata.normalize("NFC", base)
    base = "".join(ch for ch in base if ch.isprintable() and ch not in '"<>:|?*/\\')
    stem = Path(base).stem.strip(" .")[:100] or "attachment"
    return stem + ALLOWED_TYPES[content_type]


def storage_backend(registry: Any) -> Backend:
    """The store `ehs.storage` names, made once at start-up."""
    return registry["attachments.storage"]


def store(request: Request, source: BinaryIO) -> tuple[str, int]:
    """Copy the upload under a generated name; returns (storage name, size).
    The bytes are removed again unless the transaction commits."""
    backend = storage_backend(request.registry)
    name = secrets.token_hex(16)
    if not backend.transactional:
        # After-commit hooks do not run on abort (a failed or retried
        # request), so an abort hook removes the bytes too. Registered before
        # writing, so a write that fails half way is cleaned up as well.
        txn = request.tm.get()
        txn.addAfterCommitHook(lambda committed: committed or _discard(backend, name))
        txn.addAfterAbortHook(lambda: _discard(backend, name))
    size = backend.write(request.dbsession, name, source)
    return name, size


def open_stored(registry: Any, storage_name: str) -> Iterator[bytes]:
    """The stored bytes in chunks; raises `Missing` when there are none."""
    return storage_backend(registry).open(storage_name)


def remove_after_commit(request: Request, storage_name: str) -> None:
    """Delete the bytes with the row: in the same transaction for the
    database store, after the commit for the others (a rolled-back delete
    must not lose the file)."""
    backend = storage_backend(request.registry)
    if backend.transactional:
        backend.delete(request.dbsession, storage_name)
        return

    def remove(committed: bool) -> None:
        if committed:
            _discard(backend, storage_name)

    request.tm.get().addAfterCommitHook(remove)


def _discard(backend: Backend, storage_name: str) -> None:
    # Runs in a transaction hook, where raising would only hide the reason.
    try:
        backend.delete(None, storage_name)  # type: ignore[arg-type]
    except Exception:
        log.exception("could not remove stored attachment %s from %s", storage_name, backend.describe())
