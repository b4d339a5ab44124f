"""Photos and PDFs attached to incidents."""

from __future__ import annotations

from typing import Any, NamedTuple

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import ColumnElement, select

from ehs_core.attachments.backends import make_backend
from ehs_core.attachments.models import Attachment
from ehs_core.attachments.storage import MAX_PER_INCIDENT, max_upload_bytes
from ehs_core.errors import APIError
from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.models import Incident
from ehs_core.people.statements import may_see_statement_by, statement_by_column
from ehs_core.rowsjson import INSTANT, columns_of, decoder, json_rows
from ehs_core.serialize import iso

__all__ = ["MAX_PER_INCIDENT", "attachment_json", "attachments_section"]


def uploaded_file(request: Request) -> Any:
    """The file of a multipart API request's field `file` (the incident's
    files, an action's evidence), or the 4xx that says what was wrong."""
    limit = max_upload_bytes(request)
    if request.content_length and request.content_length > limit + 64 * 1024:
        raise APIError(413, f"The file is larger than {limit // (1024 * 1024)} MB")
    if not (request.content_type or "").startswith("multipart/form-data"):
        raise APIError(415, "Send the file as multipart/form-data in the field 'file'")
    upload = request.POST.get("file")
    if upload is None or not hasattr(upload, "file"):
        raise APIError(400, "Invalid request", [{"path": "file", "message": "Required"}])
    return upload


def attachment_json(item: Attachment) -> dict[str, Any]:
    return {"id": item.id, "filename": item.filename, "contentType": item.content_type,
            "size": item.size, "uploadedById": item.uploaded_by_id, "createdAt": iso(item.created_at),
            "url": f"/api/attachments/{item.id}"}


class AttachmentRow(NamedTuple):
    """What an incident's JSON shows of a file."""

    id: int
    filename: str
    content_type: str
    size: int
    uploaded_by_id: int | None
    created_at: Any
    # Who wrote the entry of the person whose statement this file is the
    # photo of (0: nobody known), None when it is no statement's photo.
    statement_by: int | None


_decode = decoder(AttachmentRow, created_at=INSTANT)


def attachments_column() -> ColumnElement[Any]:
    """The incident's files, read with the incident (a column section)."""
    columns = columns_of(AttachmentRow, Attachment, statement_by=statement_by_column())
    return select(json_rows(*columns)).where(Attachment.incident_id == Incident.id).scalar_subquery()


def attachments_section(request: Request, incident: Incident, value: Any) -> list[dict[str, Any]]:
    """The files the caller may see: a witness's statement photo only where
    the statement may be read (`people.services.may_see_statement_by`)."""
    return [attachment_json(row) for row in _decode(value) if may_see_statement_by(request, row.statement_by)]


def includeme(config: Configurator) -> None:
    # The store every host of a deployment must share (ehs.storage).
    settings = config.get_settings()
    config.registry["attachments.storage"] = make_backend(settings["ehs.storage"], config.registry)
    config.add_route("incident.attachments", INCIDENT + "/attachments", factory=FACTORY)
    config.add_route("attachment", r"/api/attachments/{id:\d{1,9}}",
                     factory="ehs_core.attachments.views.attachment_factory")
    config.add_route("attachment.preview", r"/api/attachments/{id:\d{1,9}}/preview",
                     factory="ehs_core.attachments.views.attachment_factory")
    config.add_incident_section("attachments", column=attachments_column, decode=attachments_section,
                                detail_only=True, fresh=list)
    config.scan(".views")
    from huey import crontab

    from ehs_core.attachments.sweep import SWEEP_JOB, sweep_orphans

    config.add_periodic_job(SWEEP_JOB, sweep_orphans, crontab(minute="41", hour="3"))  # daily
