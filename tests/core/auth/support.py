"""Helpers shared by the authentication, error and mail tests."""

from __future__ import annotations

import datetime as dt
import re
from email.message import Message
from typing import Any

import webtest

from ehs_core.auth.sessions import COOKIE_NAME
from ehs_core.db import utcnow as real_utcnow
from ehs_core.testing import PASSWORD, mail_text

LINK_RE = re.compile(r"(?P<url>\S+/auth/(?:magic|reset))\?token=(?P<token>[A-Za-z0-9_\-]+)")


def create_user(admin: webtest.TestApp, email: str, *, role: str = "reporter",
                name: str = "Bob Builder", password: str | None = PASSWORD) -> dict:
    """Create a user through the admin API without signing them in (a sign-in
    would count towards the login limit)."""
    body: dict[str, Any] = {"name": name, "email": email, "role": role}
    if password is not None:
        body["password"] = password
    return admin.post_json("/api/users", body).json["user"]


def deactivate(admin: webtest.TestApp, user_id: int) -> None:
    admin.patch_json(f"/api/users/{user_id}", {"active": False})


def body_of(message: Message) -> str:
    return mail_text(message)


def link_in(message: Message) -> tuple[str, str]:
    """(page URL, token) of the emailed link."""
    match = LINK_RE.search(body_of(message))
    assert match, body_of(message)
    return match["url"], match["token"]


def token_in(message: Message) -> str:
    return link_in(message)[1]


def session_cookie(client: webtest.TestApp) -> str | None:
    return client.cookies.get(COOKIE_NAME)


def with_cookie(value: str) -> dict[str, str]:
    """Headers that replay a session cookie from a browser with an empty jar."""
    return {"Cookie": f"{COOKIE_NAME}={value}"}


def set_cookie_headers(response: webtest.TestResponse) -> list[str]:
    return [h for h in response.headers.getall("Set-Cookie") if h.startswith(f"{COOKIE_NAME}=")]


def travel(monkeypatch: Any, module: Any, delta: dt.timedelta) -> None:
    """Make `module.utcnow()` run `delta` ahead of the real clock."""
    monkeypatch.setattr(module, "utcnow", lambda: real_utcnow() + delta)


def bare_client(app: Any) -> webtest.TestApp:
    """A client that sends no Origin header (curl, a server, an old browser)."""
    return webtest.TestApp(app, extra_environ={"REMOTE_ADDR": "127.0.0.1"})

