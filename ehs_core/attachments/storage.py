"""Attachment bytes on disk, typed by their content.

The type comes from libmagic (python-magic), never from the name or the
client's Content-Type; only photos and PDFs are kept. Bytes go to a
generated name under `ehs.upload_dir`, written to a temporary file first and
renamed into place; if the request's transaction does not commit, the file
is removed again, so a failure leaves neither a file without a row nor a row
without a file.
"""

from __future__ import annotations

import os
import secrets
import shutil
import unicodedata
from pathlib import Path
from typing import BinaryIO

import magic
from pyramid.request import Request

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


def upload_dir(request: Request) -> Path:
    path = Path(request.registry.settings["ehs.upload_dir"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def store(request: Request, source: BinaryIO) -> tuple[str, int]:
    """Copy the upload under a generated name; returns (storage name, size).
    The file is removed again unless the transaction commits."""
    directory = upload_dir(request)
    name = secrets.token_hex(16)
    temporary = directory / f".{name}.partial"
    final = directory / name
    source.seek(0)
    try:
        with open(temporary, "xb") as target:
            shutil.copyfileobj(source, target, 1024 * 1024)
            target.flush()
            os.fsync(target.fileno())
            size = target.tell()
        os.replace(temporary, final)
    finally:
        temporary.unlink(missing_ok=True)

    def cleanup(committed: bool) -> None:
        if not committed:
            final.unlink(missing_ok=True)

    # After-commit hooks do not run on abort (a failed or retried request),
    # so the file is removed by an abort hook too.
    txn = request.tm.get()
    txn.addAfterCommitHook(cleanup)
    txn.addAfterAbortHook(lambda: final.unlink(missing_ok=True))
    return name, size


def remove_after_commit(request: Request, storage_name: str) -> None:
    path = upload_dir(request) / storage_name

    def remove(committed: bool) -> None:
        if committed:
            path.unlink(missing_ok=True)

    request.tm.get().addAfterCommitHook(remove)
