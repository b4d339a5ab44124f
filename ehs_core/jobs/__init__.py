"""Background jobs on huey: queued only after the request commits.

With `ehs.huey_url` empty the queue is in memory and a thread inside the
web process consumes it (development, single process). Under a forking
server (gunicorn from production.ini) the process that built the
application keeps its thread for the clock's jobs, which so run once, and
each forked worker gets a thread of its own for the jobs its requests queue
(`_runners_after_fork`). With a redis:// URL
the queue is shared and `ehs worker` consumes it, periodic jobs included.

Jobs are registered through directives the core uses for its own jobs (mail
delivery, the daily digest) and plugins use for theirs. A job function gets
the application registry first, so it can reach settings and the database.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from huey import MemoryHuey, RedisHuey
from huey.api import Huey
from huey.signals import SIGNAL_ENQUEUED
from huey.storage import RedisStorage
from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request

from ehs_core.directives import register_once
from ehs_core.events import after_commit

log = logging.getLogger(__name__)


def make_huey(settings: dict[str, Any]) -> Huey:
    url = settings.get("ehs.huey_url") or ""
    if url:
        return RedisHuey("ehs", url=url, results=False, utc=True)
    return MemoryHuey("ehs", results=False, utc=True)


def add_job(config: Configurator, name: str, func: Callable[..., Any], *,
            retries: int = 0, retry_delay: int = 0, retry_backoff: float = 0) -> None:
    """Directive: register a job that views queue with `queue_job`."""
    registry = config.registry

    def register() -> None:
        def run(*args: Any, **kwargs: Any) -> Any:
            return func(registry, *args, **kwargs)

        run.__name__ = name
        task = registry["huey"].task(name=name, retries=retries, retry_delay=retry_delay,
                                     retry_backoff=retry_backoff)(run)
        registry.setdefault("jobs", {})[name] = task

    register_once(config, "ehs.job", name, register)


def add_periodic_job(config: Configurator, name: str, func: Callable[..., Any],
                     schedule: Callable[[dt.datetime], bool]) -> None:
    """Directive: a job run by the worker whenever `schedule(utc_time)` is true
    (a huey `crontab`, checked once a minute)."""
    registry = config.registry

    def register() -> None:
        def run() -> Any:
            return func(registry)

        run.__name__ = name
        task = registry["huey"].periodic_task(schedule, name=name)(run)
        registry.setdefault("jobs", {})[name] = task

    register_once(config, "ehs.job", name, register)


# The jobs a request queued, on the request (an attempt pyramid_retry runs
# again is a new request, so a rolled-back attempt's jobs are dropped).
PENDING = "_ehs_pending_jobs"


def queue_job(request: Request, name: str, *args: Any) -> None:
    """Queue a job once the request's transaction commits; a rolled-back
    request queues nothing, and a retried one queues only once. All the jobs
    of a request are queued together, in one round trip to Redis."""
    pending = request.__dict__.get(PENDING)
    if pending is None:
        pending = request.__dict__[PENDING] = []
        registry = request.registry

        def enqueue() -> None:
            # A job queued from here on (by a later after-commit hook) is
            # queued by a hook of its own.
            if request.__dict__.get(PENDING) is pending:
                del request.__dict__[PENDING]
            enqueue_all(registry, pending)

        after_commit(request, enqueue)
    pending.append((name, args))


def enqueue_all(registry: Registry, pending: list[tuple[str, tuple[Any, ...]]]) -> None:
    """Queue jobs in order: on Redis with one LPUSH of them all (the worker
    takes them from the other end, first queued first), else one by one.
    A job that cannot be queued is logged, as before."""
    huey = registry["huey"]
    tasks = []
    for name, args in pending:
        try:
            tasks.append(registry["jobs"][name].s(*args))
        except Exception:
            log.exception("could not queue job %s", name)
    storage = huey.storage
    if len(tasks) > 1 and type(storage) is RedisStorage and not huey.immediate:
        try:
            for task in tasks:
                huey._emit(SIGNAL_ENQUEUED, task)  # what Huey.enqueue does first
            storage.conn.lpush(storage.queue_key, *(huey.serialize_task(task) for task in tasks))
        except Exception:
            log.exception("could not queue jobs %s", ", ".join(task.name for task in tasks))
        return
    for task in tasks:
        try:
            huey.enqueue(task)
        except Exception:
            log.exception("could not queue job %s", task.name)


class InProcessRunner(threading.Thread):
    """Consumes an in-memory huey queue inside the web process.

    huey's own consumer installs signal handlers, which only the main thread
    may do, so this small loop does the consumer's work: move due scheduled
    tasks (retries) to the queue, queue periodic tasks each minute, execute.
    """

    def __init__(self, huey: Huey, poll: float = 0.05, periodic: bool = True) -> None:
        super().__init__(name="ehs-jobs", daemon=True)
        self.huey = huey
        self.poll = poll
        self.periodic = periodic
        self.stopping = threading.Event()
        self.executing = threading.Lock()
        self._last_minute: dt.datetime | None = None

    def run_pending(self) -> int:
        """Run everything that is due now; return how many tasks ran."""
        now = self.huey._get_timestamp()
        for task in self.huey.read_schedule(now):
            self.huey.enqueue(task)
        minute = now.replace(second=0, microsecond=0)
        if self.periodic and minute != self._last_minute:
            self._last_minute = minute
            for task in self.huey.read_periodic(minute):
                self.huey.enqueue(task)
        count = 0
        with self.executing:
            while (task := self.huey.dequeue()) is not None:
                try:
                    self.huey.execute(task)
                except Exception:
                    log.exception("job %s failed", task.name)
                count += 1
        return count

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until nothing is queued or running (tests, shutdown)."""
        deadline = dt.datetime.now() + dt.timedelta(seconds=timeout)
        while dt.datetime.now() < deadline:
            with self.executing:
                if not self.huey.pending_count():
                    return
            self.stopping.wait(0.02)

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                if not self.run_pending():
                    self.stopping.wait(self.poll)
            except Exception:
                log.exception("in-process job runner error")
                self.stopping.wait(1)

    def stop(self) -> None:
        self.stopping.set()


# The registries whose process runs an in-process job runner, for the fork
# handler below (weakly: a test's application is dropped when it ends).
_WITH_RUNNER: list[weakref.ref[Registry]] = []


def start_in_process_runner(registry: Registry, periodic: bool = True) -> InProcessRunner | None:
    """`periodic=False`: run only what requests queue, never the clock's jobs
    (the test kit: a purge or digest firing mid-test would use the test's
    database connection from another thread)."""
    if registry.settings.get("ehs.huey_url"):
        return None
    runner = InProcessRunner(registry["huey"], periodic=periodic)
    registry["job_runner"] = runner
    runner.start()
    _WITH_RUNNER[:] = [ref for ref in _WITH_RUNNER if ref() is not None]
    _WITH_RUNNER.append(weakref.ref(registry))
    return runner


def _runners_after_fork() -> None:
    """In a forked child (a gunicorn worker): the parent's runner thread did
    not come along, so the jobs this process's requests queue would never
    run. Give the child an empty queue of its own (the inherited one may hold
    the parent's jobs, and its lock may have been held by the parent's thread
    at the fork) and a thread that runs what the child queues. The clock's
    jobs stay with the parent, so a daily digest is sent once, not once per
    worker."""
    for ref in _WITH_RUNNER:
        registry = ref()
        if registry is None or "job_runner" not in registry:
            continue
        huey = registry["huey"]
        huey.storage = huey.create_storage()
        runner = InProcessRunner(huey, periodic=False)
        registry["job_runner"] = runner
        runner.start()


os.register_at_fork(after_in_child=_runners_after_fork)


def includeme(config: Configurator) -> None:
    config.registry["huey"] = make_huey(config.get_settings())
    config.registry["jobs"] = {}
    config.add_directive("add_job", add_job)
    config.add_directive("add_periodic_job", add_periodic_job)
