"""Photos and PDFs attached to incidents."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.attachments.backends import make_backend
from ehs_core.attachments.models import Attachment
from ehs_core.attachments.storage import MAX_PER_INCIDENT
from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.models import Incident
from ehs_core.serialize import iso

__all__ = ["MAX_PER_INCIDENT", "attachment_json", "attachments_section"]


def attachment_json(item: Attachment) -> dict[str, Any]:
    return {"id": item.id, "filename": item.filename, "contentType": item.content_type,
            "size": item.size, "uploadedById": item.uploaded_by_id, "createdAt": iso(item.created_at),
            "url": f"/api/attachments/{item.id}"}


def attachments_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    found: dict[int, list] = {i.id: [] for i in incidents}
    rows = request.dbsession.execute(select(Attachment).where(
        Attachment.incident_id.in_(list(found))).order_by(Attachment.id))
    for row in rows.scalars():
        found[row.incident_id].append(attachment_json(row))
    return found


def includeme(config: Configurator) -> None:
    # The store every host of a deployment must share (ehs.storage).
    settings = config.get_settings()
    config.registry["attachments.storage"] = make_backend(settings["ehs.storage"], config.registry)
    config.add_route("incident.attachments", INCIDENT + "/attachments", factory=FACTORY)
    config.add_route("attachment", r"/api/attachments/{id:\d{1,9}}",
                     factory="ehs_core.attachments.views.attachment_factory")
    config.add_incident_section("attachments", attachments_section, detail_only=True, fresh=list)
    config.scan(".views")
