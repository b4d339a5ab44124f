"""Moving-window rate limits kept in the database, so they hold across worker
processes without Redis. Checking and counting happen under a lock on the
key (an advisory lock on PostgreSQL; SQLite serialises writers already), so
concurrent attempts cannot all slip under the limit."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ehs_core.auth.models import RateLimitHit
from ehs_core.db import advisory_lock, utcnow


@dataclass(frozen=True)
class Limit:
    name: str
    count: int
    window: dt.timedelta


LOGIN = Limit("login", 10, dt.timedelta(minutes=15))
MAIL = Limit("mail", 5, dt.timedelta(minutes=15))


def hit(dbsession: Session, limit: Limit, subject: str) -> dt.timedelta | None:
    """Count one attempt. Returns None if it is within the limit, else the
    time until the oldest counted attempt leaves the window (and the attempt
    is refused without being counted)."""
    key = f"{limit.name}:{subject}"
    now = utcnow()
    since = now - limit.window
    advisory_lock(dbsession, f"ratelimit:{key}")
    dbsession.execute(delete(RateLimitHit).where(RateLimitHit.key == key, RateLimitHit.at <= since))
    recent = dbsession.execute(
        select(func.count(), func.min(RateLimitHit.at)).where(RateLimitHit.key == key)
    ).one()
    if recent[0] >= limit.count:
        # Refused attempts are not counted, so Retry-After stays true.
        return recent[1] + limit.window - now
    dbsession.add(RateLimitHit(key=key, at=now))
    dbsession.flush()
    return None
