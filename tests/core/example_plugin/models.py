"""The example plugin's one table: a tag on an incident. It has its own
metadata (the schema comes from its own migrations), so importing it does
not add a table to the core's models while the plugin is disabled."""

from __future__ import annotations

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ehs_core.incidents.models import Incident


class ExampleBase(DeclarativeBase):
    pass


class ExampleTag(ExampleBase):
    __tablename__ = "example_tags"

    incident_id: Mapped[int] = mapped_column(ForeignKey(Incident.id), primary_key=True)
    tag: Mapped[str] = mapped_column(String(50))
