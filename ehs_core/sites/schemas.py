from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import colander

from ehs_core.schemas import Bool, Choice, Int, QueryBool, Str, drop, field, text
from ehs_core.sites.models import AreaKind


def _timezone(node: colander.SchemaNode, value: str | None) -> None:
    if value is None:
        return
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise colander.Invalid(node, "Must be an IANA time zone such as Europe/Berlin") from None


def _digits(count: tuple[int, ...], message: str):
    def validate(node: colander.SchemaNode, value: str | None) -> None:
        # ASCII digits only: str.isdigit() also takes "١٢٣" and "²", which
        # the OSHA files (ITA CSV) cannot carry.
        if value is not None and not (re.fullmatch(r"[0-9]+", value) and len(value) in count):
            raise colander.Invalid(node, message)
    return validate


class _Digits(Str):
    """Digits with common separators removed (12-3456789 -> 123456789)."""

    def check(self, node: colander.SchemaNode, value: object) -> str:
        return re.sub(r"[\s-]", "", super().check(node, value))


class SiteCreateSchema(colander.MappingSchema):
    name = text(200, min_length=1)
    address = text(500, missing=drop, nullable=True)
    timezone = colander.SchemaNode(Str(nullable=True), missing=drop, validator=_timezone)


class SiteUpdateSchema(colander.MappingSchema):
    changed_elsewhere = {"areas": "Areas are added with POST /api/sites/{id}/areas and changed "
                                  "with PATCH /api/areas/{id}"}

    name = text(200, min_length=1, missing=drop)
    address = text(500, missing=drop, nullable=True)
    timezone = colander.SchemaNode(Str(nullable=True), missing=drop, validator=_timezone)
    archived = field(Bool(), missing=drop)
    streetAddress = text(200, missing=drop, nullable=True)
    city = text(100, missing=drop, nullable=True)
    state = field(
        Str(nullable=True), missing=drop,
        validator=colander.Regex(r"^[A-Za-z]{2}$", "Must be a 2-letter state or territory code"),
    )
    zip = colander.SchemaNode(_Digits(nullable=True), missing=drop,
                              validator=_digits((5, 9), "Must be 5 or 9 digits"))
    naicsCode = colander.SchemaNode(_Digits(nullable=True), missing=drop,
                                    validator=_digits((6,), "Must be a 6-digit NAICS code"))
    industryDescription = text(300, missing=drop, nullable=True)
    ein = colander.SchemaNode(_Digits(nullable=True), missing=drop,
                              validator=_digits((9,), "Must be a 9-digit EIN"))
    establishmentType = field(
        Int(nullable=True), missing=drop,
        validator=colander.OneOf(
            [1, 2, 3], msg_err="Must be 1 (not a government entity), 2 (a state government entity) "
                               "or 3 (a local government entity)"),
        description="1 not a government entity, 2 state government, 3 local government",
    )


class AreaCreateSchema(colander.MappingSchema):
    name = text(200, min_length=1)
    kind = field(Choice(AreaKind), missing=drop)
    parentId = field(Int(nullable=True), missing=drop)


class AreaUpdateSchema(colander.MappingSchema):
    name = text(200, min_length=1, missing=drop)
    kind = field(Choice(AreaKind), missing=drop)
    archived = field(Bool(), missing=drop)

    changed_elsewhere = {
        "parentId": "An area keeps the parent it was created under; create a new area to move it",
        "siteId": "An area stays on its site; create a new area on the other site",
    }


class SiteListQuery(colander.MappingSchema):
    includeArchived = field(QueryBool(), missing=False)
