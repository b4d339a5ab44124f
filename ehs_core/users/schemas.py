from __future__ import annotations

import colander

from ehs_core.auth.schemas import email_field, new_password_field
from ehs_core.schemas import Bool, Choice, Int, drop, field, text
from ehs_core.security import Role


class UserCreateSchema(colander.MappingSchema):
    name = text(200, min_length=1)
    email = email_field()
    role = field(Choice(Role))
    password = new_password_field(missing=drop)


class SiteIds(colander.SequenceSchema):
    """The sites a person works at (none: all of them)."""

    siteId = field(Int())
    validator = colander.Length(max=500)


class UserUpdateSchema(colander.MappingSchema):
    name = text(200, min_length=1, missing=drop)
    role = field(Choice(Role), missing=drop)
    active = field(Bool(), missing=drop)
    password = new_password_field(missing=drop)
    siteIds = SiteIds(missing=drop)
