"""Every address the service keeps is one a mail server can deliver to
(email-validator, syntax only, no network): first-run setup, a new user
and an invitation, from the API and the pages. `POST /api/users` took
`ops(x@example.com)`, an address with a comment in it, with 201."""

from __future__ import annotations

import email_validator
import pytest

from ehs_core.testing import PASSWORD

UNDELIVERABLE = ["ops(x@example.com)", '"ops x"@example.com', "ops@[192.0.2.1]", "ops..x@example.com",
                 "ops@example..com", "ops@-example.com", "ops@example.com.", "ops\u200b@example.com"]


@pytest.mark.parametrize("address", UNDELIVERABLE)
def test_an_undeliverable_address_is_refused_for_a_new_user(admin, inbox, address):
    refused = admin.post_json("/api/users", {"name": "Ops", "email": address, "role": "reporter"},
                              status=400)
    assert [issue["path"] for issue in refused.json["issues"]] == ["email"]
    assert address not in {user["email"] for user in admin.get("/api/users").json}
    assert inbox.settle() == []


def test_an_undeliverable_address_is_refused_for_an_invitation_on_the_page(admin, inbox):
    refused = admin.post("/admin/users", {"name": "Ops", "email": "ops(x@example.com)", "role": "reporter"},
                         status=400)
    assert 'id="email-error"' in refused.text and "a mail server can deliver to" in refused.text
    assert inbox.settle() == []


def test_an_undeliverable_address_is_refused_at_first_run_setup(client):
    refused = client.post_json("/api/setup", {"organizationName": "Acme", "name": "Ada",
                                              "email": "ada(x@example.com)", "password": PASSWORD},
                               status=400)
    assert [issue["path"] for issue in refused.json["issues"]] == ["email"]
    assert client.get("/api/setup").json == {"needsSetup": True}


def test_reserved_names_are_refused_outside_the_tests(admin, monkeypatch):
    """`.test` is reserved (RFC 6761); only the test kit allows it."""
    monkeypatch.setattr(email_validator, "TEST_ENVIRONMENT", False)
    for address in ("sam@acme.test", "sam@localhost", "sam@acme.invalid"):
        admin.post_json("/api/users", {"name": "Sam", "email": address, "role": "reporter"}, status=400)
    created = admin.post_json("/api/users", {"name": "Sam", "email": "Sam.Supervisor+ehs@Acme.example.com",
                                             "role": "reporter"}, status=201)
    assert created.json["user"]["email"] == "sam.supervisor+ehs@acme.example.com"


def test_signing_in_looks_up_any_address_and_refuses_alike(client, admin):
    """Addresses are only looked up on sign-in: a wrong one is the usual 401."""
    answer = client.post_json("/api/auth/login", {"email": "ops(x@example.com)", "password": PASSWORD},
                              status=401)
    assert answer.json == client.post_json("/api/auth/login", {"email": "nobody@example.com",
                                                                "password": PASSWORD}, status=401).json
