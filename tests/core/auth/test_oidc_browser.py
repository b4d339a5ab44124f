"""Signing in with the company's identity provider, in Debian's Chromium,
through a real OpenID Provider (panva's certified `oidc-provider` under
Node, on loopback): the first sign-in links a known person by their
verified e-mail, or creates one of an allowed domain; the next is matched by
the provider's subject even after the e-mail changed here; a deactivated
user, an unverified e-mail, an answer fed to another browser (its `state`
not this browser's) and an ID token made for another sign-in (its `nonce`)
are all refused."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import select, update

from ehs_core.auth.models import OIDCRequest, UserIdentity
from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD, backends, postgres_database
from ehs_core.users.models import User
from tests.core.auth.oidc_support import running_provider

# The provider and the service share two cores with everything else: the
# round trip through both may take a while.
SLOW = 15_000
ACCOUNTS = {
    "00u-alice-7f3a": {"email": "Alice@Acme.test", "email_verified": True, "name": "Alice at Acme ID"},
    "00u-bruno-91c2": {"email": "bruno@acme.test", "email_verified": True, "name": "Bruno Newcomer"},
    "00u-carol-5d10": {"email": "carol@acme.test", "email_verified": False, "name": "Carol Unverified"},
    "00u-dave-0b77": {"email": "dave@elsewhere.test", "email_verified": True, "name": "Dave Elsewhere"},
}


@pytest.fixture(params=backends())
def live_database(request, tmp_path):
    """On PostgreSQL too: there a GET reads in autocommit, and the sign-in's
    GETs (the redirect from the provider can only be one) must write."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/live.sqlite"
        return
    with postgres_database("live") as url:
        yield url


@pytest.fixture
def provider(live_port: int):
    with running_provider(f"http://127.0.0.1:{live_port}/sign-in/oidc/callback", ACCOUNTS) as running:
        yield running


@pytest.fixture
def live_settings(provider) -> dict[str, Any]:
    return provider.settings(**{"oidc.auto_create_domains": "acme.test", "oidc.local_sign_in": "false"})


def start(page, live) -> None:
    page.goto(f"{live.url}/sign-in")
    page.get_by_role("link", name="Sign in with Acme ID").click()
    expect(page.get_by_placeholder("Enter any login")).to_be_visible(timeout=SLOW)


def at_provider(page, subject: str) -> None:
    """The provider's own sign-in and consent pages."""
    page.get_by_placeholder("Enter any login").fill(subject)
    page.get_by_placeholder("and password").fill("anything")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()


def sign_in(new_page, live, subject: str) -> Any:
    page = new_page()
    start(page, live)
    at_provider(page, subject)
    return page


def links(live) -> list[tuple[str, int]]:
    with live.registry["dbsession_factory"]() as session:
        return [(row.subject, row.user_id) for row in session.execute(select(UserIdentity)).scalars()]


def test_company_sign_in_links_matches_creates_and_refuses(live, provider, new_page):
    admin = live.admin()
    alice = admin.post_json("/api/users", {"name": "Alice Auditor", "email": "alice@acme.test",
                                           "role": "supervisor", "password": PASSWORD}).json["user"]

    page = new_page()
    page.goto(f"{live.url}/sign-in")
    expect(page.get_by_role("link", name="Sign in with Acme ID")).to_be_visible(timeout=SLOW)
    expect(page.get_by_text("Passwords and emailed links are for admins only.")).to_be_visible(timeout=SLOW)
    assert_accessible(page)
    # The button sends the browser to the provider with PKCE, state and nonce.
    with page.expect_request(re.compile(re.escape(provider.issuer) + "/auth")) as sent:
        page.get_by_role("link", name="Sign in with Acme ID").click()
    asked = sent.value.url
    for part in ("code_challenge_method=S256", "code_challenge=", "state=", "nonce=",
                 "scope=openid+email+profile", "response_type=code"):
        assert part in asked
    at_provider(page, "00u-alice-7f3a")
    # First sign-in: the existing user, by the provider's verified e-mail.
    expect(page.get_by_role("heading", name="Hello, Alice Auditor")).to_be_visible(timeout=SLOW)
    assert links(live) == [("00u-alice-7f3a", alice["id"])]
    me = page.request.get(f"{live.url}/api/auth/me").json()
    assert me["user"]["id"] == alice["id"] and me["user"]["role"] == "supervisor"
    cookie = next(c for c in page.context.cookies() if c["name"] == "service_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"

    # The link, not the e-mail, matches the next time: the address changed here.
    with live.registry["dbsession_factory"]() as session:
        session.execute(update(User).where(User.id == alice["id"]).values(email="alice.auditor@acme.test"))
        session.commit()
    again = sign_in(new_page, live, "00u-alice-7f3a")
    expect(again.get_by_role("heading", name="Hello, Alice Auditor")).to_be_visible(timeout=SLOW)
    assert links(live) == [("00u-alice-7f3a", alice["id"])]

    # An unknown person of an allowed domain is created, as a reporter.
    bruno = sign_in(new_page, live, "00u-bruno-91c2")
    expect(bruno.get_by_role("heading", name="Hello, Bruno Newcomer")).to_be_visible(timeout=SLOW)
    created = bruno.request.get(f"{live.url}/api/auth/me").json()["user"]
    assert (created["email"], created["role"]) == ("bruno@acme.test", "reporter")

    # Unverified e-mail, or a domain not allowed: nobody is signed in.
    for subject, says in (("00u-carol-5d10", "did not confirm your e-mail address"),
                          ("00u-dave-0b77", "No account here matches your company sign-in")):
        refused = sign_in(new_page, live, subject)
        expect(refused.get_by_role("alert")).to_contain_text(says, timeout=SLOW)
        assert refused.request.get(f"{live.url}/api/auth/me").status == 401
    assert len(admin.get("/api/users").json) == 3

    # A deactivated user is refused, and their open sessions ended.
    admin.patch_json(f"/api/users/{alice['id']}", {"active": False})
    assert again.request.get(f"{live.url}/api/auth/me").status == 401
    refused = sign_in(new_page, live, "00u-alice-7f3a")
    expect(refused.get_by_role("alert")).to_contain_text("This account is deactivated", timeout=SLOW)
    assert refused.request.get(f"{live.url}/api/auth/me").status == 401
    assert_accessible(refused)

    # Passwords are for admins only here: Bruno's own password is refused.
    admin.patch_json(f"/api/users/{created['id']}", {"password": PASSWORD})
    plain = live.client()
    answer = plain.post_json("/api/auth/login", {"email": "bruno@acme.test", "password": PASSWORD},
                             status=403)
    assert answer.json["error"] == "Sign in with your company account"
    live.admin()  # the admin's password still works


def test_an_answer_meant_for_another_browser_is_refused(live, provider, new_page):
    """Login CSRF (RFC 9700 §4.7): an attacker's own answer, fed to a
    victim's browser that has a sign-in of its own under way."""
    admin = live.admin()
    admin.post_json("/api/users", {"name": "Alice Auditor", "email": "alice@acme.test",
                                   "role": "reporter", "password": PASSWORD})
    attacker = new_page()
    start(attacker, live)
    # The attacker keeps their answer unused: without the state cookie their
    # own browser's callback is refused before the code is spent.
    attacker.context.clear_cookies(name="ehs_oidc_state")
    captured: list[str] = []
    attacker.on("request", lambda r: "/sign-in/oidc/callback" in r.url and captured.append(r.url))
    at_provider(attacker, "00u-alice-7f3a")
    expect(attacker.get_by_role("alert")).to_contain_text("This sign-in was not started here", timeout=SLOW)
    assert captured and "code=" in captured[0] and "state=" in captured[0]

    victim = new_page()
    start(victim, live)  # the victim's browser holds a state cookie of its own
    victim.goto(captured[0])
    expect(victim.get_by_role("alert")).to_contain_text("This sign-in was not started here", timeout=SLOW)
    assert victim.request.get(f"{live.url}/api/auth/me").status == 401
    # A made-up state with no sign-in under way fares no better.
    victim.goto(f"{live.url}/sign-in/oidc/callback?code=abc&state=forged")
    expect(victim.get_by_role("alert")).to_contain_text("This sign-in was not started here", timeout=SLOW)
    assert links(live) == []


def test_an_id_token_for_another_sign_in_is_refused(live, provider, new_page):
    """The provider answers with a genuine ID token whose nonce is the one
    sent, but this sign-in now expects another (as if the token had been
    made for another sign-in and replayed into this one): refused."""
    admin = live.admin()
    admin.post_json("/api/users", {"name": "Alice Auditor", "email": "alice@acme.test",
                                   "role": "reporter", "password": PASSWORD})
    page = new_page()
    start(page, live)
    with live.registry["dbsession_factory"]() as session:
        session.execute(update(OIDCRequest).values(nonce="the-nonce-of-another-sign-in"))
        session.commit()
    at_provider(page, "00u-alice-7f3a")
    expect(page.get_by_role("alert")).to_contain_text("answer could not be verified", timeout=SLOW)
    assert page.request.get(f"{live.url}/api/auth/me").status == 401
    assert links(live) == []
    with live.registry["dbsession_factory"]() as session:
        assert session.execute(select(User.id).where(User.email == "alice@acme.test")).scalar()
