"""No log keeps a link's token (issue 35: gunicorn's access log wrote
`GET /auth/reset?token=...` in full, so whoever read the logs could take
over an invited administrator): production.ini's logging, run as
configured, and the nginx and HAProxy configurations in deploy/."""

from __future__ import annotations

import configparser
import io
import json
import logging
import logging.config
import re
from pathlib import Path

import pytest
import webtest

from ehs_core.requestlog import current_request_id
from ehs_core.testing import PUBLIC_URL

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-T0KEN-value-0123456789abcdef"


@pytest.fixture
def production_logging(monkeypatch):
    """production.ini's [loggers]/[handlers]/[formatters], writing to a buffer."""
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    before = logging.root.manager.loggerDict.copy()
    levels = {name: logging.getLogger(name).level for name in ("", "ehs_core", "ehs.access")}
    logging.config.fileConfig(str(ROOT / "production.ini"), disable_existing_loggers=False)
    yield out
    for handler in list(logging.root.handlers):
        logging.root.removeHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    assert before.keys() <= logging.root.manager.loggerDict.keys()


def test_production_ini_runs_no_access_log_of_its_server_that_would_write_query_strings():
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(ROOT / "production.ini")
    server = ini["server:main"]
    assert "accesslog" not in server or "%(q)s" not in server.get("access_log_format", "%(r)s")


def test_a_request_with_a_token_is_logged_as_one_json_line_without_it(production_logging, registry,
                                                                      dbsession, admin):
    web = webtest.TestApp(registry["wsgi_app"], extra_environ={"HTTP_ORIGIN": PUBLIC_URL})
    web.get(f"/auth/reset?token={SECRET}", status="*")
    admin.get("/api/incidents?pageSize=5")
    web.post_json("/api/auth/login", {"email": "admin@acme.test", "password": SECRET}, status="*")
    text = production_logging.getvalue()
    assert SECRET not in text
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    access = [line for line in lines if line["name"] == "ehs.access"]
    reset, listed, login = access[-3:]  # (the admin's setup came before)
    assert reset["http"]["method"] == "GET" and reset["http"]["pattern"] == "/auth/reset"
    assert listed["http"] == {"method": "GET", "route": "incidents", "pattern": "/api/incidents",
                              "status": 200}
    assert listed["user_id"] is not None and isinstance(listed["duration_ms"], float)
    assert len(listed["request_id"]) == 32 and listed["request_id"] != current_request_id.get()
    assert login["http"]["status"] == 401
    # UTC, with its offset
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", listed["asctime"])
    assert "cookie" not in text.lower()


def test_nginx_logs_no_query_string():
    for path in (ROOT / "deploy" / "nginx").glob("*.conf"):
        text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        formats = dict(re.findall(r"log_format\s+(\S+)\s+((?:'[^']*'\s*)+);", text))
        for name, definition in formats.items():
            assert not re.search(r"\$(request\b|request_uri|args|query_string|arg_)", definition), \
                (path, name)
        for directive in re.findall(r"access_log\s+([^;]+);", text):
            parts = directive.split()
            assert parts[0] == "off" or (len(parts) > 1 and parts[1] in formats), (path, directive)
        if "server {" in text:
            # every server block that proxies or redirects logs with a format of ours
            assert text.count("access_log") >= text.count("server {"), path


def test_haproxy_logs_no_query_string():
    text = "\n".join(line.split("#", 1)[0] for line in
                     (ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text().splitlines())
    assert not re.search(r"option\s+httplog", text)
    formats = re.findall(r"log-format\s+(.+)", text)
    assert formats
    for definition in formats:
        assert not re.search(r"%(\{[^}]*\})?(r|HU|HQ)\b", definition), definition
