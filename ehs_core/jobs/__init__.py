"""Background jobs as rows of the database (an outbox), written in the
transaction that causes them.

A mail to send, a PDF to make (any job a person's action causes) is a row
of `outbox_jobs` written by `queue_job` in the request's own transaction:
if the request commits, the job exists; if it rolls back, it does not.
Runners claim due rows (`Runner.claim`: PostgreSQL's `FOR UPDATE SKIP
LOCKED`, so several runners on several hosts never take one row; SQLite's
write lock in one process), run them, and mark them done; a job that fails
is retried with back-off and, when it can never succeed, marked failed (and
the job's `on_failure` tells admins: mail goes to `failed_mail`). A runner
holds a row for a lease (`ehs.job_lease`); one killed mid-job leaves the
row to be run again when the lease ends: at-least-once, never lost (issue
35: huey's queue in Redis lost mail whenever Redis or a worker failed).

Redis, when `ehs.huey_url` names one, only wakes the runners (`ehs worker`)
after a commit; without it they find due rows by polling every few
seconds, so losing Redis loses nothing. With no Redis URL a thread of the
web process is the runner (`make run`, SQLite in one process, and each
gunicorn worker). Periodic jobs (`add_periodic_job`: the daily digest, the
purges) are rows too, one per period under a unique key, so each runs once
per period across every runner and host.

Jobs are registered through directives the core uses for its own jobs and
plugins for theirs; a job function gets the application registry first,
then the JSON arguments it was queued with. Another kind of delivery
(webhooks) is one more job name.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import socket
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from ehs_core import metrics
from ehs_core.db import mark_written, utcnow
from ehs_core.directives import register_once
from ehs_core.events import after_commit
from ehs_core.jobs.models import DONE, FAILED, PENDING, JobRunnerBeat, OutboxJob
from ehs_core.metrics import job_finished
from ehs_core.requestlog import current_request_id

log = logging.getLogger(__name__)

# How often a runner looks for due rows when nothing wakes it (seconds).
POLL = 2.0
# How often a runner records that it is alive (seconds).
BEAT_EVERY = 10.0
# Redis list a commit pushes to, to wake the runners.
WAKE_KEY = "ehs:jobs:wake"
PURGE_JOB = "jobs.purge"
KEEP_DONE = dt.timedelta(days=7)

_INSERT = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}


class Permanent(Exception):
    """Raised by a job that can never succeed (a mail the server refuses
    with a 5xx answer): marked failed at once, not retried."""


@dataclass(frozen=True)
class Job:
    name: str
    func: Callable[..., Any]
    retries: int = 0
    retry_delay: float = 0
    retry_backoff: float = 0
    # (dbsession, registry, args, error, attempts), in the transaction that marks the row failed.
    on_failure: Callable[[Session, Registry, list[Any], str, int], None] | None = None
    # What of the arguments stays once the job is done or failed: a mail's
    # body may hold a sign-in link, which the database keeps only hashed.
    redact: Callable[[list[Any]], list[Any]] | None = None

    def delay(self, attempts: int) -> dt.timedelta:
        """The wait before attempt `attempts + 1` (`retry_backoff` times longer each time)."""
        factor = self.retry_backoff ** (attempts - 1) if self.retry_backoff > 1 else 1
        return dt.timedelta(seconds=self.retry_delay * factor)


def add_job(config: Configurator, name: str, func: Callable[..., Any], *, retries: int = 0,
            retry_delay: float = 0, retry_backoff: float = 0,
            on_failure: Callable[[Session, Registry, list[Any], str, int], None] | None = None,
            redact: Callable[[list[Any]], list[Any]] | None = None) -> None:
    """Directive: register a job that views queue with `queue_job`:
    `func(registry, *args)`, retried `retries` times, first after
    `retry_delay` seconds, each wait `retry_backoff` times the last;
    `on_failure` when it fails for good, `redact(args)` what of its
    arguments the row keeps once finished."""
    registry = config.registry

    def register() -> None:
        registry["jobs"][name] = Job(name, func, retries, retry_delay, retry_backoff, on_failure, redact)

    register_once(config, "ehs.job", name, register)


def add_periodic_job(config: Configurator, name: str, func: Callable[..., Any],
                     schedule: Callable[[dt.datetime], bool]) -> None:
    """Directive: a job run whenever `schedule(minute)` is true (a naive UTC
    datetime; a huey `crontab` fits), once per minute that matches across
    every runner and host (a row under the key "name@minute")."""
    registry = config.registry

    def register() -> None:
        registry["jobs"][name] = Job(name, func, retries=2, retry_delay=60, retry_backoff=2)
        registry["periodic"][name] = schedule

    register_once(config, "ehs.job", name, register)


def enqueue(dbsession: Session, name: str, *args: Any, key: str | None = None,
            request_id: str | None = None, due_at: dt.datetime | None = None) -> None:
    """Write a job row in `dbsession`'s transaction. With a `key`, a row that
    already holds it wins and this one is dropped (a period's job, a mail
    that must go once)."""
    now = utcnow()
    values = {"job": name, "payload": json.dumps(list(args), separators=(",", ":")), "key": key,
              "request_id": request_id, "status": PENDING, "attempts": 0, "due_at": due_at or now,
              "created_at": now}
    insert = _INSERT[dbsession.get_bind().dialect.name](OutboxJob.__table__).values(values)
    if key is not None:
        insert = insert.on_conflict_do_nothing(index_elements=["key"])
    dbsession.execute(insert)
    mark_written(dbsession)


# The request's flag: a wake-up is already set for after its commit.
_WAKE = "_ehs_wake_runners"


def queue_job(request: Request, name: str, *args: Any, key: str | None = None) -> None:
    """Queue a job in the request's transaction: it exists if and only if
    the request commits. The runners are woken once the request commits."""
    if name not in request.registry["jobs"]:
        raise KeyError(f"no job {name!r} is registered")
    request_id = getattr(request, "request_id", None) or current_request_id.get()
    enqueue(request.dbsession, name, *args, key=key, request_id=None if request_id == "-" else request_id)
    if not request.__dict__.get(_WAKE):
        request.__dict__[_WAKE] = True
        registry = request.registry
        after_commit(request, lambda: wake(registry))


def wake(registry: Registry) -> None:
    """Tell the runners there is work (never raises: a lost wake-up only
    delays the job to the next poll)."""
    waker = registry.get("job_waker")
    if waker is not None:
        try:
            waker()
        except Exception:
            log.warning("could not wake the job runners", exc_info=True)


# --- running -----------------------------------------------------------------


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
            insert = _INSERT[dbsession.get_bind().dialect.name](JobRunnerBeat.__table__).values(
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


# --- in-process runner, wake-ups ------------------------------------------------------------


class InProcessRunner(threading.Thread):
    """The runner as a thread of the web process (no Redis URL): woken by
    the commits of this process's requests, polling for the rest (retries,
    rows other processes wrote)."""

    def __init__(self, registry: Registry, periodic: bool = True, poll: float = POLL) -> None:
        super().__init__(name="ehs-jobs", daemon=True)
        self.runner = Runner(registry)
        self.periodic = periodic
        self.poll = poll
        self.woken = threading.Event()
        self.stopping = threading.Event()

    def wake(self) -> None:
        self.woken.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            self.woken.clear()
            try:
                self.runner.beat()
                if self.periodic:
                    self.runner.schedule_periodic()
                self.runner.run_due(self.stopping)
            except Exception:
                log.exception("in-process job runner error")
            self.woken.wait(self.poll)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until no job is due (tests, shutdown)."""
        deadline = dt.datetime.now() + dt.timedelta(seconds=timeout)
        while dt.datetime.now() < deadline:
            with self.runner.session() as dbsession:
                due = dbsession.execute(select(func.count()).where(
                    _T.c.status == PENDING, _T.c.due_at <= utcnow(),
                    or_(_T.c.claimed_until.is_(None), _T.c.claimed_until < utcnow()))).scalar_one()
            if not due:
                return
            self.wake()
            self.stopping.wait(0.05)

    def stop(self) -> None:
        self.stopping.set()
        self.woken.set()


class InlineRunner:
    """The test kit's runner: jobs run in the thread of the request that
    queued them, right after its commit, on the test's own connection (a
    second thread must not share it). The same `Runner` claims, runs and
    records them; `wait_idle` runs what has come due since (retries)."""

    periodic = False

    def __init__(self, registry: Registry) -> None:
        self.runner = Runner(registry, name="inline")

    def wake(self) -> None:
        self.runner.run_due()

    def wait_idle(self, timeout: float = 10.0) -> None:
        self.runner.run_due()

    def stop(self) -> None:
        pass


class RedisWaker:
    """Wakes the runners of every host through Redis after a commit. A
    request only sets an event: a thread of its own talks to Redis, so a
    Redis that hangs or is down slows no request, and nothing is lost (the
    runners poll). One LPUSH per burst of commits; the list is kept at one
    entry."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.pending = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._warned = 0.0

    def __call__(self) -> None:
        if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
            self._pid = os.getpid()  # a forked worker starts its own thread
            self._thread = threading.Thread(target=self._loop, name="ehs-jobs-wake", daemon=True)
            self._thread.start()
        self.pending.set()

    def _loop(self) -> None:
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)
        while True:
            self.pending.wait()
            self.pending.clear()
            try:
                with client.pipeline() as pipe:
                    pipe.lpush(WAKE_KEY, "1").ltrim(WAKE_KEY, 0, 0).execute()
            except Exception as exc:
                now = dt.datetime.now().timestamp()
                if now - self._warned > 60:  # one line a minute while Redis is away
                    self._warned = now
                    log.warning("Redis unreachable to wake the job runners (%s); they poll every %ss",
                                exc.__class__.__name__, POLL)


def redis_wait(url: str) -> Callable[[float], bool]:
    """For `ehs worker`: wait up to `timeout` seconds for a wake-up; False
    on a timeout or when Redis is unreachable (then it waits the timeout)."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=POLL + 3, socket_connect_timeout=2)
    stopping = threading.Event()

    def wait(timeout: float) -> bool:
        try:
            return client.blpop([WAKE_KEY], timeout=max(1, int(timeout))) is not None
        except Exception:
            stopping.wait(timeout)
            return False

    return wait


# The registries whose process runs an in-process job runner, for the fork
# handler below (weakly: a test's application is dropped when it ends).
_WITH_RUNNER: list[weakref.ref[Registry]] = []


def start_in_process_runner(registry: Registry, periodic: bool = True,
                            inline: bool = False) -> InProcessRunner | InlineRunner | None:
    """The web process's own runner when no Redis URL is set (else `ehs
    worker` runs the jobs). `periodic=False`: never the clock's jobs.
    `inline`: the test kit's (see `InlineRunner`)."""
    if registry.settings.get("ehs.huey_url"):
        return None
    if inline:
        runner: Any = InlineRunner(registry)
    else:
        runner = InProcessRunner(registry, periodic=periodic)
        runner.start()
    registry["job_runner"] = runner
    registry["job_waker"] = runner.wake
    _WITH_RUNNER[:] = [ref for ref in _WITH_RUNNER if ref() is not None]
    _WITH_RUNNER.append(weakref.ref(registry))
    return runner


def before_forking(registry: Registry) -> None:
    """A forking server (gunicorn from production.ini) is about to fork its
    workers from this process: its runner thread stops, and the engines'
    pooled connections close, before any fork. A fork taken while that
    thread held a SQLite transaction left each worker's SQLite believing a
    lock was held that no one held, and every write there waited out its
    timeout ("database is locked"). Each worker starts a runner of its own
    (`_runners_after_fork`), the clock's jobs included: their unique keys
    keep each period to one run."""
    runner = registry.get("job_runner")
    if isinstance(runner, InProcessRunner):
        runner.stop()
        runner.join(30)
    for key in ("db.engine", "db.autocommit_engine"):
        if key in registry:
            registry[key].dispose()


def _runners_after_fork() -> None:
    """In a forked child (a gunicorn worker): the parent's runner thread did
    not come along; the child gets its own, which also writes the periodic
    rows (their unique keys keep each period's job to one run)."""
    for ref in _WITH_RUNNER:
        registry = ref()
        if registry is None or not isinstance(registry.get("job_runner"), InProcessRunner):
            continue
        parent = registry["job_runner"]
        runner = InProcessRunner(registry, periodic=parent.periodic, poll=parent.poll)
        registry["job_runner"] = runner
        registry["job_waker"] = runner.wake
        runner.start()


os.register_at_fork(after_in_child=_runners_after_fork)


def includeme(config: Configurator) -> None:
    from huey import crontab

    from ehs_core.settings import positive_int

    config.registry["jobs"] = {}
    config.registry[metrics.WAITING] = waiting  # read by the /metrics collector
    config.registry["periodic"] = {}
    config.add_setting("ehs.job_lease", "EHS_JOB_LEASE", positive_int, "120")
    url = config.get_settings().get("ehs.huey_url") or ""
    if url:
        config.registry["job_waker"] = RedisWaker(url)
    config.add_directive("add_job", add_job)
    config.add_directive("add_periodic_job", add_periodic_job)
    config.add_periodic_job(PURGE_JOB, purge_job, crontab(minute="17"))
