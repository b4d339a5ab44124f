"""Jobs queued in Redis by the web process are run by `ehs worker`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import webtest

from ehs_core.config import configure
from ehs_core.testing import PUBLIC_URL, mail_text

REDIS_URL = os.environ.get("EHS_TEST_REDIS_URL")
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="EHS_TEST_REDIS_URL is not set")

INI = """
[app:main]
use = egg:ehs-service
sqlalchemy.url = {db}
ehs.plugins =
ehs.public_url = {public}
mail.host = 127.0.0.1
mail.port = {smtp}
ehs.huey_url = {redis}
ehs.password_profile = test

[loggers]
keys = root

[handlers]
keys = console

[formatters]
keys = generic

[logger_root]
level = INFO
handlers = console

[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = generic

[formatter_generic]
format = %(levelname)s [%(name)s] %(message)s
"""


def test_mail_queued_in_redis_is_delivered_by_the_worker_process(
        tmp_path: Path, app_settings, registry, dbsession, admin, smtp_server, inbox):
    redis.Redis.from_url(REDIS_URL).flushdb()
    ini = tmp_path / "worker.ini"
    ini.write_text(INI.format(db=f"sqlite:///{tmp_path / 'worker.sqlite'}", public=PUBLIC_URL,
                              smtp=smtp_server.port, redis=REDIS_URL))
    # The web side: the same app, but its job queue is the shared Redis one.
    config = configure(dict(app_settings, **{"ehs.huey_url": REDIS_URL}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    web = webtest.TestApp(config.make_wsgi_app(), extra_environ={"HTTP_ORIGIN": PUBLIC_URL})
    env = {k: v for k, v in os.environ.items() if not k.startswith("EHS_")}
    worker = subprocess.Popen([str(Path(sys.executable).parent / "ehs"), "worker", str(ini)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        web.post_json("/api/auth/magic-link", {"email": "admin@acme.test"}, status=204)
        # Nothing runs jobs in this process for a Redis queue: the mail can
        # only arrive through the worker.
        messages = inbox.wait(1, timeout=20)
        assert messages[0]["To"] == "admin@acme.test"
        assert f"{PUBLIC_URL}/auth/magic?token=" in mail_text(messages[0])
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.kill()
        time.sleep(0.1)

