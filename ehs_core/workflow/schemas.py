"""What a move of an incident takes, for the JSON API and the page alike."""

from __future__ import annotations

import colander

from ehs_core.incidents.models import Status
from ehs_core.schemas import Choice, field, text


class TransitionSchema(colander.MappingSchema):
    to = field(Choice(Status))
    note = text(20000, missing=None, nullable=True)
