"""`GET /metrics`: the service's state in the Prometheus text format
(prometheus_client), for an operator's monitoring (issue 35: no metrics at
all; readiness was the only view, and a binary one).

What it tells: requests by route and status and their latency, incidents
filed, jobs run by outcome (mail among them: `job="mail.deliver"`), the
jobs waiting, the age of the oldest, jobs failed for good and when a job
runner last looked for work (read from the database at each scrape, so
every host tells the same), and the database pool's connections in use.
Example alert rules: `deploy/prometheus/ehs-alerts.yml`.

Under gunicorn every worker process counts its own requests: set
`PROMETHEUS_MULTIPROC_DIR` (an empty directory, emptied at each start, the
same for the web server and `ehs worker` on a host) in the environment of
both, and a scrape sums every process's counts (prometheus_client's
multiprocess mode; `child_exit` below tidies a dead worker's gauges).

Who may read it: the addresses of `ehs.metrics_allow` (default: this
host), or anyone sending `Authorization: Bearer <ehs.metrics_token>` when a
token is set. Anyone else gets 404, as for a page that does not exist (the
numbers say how busy the service is and what runs behind it).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector
from pyramid.config import Configurator
from pyramid.events import subscriber
from pyramid.httpexceptions import HTTPNotFound
from pyramid.registry import Registry
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from sqlalchemy import event

from ehs_core.events import AfterIncidentCreated

REQUESTS = Counter("ehs_http_requests", "HTTP requests answered, by route and status",
                   ["method", "route", "status"])
LATENCY = Histogram("ehs_http_request_duration_seconds", "Time to answer a request, by route", ["route"],
                    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
INCIDENTS_FILED = Counter("ehs_incidents_filed", "Incidents filed (committed)")
JOBS = Counter("ehs_jobs", "Jobs run, by job and outcome (done, retry, failed)", ["job", "outcome"])
POOL_IN_USE = Gauge("ehs_db_pool_connections_in_use", "Database connections checked out of the pools",
                    multiprocess_mode="livesum")


def job_finished(job: str, outcome: str) -> None:
    """Counted by the job runners (`ehs_core.jobs`)."""
    JOBS.labels(job, outcome).inc()


# Where the jobs package leaves its `waiting(dbsession)` for the collector.
WAITING = "jobs.waiting"


class OutboxCollector(Collector):
    """The jobs waiting and failed, read from the database at each scrape."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[GaugeMetricFamily]:
        waiting = self.registry[WAITING]  # `ehs_core.jobs.waiting`, which imports this module
        with self.registry["dbsession_factory"]() as dbsession:
            state = waiting(dbsession)
        yield GaugeMetricFamily("ehs_jobs_waiting", "Jobs (mail among them) not done yet",
                                value=state["pending"])
        yield GaugeMetricFamily("ehs_jobs_oldest_waiting_seconds",
                                "How long the oldest job due has waited", value=state["oldestAgeSeconds"])
        yield GaugeMetricFamily("ehs_jobs_failed", "Jobs failed for good (mail: see failed_mail)",
                                value=state["failed"])
        beat = state["lastRunnerBeatSeconds"]
        yield GaugeMetricFamily("ehs_job_runner_last_beat_seconds",
                                "Seconds since a job runner last looked for work (-1: never)",
                                value=-1 if beat is None else beat)


def allowed(request: Request) -> bool:
    settings = request.registry.settings
    token = settings.get("ehs.metrics_token") or ""
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        return False
    return any(address in network for network in settings["ehs.metrics_allow"])


def metrics_view(request: Request) -> Response:
    if not allowed(request):
        raise HTTPNotFound()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        processes = CollectorRegistry()
        multiprocess.MultiProcessCollector(processes)
        text = generate_latest(processes)
    else:
        text = generate_latest(REGISTRY)
    state = CollectorRegistry()
    state.register(OutboxCollector(request.registry))
    response = Response(body=text + generate_latest(state))
    response.content_type = CONTENT_TYPE_LATEST.split(";")[0]
    response.headers["Cache-Control"] = "no-store"
    return response


def metrics_tween_factory(handler: Callable[[Request], Response], registry: Registry) -> Callable:
    def tween(request: Request) -> Response:
        started = time.perf_counter()
        status = 500
        try:
            response = handler(request)
            status = response.status_int
            return response
        finally:
            route = request.matched_route
            name = route.name if route is not None else "-"  # unmatched paths: one label, not one each
            REQUESTS.labels(request.method, name, str(status)).inc()
            LATENCY.labels(name).observe(time.perf_counter() - started)

    return tween


@subscriber(AfterIncidentCreated)
def count_filed(event: AfterIncidentCreated) -> None:
    INCIDENTS_FILED.inc()


def _count_pool(engine: Any) -> None:
    @event.listens_for(engine, "checkout")
    def checkout(*_: Any) -> None:
        POOL_IN_USE.inc()

    @event.listens_for(engine, "checkin")
    def checkin(*_: Any) -> None:
        POOL_IN_USE.dec()


def child_exit(server: Any, worker: Any) -> None:
    """gunicorn's hook: a dead worker's live gauges leave the sums."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)


def _networks(value: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(part, strict=False) for part in value.replace(",", " ").split())


def includeme(config: Configurator) -> None:
    config.add_setting("ehs.metrics_token", "EHS_METRICS_TOKEN", str.strip, "")
    config.add_setting("ehs.metrics_allow", "EHS_METRICS_ALLOW", _networks, "127.0.0.1 ::1")
    config.add_route("metrics", "/metrics")
    config.add_view(metrics_view, route_name="metrics", request_method="GET",
                    permission=NO_PERMISSION_REQUIRED)
    config.add_tween("ehs_core.metrics.metrics_tween_factory", over="pyramid_tm.tm_tween_factory")
    for key in ("db.engine", "db.autocommit_engine"):
        if key in config.registry:
            _count_pool(config.registry[key])
    config.scan(__name__)
