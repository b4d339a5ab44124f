"""Health: `GET /api/health` is `{ok: true}` for anyone (a load balancer's
liveness probe); admins also get the state of the database and the job
runners, and the mail that failed for good. `GET /api/health/ready` checks
the database and the runners and answers 503 (never 500) when the
database is down, no runner has run for `ehs.ready_runner_age` seconds, or
a job (mail) has waited longer than `ehs.ready_mail_age`, for readiness
probes and operators. Only admins see what is down
and why (error class names, queue sizes tell an attacker what runs
behind the service); a probe needs nothing but the status."""

from __future__ import annotations

import logging
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config
from sqlalchemy import text

from ehs_core.errors import database_unreachable
from ehs_core.jobs import InProcessRunner, waiting
from ehs_core.mail import failed_mail
from ehs_core.security import Role, role_at_least

log = logging.getLogger(__name__)


def checks(request: Request) -> dict[str, Any]:
    """The database, and the job runners: readiness fails when a runner has
    not looked for work for `ehs.ready_runner_age` seconds (in this process
    its thread must be alive; elsewhere, `ehs worker`'s beat in the
    database) or when a job has waited past `ehs.ready_mail_age` seconds.
    Checked on a session of its own, so the request has no transaction to
    spoil; never raises."""
    registry = request.registry
    settings = registry.settings
    result: dict[str, Any] = {}
    backend = "redis" if settings.get("ehs.huey_url") else "in-process"
    admin = is_admin(request)  # before the check's own session: the identity is read on the request's
    try:
        with registry["dbsession_factory"]() as dbsession:
            dbsession.execute(text("SELECT 1"))
            result["database"] = {"ok": True}
            jobs = waiting(dbsession)
            mail = failed_mail(dbsession) if admin else None
    except Exception as exc:
        log.error("health: database unreachable: %s", exc.__class__.__name__)
        result["database"] = {"ok": False, "error": exc.__class__.__name__}
        result["jobs"] = {"ok": False, "backend": backend, "error": "database unreachable"}
        return result
    local = registry.get("job_runner")
    if local is not None:
        alive = not isinstance(local, InProcessRunner) or local.is_alive()
    else:
        beat = jobs["lastRunnerBeatSeconds"]
        alive = beat is not None and beat <= settings["ehs.ready_runner_age"]
    fresh = jobs["oldestAgeSeconds"] <= settings["ehs.ready_mail_age"]
    result["jobs"] = {"ok": alive and fresh, "backend": backend, "runnerAlive": alive, **jobs}
    if mail is not None:
        result["mail"] = mail
    return result


@view_config(route_name="health", request_method="GET", renderer="json", permission=NO_PERMISSION_REQUIRED)
def health(request: Request) -> dict[str, Any]:
    if is_admin(request):
        # With mail that will never arrive: who did not hear of what, and why.
        return {"ok": True, "detail": checks(request)}
    return {"ok": True}


def is_admin(request: Request) -> bool:
    """Whether the caller is an admin; False when the database cannot say
    (liveness and readiness answer without it)."""
    try:
        identity = request.identity
    except Exception as exc:
        if not database_unreachable(exc):
            raise
        return False
    return identity is not None and identity.is_user and role_at_least(identity.role, Role.admin)


@view_config(route_name="health.ready", request_method="GET", renderer="json",
             permission=NO_PERMISSION_REQUIRED, responses=(200, 503))
def ready(request: Request) -> Any:
    detail = checks(request)
    ok = detail["database"]["ok"] and detail["jobs"]["ok"]
    body: dict[str, Any] = {"ok": ok}
    if is_admin(request):
        body["detail"] = detail
    if not ok:
        response = Response(json_body=body, status=503)
        response.headers["Retry-After"] = "5"
        return response
    return body


def includeme(config: Configurator) -> None:
    from ehs_core.settings import positive_int

    config.add_setting("ehs.ready_runner_age", "EHS_READY_RUNNER_AGE", positive_int, "120")
    config.add_setting("ehs.ready_mail_age", "EHS_READY_MAIL_AGE", positive_int, "900")
    config.add_route("health", "/api/health")
    config.add_route("health.ready", "/api/health/ready")
    config.scan(__name__)
