"""Running the outbox: a `Runner` claims due rows under a lease, runs them,
and records the outcome (done, retried with back-off, or failed for good);
what is still waiting (health, readiness, metrics); the purge of rows done
long ago."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import socket
import threading
from dataclasses import dataclass
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from ehs_core.db import utcnow
from ehs_core.jobs.models import DONE, FAILED, PENDING, JobRunnerBeat, OutboxJob
from ehs_core.jobs.queueing import DIALECT_INSERT, Job, Permanent, enqueue
from ehs_core.metrics import job_finished
from ehs_core.requestlog import current_request_id

# The package's logger: operators filter the outbox's lines by "ehs_core.jobs".
log = logging.getLogger(__package__)

# How often a runner looks for due rows when nothing wakes it (seconds).
POLL = 2.0
# How often a runner records that it is alive (seconds).
BEAT_EVERY = 10.0
KEEP_DONE = dt.timedelta(days=7)


_T = OutboxJob.__table__


@dataclass
class Claimed:
    id: int
    job: str
    payload: str
    attempts: int
    request_id: str | None


class Runner:
    """Claims and runs due jobs; one per thread. `name` identifies the
    runner in `job_runner_beats`."""

    def __init__(self, registry: Registry, name: str | None = None) -> None:
        self.registry = registry
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        self._last_beat = 0.0
        self._last_minute: dt.datetime | None = None

    @property
    def lease(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.registry.settings.get("ehs.job_lease", 120))

    def session(self) -> Session:
        return self.registry["dbsession_factory"]()

    def claim(self) -> Claimed | None:
        """Take the next due row for this runner's lease, committed at once
        (the lease, not a held transaction, keeps others off it; SQLite's
        write lock would otherwise stop every request during a send)."""
        now = utcnow()
        due = (select(_T.c.id).where(_T.c.status == PENDING, _T.c.due_at <= now,
                                     or_(_T.c.claimed_until.is_(None), _T.c.claimed_until < now))
               .order_by(_T.c.due_at, _T.c.id).limit(1).with_for_update(skip_locked=True))
        statement = (update(_T).where(_T.c.id == due.scalar_subquery())
                     .values(claimed_until=now + self.lease, attempts=_T.c.attempts + 1)
                     .returning(_T.c.id, _T.c.job, _T.c.payload, _T.c.attempts, _T.c.request_id))
        with self.session() as dbsession, dbsession.begin():
            row = dbsession.execute(statement).first()
        return Claimed(*row) if row is not None else None

    def run(self, claimed: Claimed) -> bool:
        """Run one claimed job and record the outcome; True when it succeeded."""
        job = self.registry["jobs"].get(claimed.job)
        token = current_request_id.set(claimed.request_id or f"job-{claimed.id}")
        try:
            try:
                if job is None:
                    raise Permanent(f"no job {claimed.job!r} is registered")
                args = json.loads(claimed.payload)
                job.func(self.registry, *args)
            except Exception as exc:
                outcome = self._failed(claimed, job, exc)
                job_finished(claimed.job, outcome)
                return False
            with self.session() as dbsession, dbsession.begin():
                dbsession.execute(update(_T).where(_T.c.id == claimed.id).values(
                    status=DONE, finished_at=utcnow(), claimed_until=None, last_error=None,
                    **self._redacted(job, args)))
            job_finished(claimed.job, "done")
            return True
        finally:
            current_request_id.reset(token)

    @staticmethod
    def _redacted(job: Job | None, args: list[Any]) -> dict[str, Any]:
        if job is None or job.redact is None:
            return {}
        return {"payload": json.dumps(job.redact(args), separators=(",", ":"))}

    def _failed(self, claimed: Claimed, job: Job | None, exc: Exception) -> str:
        """Record a failure: "failed" for good, or "retry"."""
        error = (str(exc) if isinstance(exc, Permanent) else f"{exc.__class__.__name__}: {exc}")[:1000]
        final = job is None or isinstance(exc, Permanent) or claimed.attempts > job.retries
        now = utcnow()
        with self.session() as dbsession, dbsession.begin():
            if final:
                log.error("job %s #%d failed for good after %d attempt(s): %s", claimed.job, claimed.id,
                          claimed.attempts, error)
                args = json.loads(claimed.payload)
                if job is not None and job.on_failure is not None:
                    job.on_failure(dbsession, self.registry, args, error, claimed.attempts)
                dbsession.execute(update(_T).where(_T.c.id == claimed.id).values(
                    status=FAILED, finished_at=now, claimed_until=None, last_error=error,
                    **self._redacted(job, args)))
            else:
                delay = job.delay(claimed.attempts)
                log.warning("job %s #%d failed (attempt %d), retried in %ds: %s", claimed.job, claimed.id,
                            claimed.attempts, delay.total_seconds(), error)
                dbsession.execute(update(_T).where(_T.c.id == claimed.id).values(
                    due_at=now + delay, claimed_until=None, last_error=error))
        return "failed" if final else "retry"

    def run_due(self, stop: threading.Event | None = None, limit: int | None = None) -> int:
        """Run due jobs one at a time until none is due (or `stop` is set,
        or `limit` ran); returns how many ran."""
        count = 0
        while (stop is None or not stop.is_set()) and (limit is None or count < limit):
            claimed = self.claim()
            if claimed is None:
                break
            self.run(claimed)
            count += 1
        return count

    def schedule_periodic(self, now: dt.datetime | None = None) -> None:
        """Write this minute's (and any minute missed since the last call,
        up to five) periodic job rows; a key another runner wrote first
        is left alone."""
        minute = (now or utcnow()).astimezone(dt.UTC).replace(second=0, microsecond=0, tzinfo=None)
        last = self._last_minute
        if last is not None and minute <= last:
            return
        start = minute if last is None else max(last + dt.timedelta(minutes=1),
                                                minute - dt.timedelta(minutes=4))
        self._last_minute = minute
        periodic = self.registry["periodic"]
        moments = []
        while start <= minute:
            moments.append(start)
            start += dt.timedelta(minutes=1)
        due = [(name, moment) for moment in moments
               for name, schedule in periodic.items() if schedule(moment)]
        if not due:
            return
        with self.session() as dbsession, dbsession.begin():
            for name, moment in due:
                enqueue(dbsession, name, key=f"{name}@{moment:%Y-%m-%dT%H:%M}Z")

    def beat(self, force: bool = False) -> None:
        """Record that this runner is alive (at most every BEAT_EVERY seconds)."""
        now = utcnow()
        if not force and now.timestamp() - self._last_beat < BEAT_EVERY:
            return
        self._last_beat = now.timestamp()
        with self.session() as dbsession, dbsession.begin():
            insert = DIALECT_INSERT[dbsession.get_bind().dialect.name](JobRunnerBeat.__table__).values(
                name=self.name[:200], beat_at=now)
            dbsession.execute(insert.on_conflict_do_update(index_elements=["name"],
                                                           set_={"beat_at": now}))


def waiting(dbsession: Session) -> dict[str, Any]:
    """What the runners have not done yet: pending jobs, the age of the
    oldest one due, failed jobs, and when a runner last looked (health,
    readiness and metrics read this)."""
    now = utcnow()
    pending, oldest = dbsession.execute(select(func.count(), func.min(_T.c.due_at)).where(
        _T.c.status == PENDING)).one()
    failed = dbsession.execute(select(func.count()).where(_T.c.status == FAILED)).scalar_one()
    beat = dbsession.execute(select(func.max(JobRunnerBeat.beat_at))).scalar()
    if beat is not None and beat.tzinfo is None:  # SQLite's max() of a column reads back as text
        beat = beat.replace(tzinfo=dt.UTC)
    if isinstance(oldest, str) or isinstance(beat, str):
        oldest = _instant(oldest)
        beat = _instant(beat)
    oldest = oldest.replace(tzinfo=dt.UTC) if oldest is not None and oldest.tzinfo is None else oldest
    return {"pending": pending, "failed": failed,
            "oldestAgeSeconds": max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
            "lastRunnerBeatSeconds": (now - beat).total_seconds() if beat else None}


def _instant(value: Any) -> dt.datetime | None:
    if value is None or isinstance(value, dt.datetime):
        return value
    return dt.datetime.fromisoformat(str(value)).replace(tzinfo=dt.UTC)


def purge_job(registry: Registry) -> int:
    """Remove jobs done more than KEEP_DONE ago (failed ones stay for admins)."""
    with registry["dbsession_factory"]() as dbsession, dbsession.begin():
        removed = dbsession.execute(delete(OutboxJob).where(
            OutboxJob.status == DONE, OutboxJob.finished_at < utcnow() - KEEP_DONE)).rowcount or 0
    log.info("purged %d finished job(s)", removed)
    return removed
