"""The bodies a person involved in an incident takes, for the JSON API and
the incident page alike."""

from __future__ import annotations

from enum import StrEnum

import colander

from ehs_core.schemas import Choice, Date, Int, NullableMapping, drop, field, text


class Involvement(StrEnum):
    """How someone was involved (issue #39 item 4)."""

    injured = "injured"
    witness = "witness"
    other = "other"


class EmploymentType(StrEnum):
    """Employee or not. The first four are the OSHA plugin's words for an
    injured person (1904.31: employees and supervised temporary workers are
    recorded by this employer, contractors' employees by theirs), so an
    injury case started from a person keeps the answer; `public` is anyone
    else (a passer-by, a customer)."""

    employee = "employee"
    temporary_worker = "temporary_worker"
    contractor = "contractor"
    visitor = "visitor"
    public = "public"


class StatementSchema(colander.MappingSchema):
    """A statement in the person's own words: typed (`text`) or a photo of
    the paper statement (`attachmentId`, one of the incident's files), or
    both; `date` is the day it was given (today in the site's zone when
    left out)."""

    text = text(20000, missing=drop, nullable=True)
    date = field(Date(not_future=True), missing=drop)
    attachmentId = field(Int(nullable=True), missing=drop)


def statement_node() -> colander.SchemaNode:
    """`statement`: an object, or null (no statement; on a change, remove it)."""
    node = StatementSchema(name="statement", missing=drop)
    node.typ = NullableMapping()
    return node


class PersonSchema(colander.MappingSchema):
    name = text(200, min_length=1)
    involvement = field(Choice(Involvement))
    employmentType = field(Choice(EmploymentType, nullable=True), missing=None)
    role = text(200, missing=None, nullable=True)
    contact = text(200, missing=None, nullable=True)
    statement = statement_node()


class PersonUpdateSchema(colander.MappingSchema):
    name = text(200, min_length=1, missing=drop)
    involvement = field(Choice(Involvement), missing=drop)
    employmentType = field(Choice(EmploymentType, nullable=True), missing=drop)
    role = text(200, missing=drop, nullable=True)
    contact = text(200, missing=drop, nullable=True)
    statement = statement_node()
