from __future__ import annotations

import colander

from ehs_core.auth.schemas import email_field, new_password_field
from ehs_core.schemas import Bool, Choice, Int, Str, drop, field, text
from ehs_core.security import Role


def locale_field() -> colander.SchemaNode:
    """A person's language: a shipped locale ("en", "es"), or null for the
    installation's default; any other name is refused (issue #39)."""
    from ehs_core.ui import SHIPPED_LOCALES

    shipped = sorted(SHIPPED_LOCALES)
    return field(Str(nullable=True, max_length=10), missing=drop, validator=colander.OneOf(shipped))


class UserCreateSchema(colander.MappingSchema):
    name = text(200, min_length=1)
    email = email_field()
    role = field(Choice(Role))
    password = new_password_field(missing=drop)
    locale = locale_field()


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
    locale = locale_field()


class OwnSettingsSchema(colander.MappingSchema):
    """What a person changes of their own account (`PATCH /api/auth/me`)."""

    name = text(200, min_length=1, missing=drop)
    locale = locale_field()
