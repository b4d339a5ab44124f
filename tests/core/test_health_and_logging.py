import datetime as dt
import json
import logging

from ehs_core.db import utcnow
from ehs_core.jobs import enqueue
from ehs_core.requestlog import JSONFormatter, current_request_id
from ehs_core.servers import _with_port


def test_health_is_plain_for_everyone_but_admins(client, make_user, admin):
    assert client.get("/api/health").json == {"ok": True}
    assert make_user("safety_manager").get("/api/health").json == {"ok": True}
    detail = admin.get("/api/health").json["detail"]
    assert detail["database"] == {"ok": True}
    assert detail["jobs"]["ok"] is True and detail["jobs"]["backend"] == "in-process"


def test_readiness_shows_each_dependency_to_admins_only(client, make_user, admin):
    assert client.get("/api/health/ready").json == {"ok": True}
    assert make_user("safety_manager").get("/api/health/ready").json == {"ok": True}
    body = admin.get("/api/health/ready").json
    assert body["ok"] is True
    assert set(body["detail"]) == {"database", "jobs", "mail"}


def test_readiness_fails_when_mail_waits_longer_than_the_configured_age(client, admin, registry, dbsession):
    """Issue 35: readiness stayed 200 with 753 jobs waiting. A mail waiting
    past `ehs.ready_mail_age` (a runner that cannot keep up, an SMTP
    server refusing for hours) turns it to 503."""
    age = registry.settings["ehs.ready_mail_age"]
    enqueue(dbsession, "mail.deliver", {"to": "x@acme.test", "subject": "s", "body": "b"},
            due_at=utcnow() - dt.timedelta(seconds=age + 5))
    dbsession.flush()
    # a probe learns that something is down, not what or why
    response = client.get("/api/health/ready", status=503)
    assert response.json == {"ok": False} and response.headers["Retry-After"]
    jobs = admin.get("/api/health/ready", status=503).json["detail"]["jobs"]
    assert jobs["ok"] is False and jobs["runnerAlive"] is True and jobs["pending"] == 1
    assert jobs["oldestAgeSeconds"] > age
    assert client.get("/api/health").json == {"ok": True}  # liveness is unaffected


def test_every_response_carries_a_request_id(client):
    first = client.get("/api/health").headers["X-Request-Id"]
    second = client.get("/api/health").headers["X-Request-Id"]
    assert len(first) == 32 and first != second


def test_a_proxys_request_id_is_kept_when_well_formed(client):
    kept = client.get("/api/health", headers={"X-Request-Id": "lb-0123456789"})
    assert kept.headers["X-Request-Id"] == "lb-0123456789"
    replaced = client.get("/api/health", headers={"X-Request-Id": "bad id\r\nX-Evil: 1"})
    assert replaced.headers["X-Request-Id"] != "bad id\r\nX-Evil: 1"
    assert len(replaced.headers["X-Request-Id"]) == 32


def test_log_lines_carry_the_request_id_as_json():
    record = logging.LogRecord("ehs_core.x", logging.WARNING, __file__, 1, "failed sign-in (user %s)",
                               (7,), None)
    token = current_request_id.set("req-12345678")
    try:
        line = JSONFormatter("%(levelname)s %(name)s %(request_id)s %(message)s").format(record)
    finally:
        current_request_id.reset(token)
    assert json.loads(line) == {"levelname": "WARNING", "name": "ehs_core.x", "request_id": "req-12345678",
                                "message": "failed sign-in (user 7)"}


def test_pserve_http_port_overrides_the_configured_port():
    assert _with_port("127.0.0.1:6543", "7000") == "127.0.0.1:7000"
    assert _with_port("127.0.0.1:6543", None) == "127.0.0.1:6543"
    assert _with_port("[::1]:6543", "7000") == "[::1]:7000"
