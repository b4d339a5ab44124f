"""Registering jobs and queueing them: `add_job`, `add_periodic_job`, and a
row of `outbox_jobs` written in the transaction of what causes it
(`queue_job`), with the runners woken once that transaction commits."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import insert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from ehs_core.db import mark_written, utcnow
from ehs_core.directives import register_once
from ehs_core.events import after_commit
from ehs_core.jobs.models import PENDING, OutboxJob
from ehs_core.requestlog import current_request_id

# The package's logger: operators filter the outbox's lines by "ehs_core.jobs".
log = logging.getLogger(__package__)

# The INSERT that can skip a row whose unique key is taken, per database.
DIALECT_INSERT = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}


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
    insert = DIALECT_INSERT[dbsession.get_bind().dialect.name](OutboxJob.__table__).values(values)
    if key is not None:
        insert = insert.on_conflict_do_nothing(index_elements=["key"])
    dbsession.execute(insert)
    mark_written(dbsession)


def enqueue_each(dbsession: Session, name: str, arguments: list[tuple[Any, ...]],
                 request_id: str | None = None) -> None:
    """Write one job row per tuple of `arguments`, in one INSERT of several
    rows (a notice to twenty people is one statement, not twenty), in
    `dbsession`'s transaction."""
    if not arguments:
        return
    now = utcnow()
    dbsession.execute(insert(OutboxJob.__table__), [
        {"job": name, "payload": json.dumps(list(args), separators=(",", ":")), "key": None,
         "request_id": request_id, "status": PENDING, "attempts": 0, "due_at": now, "created_at": now}
        for args in arguments])
    mark_written(dbsession)


# The request's flag: a wake-up is already set for after its commit.
_WAKE = "_ehs_wake_runners"


def queue_job(request: Request, name: str, *args: Any, key: str | None = None) -> None:
    """Queue a job in the request's transaction: it exists if and only if
    the request commits. The runners are woken once the request commits."""
    if name not in request.registry["jobs"]:
        raise KeyError(f"no job {name!r} is registered")
    enqueue(request.dbsession, name, *args, key=key, request_id=_request_id(request))
    _wake_after_commit(request)


def queue_jobs(request: Request, name: str, arguments: list[tuple[Any, ...]]) -> None:
    """`queue_job` of each tuple of `arguments`, in one statement."""
    if name not in request.registry["jobs"]:
        raise KeyError(f"no job {name!r} is registered")
    enqueue_each(request.dbsession, name, arguments, request_id=_request_id(request))
    if arguments:
        _wake_after_commit(request)


def _request_id(request: Request) -> str | None:
    request_id = getattr(request, "request_id", None) or current_request_id.get()
    return None if request_id == "-" else request_id


def _wake_after_commit(request: Request) -> None:
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
