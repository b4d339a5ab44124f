"""Moving-window rate limits kept in the database, so they hold across worker
processes without Redis. Checking and counting happen under a lock on the
key (an advisory lock on PostgreSQL; SQLite serialises writers already), so
concurrent attempts cannot all slip under the limit.

Sign-in has two bounds (ASVS 5 6.3.1, OWASP Authentication Cheat Sheet,
"Login Throttling"): attempts per account, and failed attempts per client
address, so one address cannot try a password on many accounts. An address
over its bound is refused before its attempt reaches the account's count,
so an attacker's throttled attempts never lock the account's owner out any
further than the per-account rule already can; the owner, coming from
another address, is not affected by the address bound at all.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
from dataclasses import dataclass

from huey import crontab
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ehs_core.auth.models import RateLimitHit
from ehs_core.db import advisory_lock, utcnow

log = logging.getLogger(__name__)

#: Rows older than this are deleted by the periodic purge; no limit may look
#: further back.
KEEP = dt.timedelta(hours=1)


@dataclass(frozen=True)
class Limit:
    name: str
    count: int
    window: dt.timedelta

    def __post_init__(self) -> None:
        if self.window > KEEP:
            raise ValueError(f"limit {self.name}: the purge keeps attempts for {KEEP} only")


LOGIN = Limit("login", 10, dt.timedelta(minutes=15))
#: Failed sign-ins from one client address (an IPv4 address or an IPv6 /64),
#: whatever the account.
LOGIN_CLIENT = Limit("login-client", 50, dt.timedelta(minutes=15))
MAIL = Limit("mail", 5, dt.timedelta(minutes=15))


def _key(limit: Limit, subject: str) -> str:
    return f"{limit.name}:{subject}"


def _wait(dbsession: Session, limit: Limit, key: str) -> dt.timedelta | None:
    """Time until the oldest counted attempt leaves the window when the
    limit is reached, else None; drops the key's expired rows on the way."""
    now = utcnow()
    dbsession.execute(delete(RateLimitHit).where(RateLimitHit.key == key,
                                                 RateLimitHit.at <= now - limit.window))
    recent, oldest = dbsession.execute(
        select(func.count(), func.min(RateLimitHit.at)).where(RateLimitHit.key == key)
    ).one()
    if recent >= limit.count:
        return oldest + limit.window - now
    return None


def hit(dbsession: Session, limit: Limit, subject: str) -> dt.timedelta | None:
    """Count one attempt. Returns None if it is within the limit, else the
    time until the oldest counted attempt leaves the window (and the attempt
    is refused without being counted)."""
    key = _key(limit, subject)
    advisory_lock(dbsession, f"ratelimit:{key}")
    wait = _wait(dbsession, limit, key)
    if wait is not None:
        # Refused attempts are not counted, so Retry-After stays true.
        return wait
    dbsession.add(RateLimitHit(key=key, at=utcnow()))
    dbsession.flush()
    return None


def waiting(dbsession: Session, limit: Limit, subject: str) -> dt.timedelta | None:
    """For a limit that counts only failures (`failed`): the time to wait
    while `subject` has reached it, else None; nothing is counted. Takes the
    key's lock, so a check and the failure it leads to are one decision."""
    key = _key(limit, subject)
    advisory_lock(dbsession, f"ratelimit:{key}")
    return _wait(dbsession, limit, key)


def failed(dbsession: Session, limit: Limit, subject: str) -> None:
    """Count one failure of `subject` against `limit` (see `waiting`). The
    caller must let the transaction commit (answer rather than raise)."""
    dbsession.add(RateLimitHit(key=_key(limit, subject), at=utcnow()))
    dbsession.flush()


def client_address(request: Request) -> str:
    """Who is asking, as far as the server can tell: REMOTE_ADDR only. The
    server runner puts the client's address there when the request came
    through a trusted proxy (`forwarded_allow_ips`, ehs_core/servers.py);
    an X-Forwarded-For header is never read here, so a client cannot pick
    its own address. IPv6 clients are counted per /64, the block one
    subscriber usually holds."""
    raw = request.remote_addr or ""
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


@dataclass
class SignInAttempt:
    """The limits' answer to one sign-in attempt (see `sign_in`)."""

    dbsession: Session
    client: str
    wait: dt.timedelta | None

    def failed(self) -> None:
        """Count a failed attempt against the client address."""
        self.dbsession.add(RateLimitHit(key=_key(LOGIN_CLIENT, self.client), at=utcnow()))
        self.dbsession.flush()


def sign_in(dbsession: Session, email: str, client: str) -> SignInAttempt:
    """Check a sign-in attempt against both bounds: refused (`wait` is the
    time to wait) while the client address (`client_address(request)`) has
    too many failed attempts, without counting it for the account; otherwise
    counted for the account as before. The caller calls `failed()` on the
    answer when the password was wrong, and must let the transaction commit
    (answer rather than raise): failures are what the address bound counts,
    as an office behind one address signs in many times a day but rarely
    fails often."""
    key = _key(LOGIN_CLIENT, client)
    advisory_lock(dbsession, f"ratelimit:{key}")
    wait = _wait(dbsession, LOGIN_CLIENT, key)
    if wait is not None:
        log.warning("sign-in throttled for a client address (too many failed attempts)")
        return SignInAttempt(dbsession, client, wait)
    return SignInAttempt(dbsession, client, hit(dbsession, LOGIN, email))


def purge(dbsession: Session) -> int:
    """Delete attempts older than any window looks back (`KEEP`): keys that
    are never tried again (an address, a mistyped email) leave no rows."""
    result = dbsession.execute(delete(RateLimitHit).where(RateLimitHit.at < utcnow() - KEEP))
    return result.rowcount or 0


def purge_job(registry: Registry) -> int:
    with registry["dbsession_factory"]() as dbsession:
        removed = purge(dbsession)
        dbsession.commit()
    if removed:
        log.info("removed %s expired rate-limit rows", removed)
    return removed


PURGE_JOB = "auth.purge_rate_limits"
PURGE_SCHEDULE = crontab(minute="*/10")
