"""The runner inside the web process (no Redis URL: `make run`, and each
gunicorn worker): a thread woken by this process's commits, the test kit's
inline runner, and what a forking server needs so that each worker has a
runner of its own."""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import weakref
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import func, or_, select

from ehs_core.db import utcnow
from ehs_core.jobs.models import PENDING, OutboxJob
from ehs_core.jobs.runner import POLL, Runner

# The package's logger: operators filter the outbox's lines by "ehs_core.jobs".
log = logging.getLogger(__package__)

_T = OutboxJob.__table__


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
