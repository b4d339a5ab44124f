"""Health: `GET /api/health` is `{ok: true}` for anyone (a load balancer's
liveness probe); admins also get the state of the database and the job
queue, and the mail that failed for good. `GET /api/health/ready` checks
the database and the queue and answers 503 when one is down, for
readiness probes and operators. Only admins see what is down
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

from ehs_core.mail import failed_mail
from ehs_core.security import Role, role_at_least

log = logging.getLogger(__name__)


def checks(request: Request) -> dict[str, Any]:
    registry = request.registry
    result: dict[str, Any] = {}
    try:
        request.dbsession.execute(text("SELECT 1"))
        result["database"] = {"ok": True}
    except Exception as exc:
        request.tm.doom()  # answer without trying to commit a broken transaction
        log.error("health: database unreachable: %s", exc.__class__.__name__)
        result["database"] = {"ok": False, "error": exc.__class__.__name__}
    huey = registry["huey"]
    backend = "redis" if registry.settings.get("ehs.huey_url") else "in-process"
    try:
        result["jobs"] = {"ok": True, "backend": backend, "pending": huey.pending_count(),
                          "scheduled": huey.scheduled_count()}
    except Exception as exc:
        log.error("health: job queue unreachable (%s): %s", backend, exc.__class__.__name__)
        result["jobs"] = {"ok": False, "backend": backend, "error": exc.__class__.__name__}
    return result


@view_config(route_name="health", request_method="GET", renderer="json", permission=NO_PERMISSION_REQUIRED)
def health(request: Request) -> dict[str, Any]:
    if is_admin(request):
        detail = checks(request)
        if detail["database"]["ok"]:
            # Mail that will never arrive: who did not hear of what, and why.
            detail["mail"] = failed_mail(request.dbsession)
        return {"ok": True, "detail": detail}
    return {"ok": True}


def is_admin(request: Request) -> bool:
    identity = request.identity
    return identity is not None and identity.is_user and role_at_least(identity.role, Role.admin)


@view_config(route_name="health.ready", request_method="GET", renderer="json",
             permission=NO_PERMISSION_REQUIRED, responses=(200, 503))
def ready(request: Request) -> Any:
    detail = checks(request)
    ok = all(part["ok"] for part in detail.values())
    body: dict[str, Any] = {"ok": ok}
    if is_admin(request):
        body["detail"] = detail
    if not ok:
        return Response(json_body=body, status=503)
    return body


def includeme(config: Configurator) -> None:
    config.add_route("health", "/api/health")
    config.add_route("health.ready", "/api/health/ready")
    config.scan(__name__)
