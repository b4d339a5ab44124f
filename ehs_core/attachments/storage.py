"""Keeping and refusing uploaded files: the one place an attachment is
stored or removed, from the JSON API and a kiosk link alike.

Convention as in `incidents.filing`: the request is the unit of work
(`request.dbsession`; `request.tm` so the bytes are removed again if the
transaction does not commit; `request.registry` for the store and
`ehs.max_upload_mb`); refusals are `Refused` (a domain error).

The type comes from libmagic (python-magic), never from the name or the
client's Content-Type; only photos and PDFs are kept. Bytes go under a
generated name to the store `ehs.storage` names (ehs_core/attachments/
backends: a local folder, the database, or S3); if the request's transaction
does not commit, they are removed again, so a failure leaves neither bytes
without a row nor a row without bytes.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import magic
from pyramid.request import Request
from sqlalchemy import func, select

from ehs_core.attachments.backends import Backend
from ehs_core.attachments.decoding import RETRY_AFTER_SECONDS, Busy, TooManyPixels
from ehs_core.attachments.metadata import UnreadablePhoto, strip_metadata
from ehs_core.attachments.models import Attachment
from ehs_core.db import utcnow
from ehs_core.errors import Conflict, DomainError
from ehs_core.events import AttachmentAdded, AttachmentRemoved, actor, publish
from ehs_core.idempotency import stored_under
from ehs_core.incidents.models import Incident

MAX_PER_INCIDENT = 20

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


class Refused(DomainError):
    """A file that is not kept; `status` says why (413 too large or too many
    pixels, 400 empty, 415 not a readable photo or PDF, 409 the incident is
    full, 503 no decode slot freed in time, with Retry-After)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message, headers=headers)
        self.status = status


def max_upload_bytes(request: Request) -> int:
    return request.registry.settings["ehs.max_upload_mb"] * 1024 * 1024


def max_image_pixels(request: Request) -> int:
    """`ehs.max_image_pixels`: the most pixels (all frames) a photo may decode to."""
    return request.registry.settings["ehs.max_image_pixels"]


def save_upload(request: Request, incident: Incident, upload: Any, uploader_id: int | None,
                action_id: int | None = None) -> Attachment:
    """Check and keep one uploaded file (cgi.FieldStorage-like: `.file`,
    `.filename`); raises Refused. `uploader_id` is None for a kiosk link.
    The caller locks the incident first when uploads may race (the limit of
    files per incident is counted here). `action_id`: the corrective action
    the file is evidence of."""
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
    try:
        source = strip_metadata(source, content_type, max_image_pixels(request)) or source
    except TooManyPixels as exc:
        raise Refused(413, exc.message) from None
    except Busy as exc:
        raise Refused(503, exc.message, {"Retry-After": str(RETRY_AFTER_SECONDS)}) from None
    except UnreadablePhoto:
        raise Refused(415, "The photo could not be read") from None
    try:
        storage_name, stored_size = store(request, source)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        log.error("no room to store an upload in %s: %s", storage_backend(request.registry).describe(), exc)
        # RFC 4918 11.5, 507 Insufficient Storage: the server, not the file, is at fault.
        raise Refused(507, "The server has no room left to keep this file, so nothing was saved. "
                           "Please tell your administrator; try again once they have made room.") from None
    # An anonymous report keeps no name a phone or a person gave the file.
    name = None if incident.anonymous else upload.filename
    item = Attachment(incident_id=incident.id, filename=clean_filename(name, content_type),
                      storage_name=storage_name, content_type=content_type, size=stored_size,
                      uploaded_by_id=uploader_id, created_at=utcnow(), action_id=action_id)
    dbsession.add(item)
    dbsession.flush()
    publish(request, AttachmentAdded(request, incident_id=incident.id, attachment=item,
                                     actor_id=uploader_id))
    return item


def save_upload_once(request: Request, incident: Incident, upload: Any, uploader_id: int | None,
                     client_id: str | None) -> tuple[Attachment, bool]:
    """`save_upload`, recognising a retry: with a `client_id` already used
    on this incident by the same uploader, the stored attachment comes back
    (created False) and nothing is stored again; another uploader's use of
    the key is a Conflict. Returns (attachment, created)."""
    if client_id is not None:
        existing = stored_under(request, Attachment, incident.id, client_id)
        if existing is not None:
            if existing.uploaded_by_id != uploader_id:
                raise Conflict("This clientId was already used")
            return existing, False
    item = save_upload(request, incident, upload, uploader_id)
    item.client_id = client_id
    return item, True


def remove_attachment(request: Request, item: Attachment) -> None:
    """Delete the row now and the bytes with it (see remove_after_commit)."""
    publish(request, AttachmentRemoved(request, incident_id=item.incident_id, attachment=item,
                                       actor_id=actor(request)))
    remove_after_commit(request, item.storage_name)
    request.dbsession.delete(item)
