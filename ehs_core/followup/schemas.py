"""The follow-up messages' body, for the team's and the reporter's endpoints
(and their page forms, which validate through the same schema)."""

from __future__ import annotations

import colander

from ehs_core.schemas import text

MAX_BODY = 5000


class MessageSchema(colander.MappingSchema):
    body = text(MAX_BODY, min_length=1, description="The message, plain text (line breaks kept)")
