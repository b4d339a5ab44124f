"""The session cookie: renewal on sign-in, logout, timeouts, attributes, and
the events that end sessions server-side."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from sqlalchemy import select

from ehs_core.auth import sessions
from ehs_core.auth.models import UserSession
from ehs_core.testing import PASSWORD, Client
from tests.core.auth.support import (
    create_user,
    deactivate,
    session_cookie,
    set_cookie_headers,
    travel,
    with_cookie,
)

ME = "/api/auth/me"


@pytest.fixture
def bob(admin):
    return create_user(admin, "bob@acme.test", name="Bob")


def replay(new_client, cookie: str, status: int):
    """Use a captured cookie value from another browser."""
    return new_client().get(ME, headers=with_cookie(cookie), status=status)


# --- renewal and ending ------------------------------------------------------


def test_signed_out_caller_gets_401_json(client):
    response = client.get(ME, status=401)
    assert response.json == {"error": "Authentication required"}


def test_every_sign_in_issues_a_new_session_and_the_old_cookie_stops_working(bob, new_client):
    browser = new_client()
    browser.login("bob@acme.test")
    first = session_cookie(browser)
    browser.login("bob@acme.test")
    second = session_cookie(browser)
    assert first and second and first != second
    replay(new_client, first, 401)
    replay(new_client, second, 200)
    browser.get(ME, status=200)


def test_a_cookie_planted_before_sign_in_is_not_kept(bob, new_client):
    """Session fixation: a value set by an attacker is replaced at sign-in."""
    browser = new_client()
    browser.set_cookie(sessions.COOKIE_NAME, "planted-by-attacker")
    browser.login("bob@acme.test")
    assert session_cookie(browser) != "planted-by-attacker"
    replay(new_client, "planted-by-attacker", 401)


def test_signing_in_on_a_second_browser_keeps_the_first(bob, new_client):
    one, two = new_client(), new_client()
    one.login("bob@acme.test")
    two.login("bob@acme.test")
    one.get(ME, status=200)
    two.get(ME, status=200)


def test_logout_ends_the_session_server_side(bob, new_client):
    browser = new_client()
    browser.login("bob@acme.test")
    cookie = session_cookie(browser)
    response = browser.post("/api/auth/logout", status=204)
    [header] = set_cookie_headers(response)
    assert "Max-Age=0" in header or "expires=" in header.lower()
    browser.get(ME, status=401)
    replay(new_client, cookie, 401)


def test_logout_ends_only_the_current_session(bob, new_client):
    one, two = new_client(), new_client()
    one.login("bob@acme.test")
    two.login("bob@acme.test")
    one.post("/api/auth/logout", status=204)
    two.get(ME, status=200)


def test_logout_when_signed_out_is_204(client):
    client.post("/api/auth/logout", status=204)


def test_deactivating_a_user_ends_their_sessions(bob, admin, new_client):
    browser = new_client()
    browser.login("bob@acme.test")
    cookie = session_cookie(browser)
    deactivate(admin, bob["id"])
    browser.get(ME, status=401)
    admin.patch_json(f"/api/users/{bob['id']}", {"active": True})
    # reactivation does not revive the old session
    replay(new_client, cookie, 401)


def test_admin_setting_a_password_ends_that_users_sessions(bob, admin, new_client):
    browser = new_client()
    browser.login("bob@acme.test")
    admin.patch_json(f"/api/users/{bob['id']}", {"password": "set by the admin"})
    browser.get(ME, status=401)
    admin.get(ME, status=200)


def test_session_token_is_long_random_and_only_its_hash_is_stored(bob, new_client, dbsession):
    cookies = set()
    for _ in range(5):
        browser = new_client()
        browser.login("bob@acme.test")
        cookies.add(session_cookie(browser))
    assert len(cookies) == 5
    assert all(len(value) >= 43 for value in cookies)  # 256 bits, URL-safe base64
    stored = set(dbsession.execute(select(UserSession.token_hash)).scalars())
    for value in cookies:
        assert value not in stored
        assert hashlib.sha256(value.encode()).hexdigest() in stored


def test_overlong_or_garbage_cookie_is_simply_signed_out(new_client):
    replay(new_client, "x" * 5000, 401)
    replay(new_client, "not-a-session", 401)


# --- timeouts --------------------------------------------------------------------


def test_session_ends_after_12_hours_idle(bob, new_client, monkeypatch):
    browser = new_client()
    browser.login("bob@acme.test")
    travel(monkeypatch, sessions, dt.timedelta(hours=11, minutes=58))
    browser.get(ME, status=200)
    monkeypatch.undo()
    browser2 = new_client()
    browser2.login("bob@acme.test")
    travel(monkeypatch, sessions, dt.timedelta(hours=12, minutes=1))
    browser2.get(ME, status=401)


def test_activity_keeps_the_session_alive_past_12_hours(bob, new_client, monkeypatch):
    browser = new_client()
    browser.login("bob@acme.test")
    travel(monkeypatch, sessions, dt.timedelta(hours=11))
    browser.get(ME, status=200)
    travel(monkeypatch, sessions, dt.timedelta(hours=22))
    browser.get(ME, status=200)
    travel(monkeypatch, sessions, dt.timedelta(hours=34, minutes=1))
    browser.get(ME, status=401)


def test_session_ends_30_days_after_sign_in_despite_activity(bob, new_client, monkeypatch):
    browser = new_client()
    browser.login("bob@acme.test")
    hours = 0
    while hours < 30 * 24 - 11:
        hours += 11
        travel(monkeypatch, sessions, dt.timedelta(hours=hours))
        browser.get(ME, status=200)
    travel(monkeypatch, sessions, dt.timedelta(days=30, minutes=1))
    browser.get(ME, status=401)


# --- cookie attributes ---------------------------------------------------------


def cookie_attributes(header: str) -> dict[str, str]:
    parts = [part.strip() for part in header.split(";")]
    attributes = {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        attributes[key.lower()] = value
    return attributes


def test_session_cookie_attributes(bob, new_client):
    response = new_client().post_json("/api/auth/login",
                                      {"email": "bob@acme.test", "password": PASSWORD})
    [header] = set_cookie_headers(response)
    attributes = cookie_attributes(header)
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "lax"
    assert attributes["path"] == "/"
    assert "domain" not in attributes
    assert "secure" not in attributes  # the test settings serve plain http


@pytest.fixture
def secure_app(app_settings, registry, dbsession):
    """The same application built with ehs.session_secure = true, sharing the
    test's database transaction."""
    from ehs_core.config import configure

    config = configure(dict(app_settings, **{"ehs.session_secure": "true"}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    yield config.make_wsgi_app()
    config.registry["db.engine"].dispose()


def test_session_cookie_is_secure_when_configured(bob, secure_app):
    browser = Client(secure_app)
    response = browser.post_json("/api/auth/login", {"email": "bob@acme.test", "password": PASSWORD})
    [header] = set_cookie_headers(response)
    attributes = cookie_attributes(header)
    assert "secure" in attributes
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "lax"
    assert "domain" not in attributes

