"""Failing parts: the job queue down, an error escaping the views."""

from __future__ import annotations

import logging

import webtest

from ehs_core.config import configure
from ehs_core.errors import LastResortErrors
from ehs_core.jobs import Runner
from ehs_core.jobs.models import PENDING, OutboxJob
from ehs_core.testing import PASSWORD, PUBLIC_URL, free_port


def test_with_redis_down_mail_is_kept_and_delivered_and_readiness_follows_the_runner(
        app_settings, registry, dbsession, admin, inbox, caplog):
    """Redis only wakes the runners (issue 35: with Redis down, mail was
    logged and dropped). With nothing listening at the Redis URL, a sign-in
    link is still queued in the request's transaction and a runner
    delivers it; readiness answers 503 while no runner has looked for work
    (`ehs worker` down) and 200 once one has."""
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    config = configure(dict(app_settings, **{"ehs.huey_url": dead_redis}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    web = webtest.TestApp(config.make_wsgi_app(), extra_environ={"HTTP_ORIGIN": PUBLIC_URL})
    caplog.set_level(logging.INFO, logger="ehs_core")

    web.post_json("/api/auth/magic-link", {"email": "admin@acme.test"}, status=204)

    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert dbsession.query(OutboxJob).filter(OutboxJob.status == PENDING).count() == 1
    assert web.get("/api/health/ready", status=503).json == {"ok": False}  # what is down: admins only
    web.post_json("/api/auth/login", {"email": "admin@acme.test", "password": PASSWORD})
    ready = web.get("/api/health/ready", status=503)
    assert ready.headers["Retry-After"]
    detail = ready.json["detail"]
    assert detail["jobs"]["ok"] is False and detail["jobs"]["runnerAlive"] is False
    assert detail["jobs"]["backend"] == "redis" and detail["jobs"]["pending"] == 1
    assert detail["database"] == {"ok": True}

    runner = Runner(config.registry)  # what `ehs worker` runs, polling the database
    runner.beat()
    assert runner.run_due() == 1
    [message] = inbox.wait(1)
    assert message["To"] == "admin@acme.test"
    ready = web.get("/api/health/ready").json
    assert ready["ok"] is True and ready["detail"]["jobs"]["pending"] == 0


def test_an_error_escaping_pyramid_is_still_a_json_500_without_traceback(caplog):
    def broken(environ, start_response):
        raise RuntimeError("secret internals")

    response = webtest.TestApp(LastResortErrors(broken)).get("/api/anything", status=500)
    assert response.json == {"error": "Internal server error"}
    assert "secret" not in response.text
    assert any("unhandled error outside" in r.getMessage() for r in caplog.records)
