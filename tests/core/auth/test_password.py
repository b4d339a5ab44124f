"""Changing one's own password (POST /api/auth/password)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from ehs_core.auth.passwords import passwords
from ehs_core.testing import PASSWORD
from ehs_core.users.models import User
from tests.core.auth.support import create_user, session_cookie, with_cookie

CHANGE = "/api/auth/password"
LOGIN = "/api/auth/login"
NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def bob(admin, new_client):
    create_user(admin, "bob@acme.test", name="Bob")
    browser = new_client()
    browser.login("bob@acme.test")
    return browser


def can_sign_in(new_client, password: str) -> bool:
    response = new_client().post_json(LOGIN, {"email": "bob@acme.test", "password": password},
                                      expect_errors=True)
    assert response.status_int in (200, 401)
    return response.status_int == 200


def test_change_needs_a_session(client):
    client.post_json(CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}, status=401)


def test_wrong_current_password_is_a_400_on_current_password_and_changes_nothing(bob, new_client):
    response = bob.post_json(CHANGE, {"currentPassword": "not my password",
                                      "newPassword": NEW_PASSWORD}, status=400)
    assert [issue["path"] for issue in response.json["issues"]] == ["currentPassword"]
    assert "error" in response.json
    bob.get("/api/auth/me", status=200)
    assert can_sign_in(new_client, PASSWORD)
    assert not can_sign_in(new_client, NEW_PASSWORD)


def test_change_sets_the_password_and_ends_other_sessions_but_keeps_this_one(bob, new_client):
    other = new_client()
    other.login("bob@acme.test")
    before = session_cookie(bob)

    response = bob.post_json(CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
                             status=204)
    assert response.body == b""
    after = session_cookie(bob)
    assert after and after != before

    bob.get("/api/auth/me", status=200)
    other.get("/api/auth/me", status=401)
    new_client().get("/api/auth/me", headers=with_cookie(before), status=401)
    assert can_sign_in(new_client, NEW_PASSWORD)
    assert not can_sign_in(new_client, PASSWORD)


@pytest.mark.parametrize(("password", "message"), [
    ("too short", "Must be at least 10 characters"),
    ("password123", "This password is too common; choose another"),
])
def test_new_password_must_follow_the_policy(bob, new_client, password, message):
    response = bob.post_json(CHANGE, {"currentPassword": PASSWORD, "newPassword": password},
                             status=400)
    assert response.json["issues"] == [{"path": "newPassword", "message": message}]
    assert can_sign_in(new_client, PASSWORD)


def test_missing_fields_are_reported(bob):
    response = bob.post_json(CHANGE, {}, status=400)
    paths = sorted(issue["path"] for issue in response.json["issues"])
    assert paths == ["currentPassword", "newPassword"]


def test_guessing_the_current_password_is_throttled(bob, dbsession, registry):
    statuses = [bob.post_json(CHANGE, {"currentPassword": f"guess number {n}",
                                       "newPassword": NEW_PASSWORD}, expect_errors=True).status_int
                for n in range(12)]
    assert 429 in statuses
    assert statuses[-1] == 429
    response = bob.post_json(CHANGE, {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD},
                             status=429)
    assert set(response.json) == {"error"}
    # sign-in shares the bucket, so look at the stored hash instead
    user = dbsession.execute(select(User).where(User.email == "bob@acme.test")).scalar_one()
    assert passwords(registry).verify(user.password_hash, PASSWORD)
