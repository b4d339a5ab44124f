"""`ehs worker` runs the jobs the web process writes in the database: woken
through Redis when one is configured (else polling); on SIGTERM it finishes
the mail in hand before it exits; killed with SIGKILL, the mail it held is
sent again once its lease ends, recognisable by the same Message-ID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
import webtest

from ehs_core.config import configure
from ehs_core.migrations import upgrade
from ehs_core.testing import PASSWORD, PUBLIC_URL, base_settings, mail_text

REDIS_URL = os.environ.get("EHS_TEST_REDIS_URL")

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


class Site:
    """The web side on a database file of its own (the worker must see its
    commits), with an admin, and a way to start `ehs worker` on it."""

    def __init__(self, tmp_path: Path, smtp_port: int, redis: str, monkeypatch) -> None:
        for key in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
            monkeypatch.delenv(key)
        self.db = f"sqlite:///{tmp_path / 'jobs.sqlite'}"
        self.ini = tmp_path / "worker.ini"
        self.ini.write_text(INI.format(db=self.db, public=PUBLIC_URL, smtp=smtp_port, redis=redis))
        settings = base_settings(self.db, smtp_port, str(tmp_path / "uploads"))
        config = configure(dict(settings, **{"ehs.huey_url": redis, "ehs.plugins": ""}))
        upgrade(config.registry)
        self.registry = config.registry
        self.web = webtest.TestApp(config.make_wsgi_app(), extra_environ={"HTTP_ORIGIN": PUBLIC_URL})
        self.web.post_json("/api/setup", {"organizationName": "Acme", "name": "Ada",
                                          "email": "admin@acme.test", "password": PASSWORD}, status=201)
        self.engine = sa.create_engine(self.db)
        self.workers: list[subprocess.Popen] = []

    def worker(self, **env: str) -> subprocess.Popen:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("EHS_")} | env
        process = subprocess.Popen([str(Path(sys.executable).parent / "ehs"), "worker", str(self.ini),
                                    "--workers", "1"], env=environ, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        self.workers.append(process)
        return process

    def job(self) -> tuple[str, int]:
        with self.engine.connect() as connection:
            return tuple(connection.execute(sa.text(
                "SELECT status, attempts FROM outbox_jobs WHERE job = 'mail.deliver'")).one())

    def wait_claimed(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.job()[1] >= 1:
                return
            time.sleep(0.05)
        raise AssertionError("no worker claimed the job")

    def close(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                process.kill()
                process.wait(10)
        self.engine.dispose()
        self.registry["db.engine"].dispose()


@pytest.fixture(params=["polling", "redis"])
def site(request, tmp_path, smtp_server, inbox, monkeypatch):
    if request.param == "redis" and not REDIS_URL:
        pytest.skip("EHS_TEST_REDIS_URL is not set")
    built = Site(tmp_path, smtp_server.port, REDIS_URL if request.param == "redis" else "", monkeypatch)
    yield built
    built.close()


def test_mail_written_by_the_web_process_is_delivered_by_the_worker(site, inbox):
    site.worker()
    site.web.post_json("/api/auth/magic-link", {"email": "admin@acme.test"}, status=204)
    [message] = inbox.wait(1, timeout=20)
    assert message["To"] == "admin@acme.test"
    assert f"{PUBLIC_URL}/auth/magic?token=" in mail_text(message)
    assert message["Message-ID"]
    deadline = time.monotonic() + 10
    while site.job()[0] != "done" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert site.job() == ("done", 1)


def test_sigterm_mid_send_finishes_the_mail_in_hand_then_exits(site, inbox):
    inbox.delay = 2.0  # the SMTP server takes its time with DATA
    worker = site.worker()
    site.web.post_json("/api/auth/magic-link", {"email": "admin@acme.test"}, status=204)
    site.wait_claimed()
    time.sleep(0.5)  # now talking to the SMTP server
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(20) == 0
    assert len(inbox.messages) == 1
    assert site.job() == ("done", 1)


def test_sigkill_mid_send_leaves_the_mail_to_be_sent_again_with_the_same_message_id(site, inbox):
    inbox.delay = 2.0
    worker = site.worker(EHS_JOB_LEASE="2")
    site.web.post_json("/api/auth/magic-link", {"email": "admin@acme.test"}, status=204)
    site.wait_claimed()
    time.sleep(0.5)
    worker.kill()
    worker.wait(10)
    inbox.delay = 0
    status, attempts = site.job()
    assert (status, attempts) == ("pending", 1)
    site.worker(EHS_JOB_LEASE="2")  # another worker takes the row once the lease is over
    deadline = time.monotonic() + 20
    while site.job()[0] != "done" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert site.job() == ("done", 2)
    messages = inbox.settle(0.5)
    assert 1 <= len(messages) <= 2  # at least once; a repeat only after the kill
    assert len({m["Message-ID"] for m in messages}) == 1
