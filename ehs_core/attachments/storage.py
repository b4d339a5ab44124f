"""Keeping and refusing uploaded files: the one place an attachment is
stored or removed, from the JSON API and a kiosk link alike.

Convention as in `incidents.filing`: the request is the unit of work
(`request.dbsession`; `request.tm` so a file is removed again if the
transaction does not commit; `request.registry` for `ehs.upload_dir` and
`ehs.max_upload_mb`); refusals are `Refused` (a domain error).

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
from typing import Any, BinaryIO

import magic
from pyramid.request import Request
from sqlalchemy import func, select

from ehs_core.attachments.models import Attachment
from ehs_core.db import utcnow
from ehs_core.errors import DomainError
from ehs_core.events import AttachmentAdded, AttachmentRemoved, actor, publish
from ehs_core.incidents.models import Incident

MAX_PER_INCIDENT = 20

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


class Refused(DomainError):
    """A file that is not kept; `status` says why (413 too large, 400 empty,
    415 not a photo or PDF, 409 the incident is full)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def max_upload_bytes(request: Request) -> int:
    return request.registry.settings["ehs.max_upload_mb"] * 1024 * 1024


def save_upload(request: Request, incident: Incident, upload: Any, uploader_id: int | None) -> Attachment:
    """Check and keep one uploaded file (cgi.FieldStorage-like: `.file`,
    `.filename`); raises Refused. `uploader_id` is None for a kiosk link.
    The caller locks the incident first when uploads may race (the limit of
    files per incident is counted here)."""
    limit = max_upload_bytes(request)
    source = upload.file
    source.seek(0, 2)
    size = source.tell()
    if size > limit:
        raise Refused(413, f"The file is larger than {limit // (1024 * 1024)} MB")
    if size == 0:
        raise Refused(400, "The file is empty")
    source.seek(0)
    content_type = detect_type(source.read(8192))
    if content_type is None:
        raise Refused(415, "Only photos (JPEG, PNG, WebP, GIF, HEIC) and PDF files are accepted")
    dbsession = request.dbsession
    count = dbsession.execute(select(func.count()).select_from(Attachment)
                              .where(Attachment.incident_id == incident.id)).scalar()
    if count >= MAX_PER_INCIDENT:
        raise Refused(409, f"An incident holds at most {MAX_PER_INCIDENT} files")
    storage_name, stored_size = store(request, source)
    item = Attachment(incident_id=incident.id, filename=clean_filename(upload.filename, content_type),
                      storage_name=storage_name, content_type=content_type, size=stored_size,
                      uploaded_by_id=uploader_id, created_at=utcnow())
    dbsession.add(item)
    dbsession.flush()
    publish(request, AttachmentAdded(request, incident_id=incident.id, attachment=item,
                                     actor_id=uploader_id))
    return item


def remove_attachment(request: Request, item: Attachment) -> None:
    """Delete the row now and the file once the transaction commits."""
    publish(request, AttachmentRemoved(request, incident_id=item.incident_id, attachment=item,
                                       actor_id=actor(request)))
    remove_after_commit(request, item.storage_name)
    request.dbsession.delete(item)
