"""Emailed links: magic sign-in links, password-reset links and invitations.

Mail goes out after the request commits, from the job runner's thread, so
tests wait for it on the real SMTP server's inbox.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging

import pytest
from sqlalchemy import select

from ehs_core.auth import ratelimit, tokens
from ehs_core.auth.models import AuthToken
from ehs_core.testing import PASSWORD, PUBLIC_URL
from tests.core.auth.support import (
    create_user,
    deactivate,
    link_in,
    session_cookie,
    token_in,
    travel,
)

MAGIC = "/api/auth/magic-link"
VERIFY = "/api/auth/magic-link/verify"
RESET = "/api/auth/password-reset"
CONFIRM = "/api/auth/password-reset/confirm"
NEW_PASSWORD = "a brand new passphrase"
BAD_LINK = {"error": "This link is invalid, has expired or was already used"}


@pytest.fixture
def bob(admin, inbox):
    return create_user(admin, "bob@acme.test", name="Bob")


def magic_token(browser, inbox, email="bob@acme.test") -> str:
    before = len(inbox.messages)
    browser.post_json(MAGIC, {"email": email}, status=204)
    return token_in(inbox.wait(before + 1)[-1])


def reset_token(browser, inbox, email="bob@acme.test") -> str:
    before = len(inbox.messages)
    browser.post_json(RESET, {"email": email}, status=204)
    return token_in(inbox.wait(before + 1)[-1])


# --- magic links -----------------------------------------------------------


def test_magic_link_is_mailed_to_a_known_user_and_signs_them_in(bob, new_client, inbox):
    browser = new_client()
    response = browser.post_json(MAGIC, {"email": "bob@acme.test"}, status=204)
    assert response.body == b""
    [message] = inbox.wait(1)
    assert message["To"] == "bob@acme.test"
    assert message["Subject"] == "Your sign-in link"
    url, token = link_in(message)
    assert url == f"{PUBLIC_URL}/auth/magic"
    assert len(token) >= 43  # 256 bits, URL-safe base64

    # requesting the link signed nobody in
    browser.get("/api/auth/me", status=401)

    signed_in = new_client()
    result = signed_in.post_json(VERIFY, {"token": token}, status=200)
    assert result.json["user"]["email"] == "bob@acme.test"
    assert session_cookie(signed_in)
    assert signed_in.get("/api/auth/me").json["user"]["name"] == "Bob"


def test_magic_link_request_matches_the_email_loosely(bob, client, inbox):
    client.post_json(MAGIC, {"email": "  BOB@acme.TEST "}, status=204)
    [message] = inbox.wait(1)
    assert message["To"] == "bob@acme.test"


def test_magic_link_request_for_an_unknown_email_is_204_and_sends_nothing(bob, client, inbox):
    response = client.post_json(MAGIC, {"email": "nobody@acme.test"}, status=204)
    assert response.body == b""
    assert inbox.settle() == []


def test_magic_link_request_for_an_inactive_user_is_204_and_sends_nothing(bob, admin, client, inbox):
    deactivate(admin, bob["id"])
    client.post_json(MAGIC, {"email": "bob@acme.test"}, status=204)
    assert inbox.settle() == []


def test_magic_link_request_with_an_invalid_email_is_a_400(client, inbox):
    response = client.post_json(MAGIC, {"email": "bob"}, status=400)
    assert response.json["issues"][0]["path"] == "email"
    assert inbox.settle() == []


def test_emailed_link_uses_the_public_url_not_the_host_header(bob, client, inbox):
    client.post_json(MAGIC, {"email": "bob@acme.test"}, headers={"Host": "evil.test"}, status=204)
    client.post_json(RESET, {"email": "bob@acme.test"}, headers={"Host": "evil.test"}, status=204)
    messages = inbox.wait(2)
    for message in messages:
        url, _ = link_in(message)
        assert url.startswith(f"{PUBLIC_URL}/auth/")
        assert "evil.test" not in message.as_string()


def test_magic_link_works_only_once(bob, new_client, inbox):
    token = magic_token(new_client(), inbox)
    first = new_client()
    first.post_json(VERIFY, {"token": token}, status=200)
    second = new_client()
    response = second.post_json(VERIFY, {"token": token}, status=400)
    assert response.json == BAD_LINK
    assert session_cookie(second) is None
    second.get("/api/auth/me", status=401)
    # the first sign-in is unaffected
    first.get("/api/auth/me", status=200)


def test_a_second_magic_link_does_not_invalidate_the_first(bob, new_client, inbox):
    browser = new_client()
    first = magic_token(browser, inbox)
    second = magic_token(browser, inbox)
    assert first != second
    new_client().post_json(VERIFY, {"token": first}, status=200)
    new_client().post_json(VERIFY, {"token": second}, status=200)


def test_unknown_or_garbage_token_is_refused(client):
    assert client.post_json(VERIFY, {"token": "x" * 43}, status=400).json == BAD_LINK
    response = client.post_json(VERIFY, {"token": ""}, status=400)
    assert response.json["issues"][0]["path"] == "token"
    client.post_json(VERIFY, {}, status=400)
    client.post_json(VERIFY, {"token": "x" * 201}, status=400)


def test_get_of_the_magic_link_page_never_uses_the_token(bob, new_client, inbox):
    token = magic_token(new_client(), inbox)
    scanner = new_client(origin="http://scanner.test")
    for _ in range(3):
        page = scanner.get(f"/auth/magic?token={token}", status=200)
        assert page.content_type == "text/html"
    # the API endpoint does not answer GET either
    scanner.get(f"{VERIFY}?token={token}", status=405)
    scanner.get("/api/auth/me", status=401)
    new_client().post_json(VERIFY, {"token": token}, status=200)


def test_magic_link_expires_after_15_minutes(bob, new_client, inbox, monkeypatch):
    token = magic_token(new_client(), inbox)
    travel(monkeypatch, tokens, dt.timedelta(minutes=15, seconds=1))
    browser = new_client()
    assert browser.post_json(VERIFY, {"token": token}, status=400).json == BAD_LINK
    browser.get("/api/auth/me", status=401)


def test_magic_link_still_works_just_before_15_minutes(bob, new_client, inbox, monkeypatch):
    token = magic_token(new_client(), inbox)
    travel(monkeypatch, tokens, dt.timedelta(minutes=14, seconds=50))
    new_client().post_json(VERIFY, {"token": token}, status=200)


def test_magic_link_of_a_user_deactivated_since_is_refused(bob, admin, new_client, inbox):
    token = magic_token(new_client(), inbox)
    deactivate(admin, bob["id"])
    browser = new_client()
    assert browser.post_json(VERIFY, {"token": token}, status=400).json == BAD_LINK
    browser.get("/api/auth/me", status=401)


def test_magic_link_cannot_set_a_password_and_reset_link_cannot_sign_in_directly(
        bob, new_client, inbox):
    browser = new_client()
    magic = magic_token(browser, inbox)
    reset = reset_token(browser, inbox)
    new_client().post_json(CONFIRM, {"token": magic, "newPassword": NEW_PASSWORD}, status=400)
    new_client().post_json(VERIFY, {"token": reset}, status=400)
    # neither refusal used the token up for its real purpose
    new_client().post_json(VERIFY, {"token": magic}, status=200)
    new_client().post_json(CONFIRM, {"token": reset, "newPassword": NEW_PASSWORD}, status=200)


def test_only_a_hash_of_an_emailed_token_is_stored(bob, new_client, inbox, dbsession):
    token = magic_token(new_client(), inbox)
    rows = dbsession.execute(select(AuthToken)).scalars().all()
    assert len(rows) == 1
    [row] = rows
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    for column in AuthToken.__table__.columns:
        assert token not in str(getattr(row, column.key))


def test_emailed_token_never_reaches_the_logs(bob, new_client, inbox, caplog):
    caplog.set_level(logging.DEBUG)
    token = magic_token(new_client(), inbox)
    new_client().post_json(VERIFY, {"token": token}, status=200)
    new_client().post_json(VERIFY, {"token": token}, status=400)
    inbox.settle(0.2)
    # everything but the test SMTP server's own protocol log ("mail.log")
    ours = [record for record in caplog.records if not record.name.startswith("mail.log")]
    assert any(record.name.startswith("ehs_core") for record in ours)
    for record in ours:
        assert token not in record.getMessage(), record.name


def test_sixth_mail_request_in_15_minutes_is_204_but_sends_nothing(bob, client, inbox, monkeypatch):
    for _ in range(6):
        client.post_json(MAGIC, {"email": "bob@acme.test"}, status=204)
    inbox.wait(5)
    assert len(inbox.settle(0.5)) == 5
    # once the window has passed, mail flows again
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=15, seconds=1))
    client.post_json(MAGIC, {"email": "bob@acme.test"}, status=204)
    assert len(inbox.wait(6)) == 6


def test_magic_link_and_reset_requests_share_the_mail_limit(bob, client, inbox):
    for _ in range(3):
        client.post_json(MAGIC, {"email": "bob@acme.test"}, status=204)
    for _ in range(3):
        client.post_json(RESET, {"email": "Bob@Acme.test"}, status=204)
    inbox.wait(5)
    messages = inbox.settle(0.5)
    assert len(messages) == 5
    assert [m["Subject"] for m in messages].count("Reset your password") == 2


def test_mail_limit_counts_unknown_addresses_without_sending(client, inbox):
    for _ in range(7):
        client.post_json(MAGIC, {"email": "nobody@acme.test"}, status=204)
    assert inbox.settle() == []


# --- password reset ------------------------------------------------------------


def test_password_reset_sets_the_password_ends_other_sessions_and_signs_in(bob, new_client, inbox):
    elsewhere = new_client()
    elsewhere.login("bob@acme.test")
    token = reset_token(new_client(), inbox)
    [message] = inbox.messages
    assert message["Subject"] == "Reset your password"
    assert link_in(message)[0] == f"{PUBLIC_URL}/auth/reset"

    browser = new_client()
    response = browser.post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)
    assert response.json["user"]["email"] == "bob@acme.test"
    assert browser.get("/api/auth/me").json["user"]["name"] == "Bob"
    elsewhere.get("/api/auth/me", status=401)

    new_client().post_json("/api/auth/login", {"email": "bob@acme.test", "password": PASSWORD},
                           status=401)
    new_client().post_json("/api/auth/login", {"email": "bob@acme.test", "password": NEW_PASSWORD},
                           status=200)


def test_reset_link_works_only_once(bob, new_client, inbox):
    token = reset_token(new_client(), inbox)
    new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)
    response = new_client().post_json(CONFIRM, {"token": token, "newPassword": "another passphrase"},
                                      status=400)
    assert response.json == BAD_LINK
    new_client().post_json("/api/auth/login",
                           {"email": "bob@acme.test", "password": "another passphrase"}, status=401)


@pytest.mark.parametrize("password", ["123456789", "short", "abcdefghi"])
def test_reset_refuses_passwords_under_10_characters(bob, new_client, inbox, password):
    token = reset_token(new_client(), inbox)
    response = new_client().post_json(CONFIRM, {"token": token, "newPassword": password}, status=400)
    assert response.json["issues"] == [
        {"path": "newPassword", "message": "Must be at least 10 characters"}]
    # the refused attempt did not use the link up nor change the password
    new_client().post_json("/api/auth/login", {"email": "bob@acme.test", "password": PASSWORD},
                           status=200)
    new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)


@pytest.mark.parametrize("password", ["password123", "PASSWORD123", "1234567890", "aaaaaaaaaaaa"])
def test_reset_refuses_well_known_passwords(bob, new_client, inbox, password):
    token = reset_token(new_client(), inbox)
    response = new_client().post_json(CONFIRM, {"token": token, "newPassword": password}, status=400)
    [issue] = response.json["issues"]
    assert issue["path"] == "newPassword"
    assert "common" in issue["message"]


@pytest.mark.parametrize("password", ["zebra lamp", "pass phrase with spaces " * 4, "x1" + "é" * 70])
def test_reset_accepts_10_characters_and_long_passphrases_without_composition_rules(
        bob, new_client, inbox, password):
    token = reset_token(new_client(), inbox)
    new_client().post_json(CONFIRM, {"token": token, "newPassword": password}, status=200)
    new_client().post_json("/api/auth/login", {"email": "bob@acme.test", "password": password},
                           status=200)


def test_reset_link_expires_after_1_hour(bob, new_client, inbox, monkeypatch):
    token = reset_token(new_client(), inbox)
    travel(monkeypatch, tokens, dt.timedelta(hours=1, seconds=1))
    response = new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD},
                                      status=400)
    assert response.json == BAD_LINK
    new_client().post_json("/api/auth/login", {"email": "bob@acme.test", "password": PASSWORD},
                           status=200)


def test_reset_link_still_works_just_before_1_hour(bob, new_client, inbox, monkeypatch):
    token = reset_token(new_client(), inbox)
    travel(monkeypatch, tokens, dt.timedelta(minutes=59, seconds=50))
    new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)


def test_password_reset_request_for_unknown_or_inactive_user_sends_nothing(bob, admin, client, inbox):
    client.post_json(RESET, {"email": "nobody@acme.test"}, status=204)
    deactivate(admin, bob["id"])
    client.post_json(RESET, {"email": "bob@acme.test"}, status=204)
    assert inbox.settle() == []


# --- invitations -----------------------------------------------------------------


def invite(admin, inbox, email="newbie@acme.test") -> str:
    response = admin.post_json("/api/users", {"name": "Nina New", "email": email, "role": "reporter"},
                               status=201)
    assert response.json["invited"] is True
    [message] = inbox.wait(1)
    assert message["To"] == email
    assert message["Subject"] == "You are invited to Acme Works"
    url, token = link_in(message)
    assert url == f"{PUBLIC_URL}/auth/reset"
    return token


def test_invitation_mail_lets_the_new_user_choose_a_password_and_sign_in(admin, new_client, inbox):
    token = invite(admin, inbox)
    browser = new_client()
    response = browser.post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)
    assert response.json["user"]["email"] == "newbie@acme.test"
    assert browser.get("/api/auth/me").json["user"]["name"] == "Nina New"
    new_client().post_json("/api/auth/login",
                           {"email": "newbie@acme.test", "password": NEW_PASSWORD}, status=200)
    # the invitation is single use
    new_client().post_json(CONFIRM, {"token": token, "newPassword": "another passphrase"},
                           status=400)


def test_user_created_with_a_password_gets_no_invitation(admin, inbox):
    response = admin.post_json("/api/users", {"name": "Pat", "email": "pat@acme.test",
                                              "role": "reporter", "password": PASSWORD}, status=201)
    assert response.json["invited"] is False
    assert inbox.settle() == []


def test_invitation_expires_after_7_days(admin, new_client, inbox, monkeypatch):
    token = invite(admin, inbox)
    travel(monkeypatch, tokens, dt.timedelta(days=7, seconds=1))
    response = new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD},
                                      status=400)
    assert response.json == BAD_LINK


def test_invitation_still_works_after_6_days(admin, new_client, inbox, monkeypatch):
    token = invite(admin, inbox)
    travel(monkeypatch, tokens, dt.timedelta(days=6, hours=23))
    new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)


def test_invitation_cannot_be_used_as_a_magic_link(admin, new_client, inbox):
    token = invite(admin, inbox)
    new_client().post_json(VERIFY, {"token": token}, status=400)
    new_client().post_json(CONFIRM, {"token": token, "newPassword": NEW_PASSWORD}, status=200)
