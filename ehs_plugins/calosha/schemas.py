"""What the California plugin's endpoints take (and the OpenAPI document shows)."""

from __future__ import annotations

from enum import StrEnum

import colander

from ehs_core.schemas import Bool, Date, DateTime, Int, QueryInt, StrList, field, text, unless_null


class IncidentKind(StrEnum):
    """The kind of incident the log names (§6401.9(d)(1)(C): "physical
    attack, ... threat of physical force, ... weapon ...")."""

    physical_attack = "physical_attack"
    attack_with_weapon = "attack_with_weapon"
    threat = "threat"
    sexual_assault = "sexual_assault"
    animal_attack = "animal_attack"
    other = "other"


def _kinds(node: colander.SchemaNode, value: list[str]) -> None:
    if not value:
        raise colander.Invalid(node, "Choose at least one kind of incident")
    allowed = {kind.value for kind in IncidentKind}
    wrong = [item for item in value if item not in allowed]
    if wrong:
        raise colander.Invalid(node, f"Must be among: {', '.join(k.value for k in IncidentKind)}")


class ViolenceSchema(colander.MappingSchema):
    """The violent incident log's entry (Labor Code §6401.9(d)(1)); the
    person completing it is the caller, with the title they give."""

    violenceType = field(Int(), validator=colander.Range(1, 4, min_err="Must be 1, 2, 3 or 4",
                                                         max_err="Must be 1, 2, 3 or 4"))
    incidentKinds = field(StrList(max_items=6, max_length=40), validator=_kinds)
    perpetratorRelation = text(500, min_length=1)
    description = text(4000, min_length=1)
    circumstances = text(4000, min_length=1)
    where = text(500, min_length=1)
    consequences = text(4000, min_length=1)
    securityCalled = field(Bool())
    policeCalled = field(Bool())
    actionsTaken = text(4000, missing=None, nullable=True)
    peopleInvolved = field(StrList(max_items=20, max_length=200), missing=())
    completedByTitle = text(200, min_length=1)


class SeriousSchema(colander.MappingSchema):
    """The facts of §342(a)'s serious injury; `learnedAt`: when the employer
    learned (the report's clock; by default when the incident was reported)."""

    died = field(Bool(), missing=False)
    inpatientHours = field(Int(nullable=True), missing=None,
                           validator=unless_null(colander.Range(0, 100_000, min_err="Must not be negative")))
    observationOnly = field(Bool(), missing=False)
    lostMember = field(Bool(), missing=False)
    disfigurement = field(Bool(), missing=False)
    learnedAt = field(DateTime(nullable=True, not_future=True), missing=None)


class LogRequestSchema(colander.MappingSchema):
    siteId = field(Int(nullable=True), missing=None)
    requester = text(200, missing=None, nullable=True)
    requestedAt = field(DateTime(nullable=True, not_future=True), missing=None)


def log_query_schema(registry: object = None) -> colander.SchemaNode:
    """`siteId`, and `from` and `to` (dates on each site's own clock; `from`
    is a Python keyword, so the nodes are named here)."""
    schema = colander.SchemaNode(colander.Mapping(unknown="ignore"))
    schema.add(field(QueryInt(), missing=None, name="siteId"))
    schema.add(field(Date(nullable=True), missing=None, name="from"))
    schema.add(field(Date(nullable=True), missing=None, name="to"))
    return schema
