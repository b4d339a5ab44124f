"""What the people involved follow from other parts of the core."""

from __future__ import annotations

from pyramid.events import subscriber

from ehs_core.events import AttachmentRemoved
from ehs_core.people.services import forget_attachment


@subscriber(AttachmentRemoved)
def statement_photo_removed(event: AttachmentRemoved) -> None:
    forget_attachment(event.request, event.attachment)
