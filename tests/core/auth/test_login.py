"""Signing in with email and password, and the per-account attempt limit."""

from __future__ import annotations

import datetime as dt
import logging

from ehs_core.auth import ratelimit
from ehs_core.auth.passwords import passwords
from ehs_core.testing import PASSWORD
from tests.core.auth.support import create_user, deactivate, session_cookie, travel

LOGIN = "/api/auth/login"


def test_sign_in_with_the_right_password_returns_the_user_and_sets_a_session(admin, new_client):
    create_user(admin, "bob@acme.test", name="Bob")
    browser = new_client()
    response = browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD})
    assert response.status_int == 200
    assert response.json["user"]["email"] == "bob@acme.test"
    assert response.json["user"]["role"] == "reporter"
    assert response.json["organization"]["name"] == "Acme Works"
    assert session_cookie(browser)
    assert browser.get("/api/auth/me").json["user"]["name"] == "Bob"


def test_email_is_matched_regardless_of_case_and_surrounding_spaces(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    browser.post_json(LOGIN, {"email": "  BOB@Acme.Test ", "password": PASSWORD}, status=200)
    assert browser.get("/api/auth/me").json["user"]["email"] == "bob@acme.test"


def test_wrong_password_and_unknown_email_get_the_same_401(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    wrong = browser.post_json(LOGIN, {"email": "bob@acme.test", "password": "not the password"},
                              status=401)
    unknown = browser.post_json(LOGIN, {"email": "nobody@acme.test", "password": PASSWORD},
                                status=401)
    assert wrong.json == unknown.json == {"error": "Invalid email or password"}
    assert wrong.content_type == unknown.content_type == "application/json"
    assert session_cookie(browser) is None
    browser.get("/api/auth/me", status=401)


class CountingHasher:
    def __init__(self, hasher):
        self.hasher = hasher
        self.verified = 0

    def verify(self, stored, password):
        self.verified += 1
        return self.hasher.verify(stored, password)

    def __getattr__(self, name):
        return getattr(self.hasher, name)


def test_unknown_email_costs_a_full_password_check(admin, client, registry, monkeypatch):
    """No quick exit: an unknown address runs argon2 like a wrong password
    does, so response time does not tell which addresses have accounts."""
    create_user(admin, "bob@acme.test")
    hasher = passwords(registry)
    counting = CountingHasher(hasher.hasher)
    monkeypatch.setattr(hasher, "hasher", counting)
    client.post_json(LOGIN, {"email": "nobody@acme.test", "password": PASSWORD}, status=401)
    assert counting.verified == 1
    client.post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"}, status=401)
    assert counting.verified == 2


def test_password_is_not_stripped_or_case_folded(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": f" {PASSWORD} "}, status=401)
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD.upper()}, status=401)


def test_inactive_user_cannot_sign_in_even_with_the_right_password(admin, new_client):
    user = create_user(admin, "bob@acme.test")
    deactivate(admin, user["id"])
    browser = new_client()
    response = browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=401)
    assert response.json == {"error": "Invalid email or password"}
    assert session_cookie(browser) is None


def test_invited_user_without_a_password_cannot_sign_in_with_any_password(admin, new_client, inbox):
    create_user(admin, "newbie@acme.test", password=None)
    inbox.wait(1)
    browser = new_client()
    for attempt in ("", "dummy password for timing", PASSWORD):
        browser.post_json(LOGIN, {"email": "newbie@acme.test", "password": attempt},
                          status=400 if attempt == "" else 401)
    assert session_cookie(browser) is None


def test_login_body_is_validated(client):
    response = client.post_json(LOGIN, {"email": "not-an-email"}, status=400)
    paths = {issue["path"] for issue in response.json["issues"]}
    assert paths == {"email", "password"}


def test_eleventh_attempt_is_refused_with_429_even_with_the_right_password(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for _ in range(10):
        browser.post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"},
                          status=401)
    response = browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD},
                                 status=429)
    assert set(response.json) == {"error"}
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= 15 * 60
    assert session_cookie(browser) is None
    browser.get("/api/auth/me", status=401)


def test_ten_attempts_are_allowed(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for _ in range(9):
        browser.post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"},
                          status=401)
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=200)


def test_successful_sign_ins_count_towards_the_limit(admin, new_client):
    create_user(admin, "bob@acme.test")
    for _ in range(10):
        new_client().post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=200)
    new_client().post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)


def test_the_limit_is_per_account(admin, new_client):
    create_user(admin, "bob@acme.test")
    create_user(admin, "carol@acme.test")
    browser = new_client()
    for _ in range(11):
        browser.post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"},
                          expect_errors=True)
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)
    browser.post_json(LOGIN, {"email": "carol@acme.test", "password": PASSWORD}, status=200)


def test_the_limit_holds_across_browsers(admin, new_client):
    create_user(admin, "bob@acme.test")
    for _ in range(10):
        new_client().post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"},
                               status=401)
    new_client().post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)


def test_differently_written_emails_share_one_bucket(admin, new_client):
    create_user(admin, "bob@x.com")
    browser = new_client()
    for n in range(10):
        email = " Bob@X.com " if n % 2 else "bob@x.com"
        browser.post_json(LOGIN, {"email": email, "password": "wrong password!"}, status=401)
    browser.post_json(LOGIN, {"email": "BOB@x.COM", "password": PASSWORD}, status=429)
    browser.post_json(LOGIN, {"email": "bob@x.com", "password": PASSWORD}, status=429)


def test_unknown_email_is_throttled_too(client):
    for _ in range(10):
        client.post_json(LOGIN, {"email": "nobody@acme.test", "password": "wrong password!"},
                         status=401)
    response = client.post_json(LOGIN, {"email": "nobody@acme.test", "password": "wrong password!"},
                                status=429)
    assert "Retry-After" in response.headers


def test_the_limit_lifts_once_the_attempts_leave_the_15_minute_window(admin, new_client, monkeypatch):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for _ in range(10):
        browser.post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"},
                          status=401)
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=14))
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=15, seconds=1))
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=200)


def test_waiting_as_long_as_retry_after_says_is_enough(admin, new_client, monkeypatch):
    """A client that keeps trying after the 429 and then honours the last
    Retry-After it was given must be let in at that time."""
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for _ in range(10):
        browser.post_json(LOGIN, {"email": "bob@acme.test", "password": "wrong password!"},
                          status=401)
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=1))
    for _ in range(10):
        response = browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD},
                                     status=429)
    retry_after = int(response.headers["Retry-After"])
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=1, seconds=retry_after + 1))
    browser.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=200)


def test_failed_and_throttled_sign_ins_are_logged_without_the_password(admin, new_client, caplog):
    create_user(admin, "bob@acme.test")
    caplog.set_level(logging.INFO, logger="ehs_core")
    browser = new_client()
    secret = "my-secret-guess-42"
    for _ in range(11):
        browser.post_json(LOGIN, {"email": "bob@acme.test", "password": secret}, expect_errors=True)
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("ehs_core")]
    assert any("failed sign-in" in m for m in messages)
    assert any("throttled" in m for m in messages)
    assert secret not in caplog.text
    assert PASSWORD not in caplog.text
