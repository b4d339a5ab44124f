"""The database stopped: every request is answered 503 with Retry-After
(JSON under /api, the error page for a browser), readiness too, each with
one log line and no traceback (issue 35: 500s, JSON for pages, and 9 MB of
tracebacks in 18 s)."""

from __future__ import annotations

import logging

import pytest
import webtest

from ehs_core.config import configure
from ehs_core.errors import LastResortErrors
from ehs_core.testing import PUBLIC_URL, base_settings, free_port


@pytest.fixture
def stopped(smtp_server, tmp_path, clean_environ):
    """The service configured for a PostgreSQL server that is not running."""
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/ehs"
    config = configure(dict(base_settings(url, smtp_server.port, str(tmp_path / "uploads"))))
    app = webtest.TestApp(LastResortErrors(config.make_wsgi_app()),
                          extra_environ={"HTTP_ORIGIN": PUBLIC_URL, "REMOTE_ADDR": "127.0.0.1"})
    app.set_cookie("service_session", "a-session-the-service-must-look-up")
    yield app
    config.registry["db.engine"].dispose()


def test_an_api_call_a_page_and_readiness_answer_503_with_retry_after(stopped, caplog):
    caplog.set_level(logging.INFO)
    api = stopped.get("/api/incidents", status=503)
    assert api.content_type == "application/json"
    assert api.json == {"error": "The service cannot reach its database; please try again in a moment"}
    assert int(api.headers["Retry-After"]) > 0

    posted = stopped.post_json("/api/incidents", {"title": "x"}, status=503)
    assert posted.json["error"].startswith("The service cannot reach its database")

    page = stopped.get("/incidents", headers={"Accept": "text/html"}, status=503)
    assert page.content_type == "text/html"
    assert "Temporarily unavailable" in page.text and "try again" in page.text
    assert int(page.headers["Retry-After"]) > 0

    ready = stopped.get("/api/health/ready", status=503)
    assert int(ready.headers["Retry-After"]) > 0
    stopped.reset()  # readiness as a probe asks it: without a session
    assert stopped.get("/api/health/ready", status=503).json == {"ok": False}
    assert stopped.get("/api/health").json == {"ok": True}  # liveness: the process answers

    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [r for r in errors if r.exc_info], "a traceback was logged"
    # one line for each of the five requests that failed
    assert len([r for r in errors if "database unreachable" in r.getMessage()]) == len(errors) == 5
