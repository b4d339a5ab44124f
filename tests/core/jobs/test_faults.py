"""Failing parts: the job queue down, an error escaping the views."""

from __future__ import annotations

import logging

import webtest

from ehs_core.config import configure
from ehs_core.errors import LastResortErrors
from ehs_core.testing import PASSWORD, PUBLIC_URL, free_port


def test_requests_still_work_when_the_job_queue_is_down(app_settings, registry, dbsession, admin, caplog):
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    config = configure(dict(app_settings, **{"ehs.huey_url": dead_redis}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    web = webtest.TestApp(config.make_wsgi_app(), extra_environ={"HTTP_ORIGIN": PUBLIC_URL})
    caplog.set_level(logging.INFO, logger="ehs_core")

    web.post_json("/api/auth/magic-link", {"email": "admin@acme.test"}, status=204)

    assert any("could not queue job mail.deliver" in r.getMessage() and r.levelno == logging.ERROR
               for r in caplog.records)
    assert web.get("/api/health/ready", status=503).json == {"ok": False}  # what is down: admins only
    web.post_json("/api/auth/login", {"email": "admin@acme.test", "password": PASSWORD})
    ready = web.get("/api/health/ready", status=503).json
    assert ready["detail"]["jobs"]["ok"] is False
    assert ready["detail"]["jobs"]["backend"] == "redis"
    assert ready["detail"]["database"] == {"ok": True}
    web.post_json("/api/auth/logout", {}, status=204)
    assert web.get("/api/health").json == {"ok": True}


def test_an_error_escaping_pyramid_is_still_a_json_500_without_traceback(caplog):
    def broken(environ, start_response):
        raise RuntimeError("secret internals")

    response = webtest.TestApp(LastResortErrors(broken)).get("/api/anything", status=500)
    assert response.json == {"error": "Internal server error"}
    assert "secret" not in response.text
    assert any("unhandled error outside" in r.getMessage() for r in caplog.records)
