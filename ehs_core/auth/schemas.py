from __future__ import annotations

import re

import colander
from email_validator import EmailNotValidError, validate_email

from ehs_core.auth.passwords import MAX_LENGTH, MIN_LENGTH, password_problem
from ehs_core.schemas import Str, text

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _deliverable(node: colander.SchemaNode, value: str) -> None:
    """An address a mail server can deliver to, by its syntax alone
    (email-validator; no DNS look-up, so no network on a request): comments
    ("ops(x@example.com)"), quoted parts, IP literals and reserved names
    such as `.test` and `localhost` are refused (RFC 5321, RFC 6761;
    ASVS 5.0 2.2.1, input validated against an allow-list of what is
    expected)."""
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError:
        raise colander.Invalid(node, "Must be an email address a mail server can deliver to") from None


_deliverable.openapi = {"format": "email"}  # for the OpenAPI document


def email_field(**kw: object) -> colander.SchemaNode:
    """An address the service keeps (first-run setup, a new user or an
    invitation): it must be deliverable (`_deliverable`)."""
    return colander.SchemaNode(
        Str(), validator=colander.All(
            colander.Length(max=320),
            colander.Regex(EMAIL_RE, "Must be an email address"), _deliverable), **kw)


def given_email_field(**kw: object) -> colander.SchemaNode:
    """An address looked up (sign-in, an emailed link asked for): only
    bounded, so that an account kept before the stricter rule still signs
    in; nothing is kept or sent for an address no account has."""
    return colander.SchemaNode(
        Str(), validator=colander.All(
            colander.Length(max=320),
            colander.Regex(EMAIL_RE, "Must be an email address")), **kw)


def _new_password(node: colander.SchemaNode, value: str) -> None:
    problem = password_problem(value)
    if problem:
        raise colander.Invalid(node, problem)


_new_password.openapi = {  # for the OpenAPI document: what password_problem checks
    "minLength": MIN_LENGTH, "maxLength": MAX_LENGTH,
    "description": f"{MIN_LENGTH} to {MAX_LENGTH} characters; well-known passwords are refused"}


def new_password_field(**kw: object) -> colander.SchemaNode:
    return colander.SchemaNode(Str(strip=False), validator=_new_password, **kw)


def given_password_field(**kw: object) -> colander.SchemaNode:
    # Passwords being checked are not judged by the policy, only bounded.
    return colander.SchemaNode(Str(strip=False), validator=colander.Length(min=1, max=1024), **kw)


class SetupSchema(colander.MappingSchema):
    organizationName = text(200, min_length=1)
    name = text(200, min_length=1)
    email = email_field()
    password = new_password_field()


class LoginSchema(colander.MappingSchema):
    email = given_email_field()
    password = given_password_field()


class EmailSchema(colander.MappingSchema):
    email = given_email_field()


class TokenSchema(colander.MappingSchema):
    token = text(200, min_length=1)


class ResetConfirmSchema(colander.MappingSchema):
    token = text(200, min_length=1)
    newPassword = new_password_field()


class PasswordChangeSchema(colander.MappingSchema):
    currentPassword = given_password_field()
    newPassword = new_password_field()

