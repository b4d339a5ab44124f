"""The JSON face of attachments: multipart parsing, download headers; the
operations live in `storage`."""

from __future__ import annotations

import logging
import uuid
from typing import Any
from urllib.parse import quote

from pyramid.authorization import Allow
from pyramid.httpexceptions import HTTPNoContent, HTTPNotFound
from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config

from ehs_core.attachments import attachment_json, decoding, thumbnails, uploaded_file
from ehs_core.attachments.backends import Missing
from ehs_core.attachments.models import Attachment
from ehs_core.attachments.storage import (
    max_image_pixels,
    open_stored,
    remove_attachment,
    save_upload_once,
)
from ehs_core.errors import APIError
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import IncidentContext, child_of_incident
from ehs_core.people.statements import statement_file_hidden
from ehs_core.security import Permission, Role, role_principal

log = logging.getLogger(__name__)

# Served files run nothing: no scripts, no plugins, no same-origin access.
SANDBOX_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"


class AttachmentContext:
    def __init__(self, incident_context: IncidentContext, attachment: Attachment) -> None:
        self.attachment = attachment
        acl = list(incident_context.__acl__)
        acl.append((Allow, role_principal(Role.supervisor), Permission.delete_attachment))
        if attachment.uploaded_by_id is not None:
            acl.append((Allow, f"user:{attachment.uploaded_by_id}", Permission.delete_attachment))
        self.__acl__ = acl


def attachment_factory(request: Request) -> AttachmentContext:
    item, incident_context = child_of_incident(request, Attachment)
    if statement_file_hidden(request, item.id):  # a witness's statement not the caller's to read
        raise HTTPNotFound()
    return AttachmentContext(incident_context, item)


@view_config(route_name="incident.attachments", request_method="POST", renderer="json",
             permission=Permission.upload_attachment,
             responses=(200, 201), multipart={"file": "file", "clientId": "uuid"})
def upload(context: IncidentContext, request: Request) -> dict[str, Any]:
    upload = uploaded_file(request)
    client_id = client_id_field(request.POST.get("clientId"))
    # Lock the incident: concurrent uploads must not exceed the per-incident limit.
    incident = request.dbsession.get(Incident, context.incident.id, with_for_update=True)
    item, created = save_upload_once(request, incident, upload, request.identity.user_id, client_id)
    request.response.status = 201 if created else 200
    return attachment_json(item)


def client_id_field(raw: Any) -> str | None:
    """The optional `clientId` form field: a UUID, or 400 naming it."""
    if raw is None or raw == "":
        return None
    try:
        return str(uuid.UUID(str(raw)))
    except ValueError:
        raise APIError(400, "Invalid request", [{"path": "clientId", "message": "Must be a UUID"}]) from None


def content_disposition(kind: str, filename: str) -> str:
    """RFC 6266: an ASCII fallback plus the UTF-8 name."""
    fallback = filename.encode("ascii", "replace").decode().replace("?", "_").replace('"', "")
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def stored_chunks(request: Request, item: Attachment) -> Any:
    """The attachment's stored bytes; 404 (logged) when the store has none."""
    try:
        return open_stored(request.registry, item.storage_name)
    except Missing:
        log.error("attachment %s has no file %s", item.id, item.storage_name)
        raise HTTPNotFound() from None


def served(response: Response, kind: str, filename: str) -> Response:
    """The headers every served file (and preview) carries: its name, the
    sandboxing policy, no sniffing, and not kept by the browser."""
    response.headers["Content-Disposition"] = content_disposition(kind, filename)
    response.headers["Content-Security-Policy"] = SANDBOX_CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "private, no-store"
    return response


@view_config(route_name="attachment", request_method="GET", permission=Permission.view_incident,
             media="application/octet-stream")
def download(context: AttachmentContext, request: Request) -> Response:
    item = context.attachment
    response = Response(app_iter=stored_chunks(request, item), content_type=item.content_type,
                        content_length=item.size, last_modified=item.created_at)
    kind = "inline" if item.content_type.startswith("image/") else "attachment"
    return served(response, kind, item.filename)


@view_config(route_name="attachment.preview", request_method="GET", permission=Permission.view_incident,
             media="image/webp")
def preview(context: AttachmentContext, request: Request) -> Response:
    """A photo's preview (`thumbnails`): at most 480 pixels on its longer
    side, as WebP, with the file's own headers; 404 for a file that is no
    photo (a PDF), whose photo cannot be read or has more pixels than
    `ehs.max_image_pixels`; 503 when the process's decode slots stay busy."""
    item = context.attachment
    if not thumbnails.previewed(item.content_type):
        raise HTTPNotFound()
    try:
        body = thumbnails.preview(item.storage_name, stored_chunks(request, item), max_image_pixels(request))
    except thumbnails.NoPreview as exc:
        log.warning("attachment %s: no preview (%s)", item.id, exc)
        raise HTTPNotFound() from None
    except decoding.Busy as exc:
        raise APIError(503, exc.message, headers={"Retry-After": str(decoding.RETRY_AFTER_SECONDS)}) from None
    response = Response(body=body, content_type="image/webp", last_modified=item.created_at)
    return served(response, "inline", item.filename + ".webp")


@view_config(route_name="attachment", request_method="DELETE", permission=Permission.delete_attachment,
             responses=(204,))
def delete(context: AttachmentContext, request: Request) -> HTTPNoContent:
    remove_attachment(request, context.attachment)
    return HTTPNoContent()
