"""The sign-in limiter's per-address bound, and the purge of old attempts.

Every request here names its client address (REMOTE_ADDR, which the server
runner fills from a trusted proxy's X-Forwarded-For; tests/core/test_servers.py).
"""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from ehs_core.auth import ratelimit
from ehs_core.auth.models import RateLimitHit
from ehs_core.db import utcnow
from ehs_core.testing import PASSWORD
from tests.core.auth.support import create_user, travel

LOGIN = "/api/auth/login"
ATTACKER = "203.0.113.66"
OFFICE = "198.51.100.7"
BOUND = ratelimit.LOGIN_CLIENT.count


def from_address(new_client, address: str):
    browser = new_client()
    browser.extra_environ["REMOTE_ADDR"] = address
    return browser


def spray(browser, count: int, password: str = "Summer2026!!") -> None:
    """One password tried on many accounts: each email stays far below its
    own limit of 10."""
    for n in range(count):
        browser.post_json(LOGIN, {"email": f"worker{n}@acme.test", "password": password}, status=401)


def test_one_address_trying_many_accounts_is_throttled(admin, new_client):
    create_user(admin, "bob@acme.test")
    attacker = from_address(new_client, ATTACKER)
    spray(attacker, BOUND)
    refused = attacker.post_json(LOGIN, {"email": "someone.else@acme.test", "password": "x" * 12},
                                 status=429)
    assert refused.json["error"] == "Too many sign-in attempts; try again later"
    assert 0 < int(refused.headers["Retry-After"]) <= 15 * 60
    # Even the right password tells the throttled address nothing.
    attacker.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)


def test_the_account_owner_elsewhere_still_signs_in_while_the_attacker_is_throttled(admin, new_client):
    create_user(admin, "bob@acme.test")
    attacker = from_address(new_client, ATTACKER)
    spray(attacker, BOUND - 5)
    for _ in range(5):
        attacker.post_json(LOGIN, {"email": "bob@acme.test", "password": "guess guess 1"}, status=401)
    # Throttled now: these many tries at bob's account are not counted for it.
    for _ in range(30):
        attacker.post_json(LOGIN, {"email": "bob@acme.test", "password": "guess guess 2"}, status=429)
    owner = from_address(new_client, OFFICE)
    owner.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=200)


def test_successful_sign_ins_do_not_count_against_the_address(admin, new_client):
    """A whole site behind one address signing in at the start of a shift."""
    emails = [f"shift{n}@acme.test" for n in range(BOUND // 8 + 1)]
    for email in emails:
        create_user(admin, email)
    for email in emails:
        for _ in range(9):
            from_address(new_client, OFFICE).post_json(LOGIN, {"email": email, "password": PASSWORD},
                                                       status=200)
    assert len(emails) * 9 > BOUND


def test_one_ipv6_subscriber_block_counts_as_one_address(admin, new_client):
    for n in range(BOUND):
        from_address(new_client, f"2001:db8:1:2::{n + 1:x}").post_json(
            LOGIN, {"email": f"worker{n}@acme.test", "password": "Summer2026!!"}, status=401)
    from_address(new_client, "2001:db8:1:2:ffff::1").post_json(
        LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)
    from_address(new_client, "2001:db8:1:3::1").post_json(
        LOGIN, {"email": "nobody@acme.test", "password": PASSWORD}, status=401)


def test_a_forwarded_for_header_does_not_change_the_address(admin, new_client):
    """Only the server runner may read X-Forwarded-For, and only from a
    trusted proxy; the app never believes the header."""
    attacker = from_address(new_client, ATTACKER)
    spray(attacker, BOUND)
    attacker.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD},
                       headers={"X-Forwarded-For": "192.0.2.1"}, status=429)


def test_the_address_bound_lifts_once_the_failures_leave_the_15_minute_window(admin, new_client,
                                                                              monkeypatch):
    create_user(admin, "bob@acme.test")
    attacker = from_address(new_client, ATTACKER)
    spray(attacker, BOUND)
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=14))
    attacker.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=429)
    travel(monkeypatch, ratelimit, dt.timedelta(minutes=15, seconds=1))
    attacker.post_json(LOGIN, {"email": "bob@acme.test", "password": PASSWORD}, status=200)


def test_the_periodic_purge_deletes_attempts_no_window_looks_at(registry, dbsession):
    now = utcnow()
    dbsession.add_all([
        RateLimitHit(key="login:gone@acme.test", at=now - dt.timedelta(hours=2)),
        RateLimitHit(key="login-client:203.0.113.66", at=now - ratelimit.KEEP - dt.timedelta(seconds=1)),
        RateLimitHit(key="login:recent@acme.test", at=now - dt.timedelta(minutes=5)),
    ])
    dbsession.commit()
    job = registry["jobs"][ratelimit.PURGE_JOB]
    assert job.func(registry) == 2
    keys = dbsession.execute(select(RateLimitHit.key)).scalars().all()
    assert keys == ["login:recent@acme.test"]


def test_the_purge_runs_every_ten_minutes(registry):
    def due(minute: int) -> set[str]:
        moment = dt.datetime(2026, 3, 1, 7, minute)
        return {name for name, schedule in registry["periodic"].items() if schedule(moment)}

    assert ratelimit.PURGE_JOB in due(10)
    assert ratelimit.PURGE_JOB not in due(11)


def test_no_limit_may_look_back_further_than_the_purge_keeps():
    with pytest.raises(ValueError, match="keeps attempts"):
        ratelimit.Limit("too-long", 5, ratelimit.KEEP + dt.timedelta(minutes=1))
