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

from pyramid.config import Configurator

from ehs_core import metrics
from ehs_core.jobs.inprocess import InProcessRunner, before_forking, start_in_process_runner
from ehs_core.jobs.queueing import (
    Job,
    Permanent,
    add_job,
    add_periodic_job,
    enqueue,
    queue_job,
    queue_jobs,
    wake,
)
from ehs_core.jobs.runner import POLL, Runner, purge_job, waiting
from ehs_core.jobs.wakeup import RedisWaker, redis_wait

# The jobs' API as plugins, the command line and the web process import it
# (docs/plugins.md: `ehs_core.jobs.queue_job`, `ehs_core.jobs.Permanent`).
__all__ = ["POLL", "PURGE_JOB", "InProcessRunner", "Job", "Permanent", "Runner",
           "before_forking", "enqueue", "includeme", "queue_job", "queue_jobs", "redis_wait",
           "start_in_process_runner",
           "waiting", "wake"]

PURGE_JOB = "jobs.purge"


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
