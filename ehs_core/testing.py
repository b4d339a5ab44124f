"""pytest plugin shared by the core's and the plugins' tests.

It builds the application once per test session on a fresh database brought
to head by alembic (SQLite always; PostgreSQL too when EHS_TEST_POSTGRES_URL
is set), wraps every test in an outer transaction that is rolled back, gives
webtest clients that speak to the WSGI app end to end, and a real SMTP server
(aiosmtpd) whose inbox the tests read. The helpers most tests need first
(sites, reports, clients of each role, a clean environment) live here too, so
the core's and the plugins' tests share them instead of copying them.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email import message_from_bytes
from email.message import Message
from typing import Any

import email_validator
import pytest
import sqlalchemy as sa
import webtest
from aiosmtpd.controller import Controller
from sqlalchemy.engine import make_url
from sqlalchemy.orm import sessionmaker

from ehs_core import refdata

# The tests' people have addresses under `.test` (RFC 6761), which the
# service refuses to keep in production (auth/schemas.py): email-validator's
# documented switch for test environments allows that name and no other change.
email_validator.TEST_ENVIRONMENT = True

PUBLIC_URL = "http://ehs.test"
PASSWORD = "correct horse battery staple"  # noqa: S105 (test accounts)
# An instant written with a non-UTC offset; it must come back written the same way.
OCCURRED = "2026-01-01T08:00:00+02:00"


def backends() -> list[str]:
    return ["sqlite"] + (["postgresql"] if os.environ.get("EHS_TEST_POSTGRES_URL") else [])


# --- SMTP ---------------------------------------------------------------


class Inbox:
    """Messages received by the test SMTP server."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.recipients: list[str] = []  # envelope recipients (RCPT TO), as the server saw them
        self.refused: set[str] = set()  # addresses answered "550 no such mailbox"
        self.lock = threading.Lock()
        # Runs the jobs that have come due (retries) while a test waits for
        # mail: the test kit's jobs run in the test's thread (`InlineRunner`).
        self.run_due: Callable[[], None] = lambda: None
        self.delay = 0.0  # seconds the server takes to answer DATA (a slow SMTP server)

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if address in self.refused:
            return "550 5.1.1 No such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.delay:
            await asyncio.sleep(self.delay)
        with self.lock:
            self.messages.append(message_from_bytes(envelope.content))
            self.recipients.extend(envelope.rcpt_tos)
        return "250 OK"

    def clear(self) -> None:
        with self.lock:
            self.messages.clear()
            self.recipients.clear()
        self.refused.clear()
        self.delay = 0.0

    def wait(self, count: int = 1, timeout: float = 10.0) -> list[Message]:
        """Wait until at least `count` messages arrived (mail goes out after
        commit, from the job runner)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    return list(self.messages)
            self.run_due()
            time.sleep(0.02)
        raise AssertionError(f"expected {count} message(s), got {len(self.messages)}")

    def settle(self, seconds: float = 0.3) -> list[Message]:
        """Give after-commit mail a moment, then return what arrived."""
        time.sleep(seconds)
        self.run_due()
        with self.lock:
            return list(self.messages)

    def to(self, address: str) -> list[Message]:
        with self.lock:
            return [m for m in self.messages if m["To"] == address]


def mail_part(message: Message, subtype: str = "plain") -> str:
    """The decoded text/plain (or text/html) part of a received mail."""
    for part in message.walk():
        if part.get_content_type() == f"text/{subtype}":
            payload = part.get_payload(decode=True)
            return payload.decode(part.get_content_charset() or "utf-8")
    raise AssertionError(f"no text/{subtype} part in {message['Subject']!r}")


def mail_text(message: Message) -> str:
    return mail_part(message, "plain")


def mail_html(message: Message) -> str:
    return mail_part(message, "html")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SMTPServer:
    def __init__(self) -> None:
        self.inbox = Inbox()
        self.port = free_port()
        self.controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture(scope="session")
def smtp_server() -> Iterator[SMTPServer]:
    server = SMTPServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def inbox(smtp_server: SMTPServer, registry: Any) -> Iterator[Inbox]:
    """The SMTP server's messages, starting empty (an earlier test's jobs
    were rolled back with its transaction)."""
    smtp_server.inbox.clear()
    runner = registry.get("job_runner")
    smtp_server.inbox.run_due = runner.wait_idle if runner is not None else (lambda: None)
    yield smtp_server.inbox
    if smtp_server.controller is None:  # a test stopped it; restart for the next
        smtp_server.start()


# --- database -----------------------------------------------------------


@contextmanager
def postgres_database(prefix: str) -> Iterator[str]:
    """The URL of an empty database of its own on the test PostgreSQL server
    (`EHS_TEST_POSTGRES_URL`), dropped afterwards whatever holds it."""
    server = make_url(os.environ["EHS_TEST_POSTGRES_URL"]).set(drivername="postgresql+psycopg")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(scope="session", params=backends())
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite'}"
        return
    with postgres_database("ehs_test") as url:
        yield url


def base_settings(database_url: str, smtp_port: int, upload_dir: str) -> dict[str, Any]:
    return {
        "sqlalchemy.url": database_url,
        "ehs.auto_migrate": "false",
        "ehs.plugins": os.environ.get("EHS_TEST_PLUGINS", "osha kiosk analytics"),
        "ehs.public_url": PUBLIC_URL,
        "mail.host": "127.0.0.1",
        "mail.port": str(smtp_port),
        "mail.default_sender": "ehs@ehs.test",
        "ehs.huey_url": "",
        "ehs.upload_dir": upload_dir,
        "ehs.max_upload_mb": "10",
        "ehs.timezone": "UTC",
        "ehs.session_secure": "false",
        "ehs.password_profile": "test",
        "ehs.mail_retry_delay": "1",
        "ehs.mail_retries": "5",
    }


@pytest.fixture(scope="session")
def app_settings(database_url: str, smtp_server: SMTPServer,
                 tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return base_settings(database_url, smtp_server.port, str(tmp_path_factory.mktemp("uploads")))


@pytest.fixture(scope="session")
def registry(app_settings: dict[str, Any], monkeypatch_session: pytest.MonkeyPatch) -> Iterator[Any]:
    from ehs_core.config import configure
    from ehs_core.jobs import start_in_process_runner
    from ehs_core.migrations import upgrade

    for key in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch_session.delenv(key)
    monkeypatch_session.delenv("MAX_UPLOAD_MB", raising=False)
    monkeypatch_session.delenv("TZ", raising=False)
    config = configure(dict(app_settings))
    upgrade(config.registry)
    config.registry["wsgi_app"] = config.make_wsgi_app()
    # Jobs run in the thread of the request that queued them, after its
    # commit, on the test's connection (`InlineRunner`); never the clock's.
    runner = start_in_process_runner(config.registry, periodic=False, inline=True)
    yield config.registry
    if runner is not None:
        runner.stop()
    config.registry["db.engine"].dispose()


@pytest.fixture(scope="session")
def monkeypatch_session() -> Iterator[pytest.MonkeyPatch]:
    patcher = pytest.MonkeyPatch()
    yield patcher
    patcher.undo()


@pytest.fixture
def dbsession(registry: Any) -> Iterator[sa.orm.Session]:
    """A session on the test's outer transaction; the app's requests run in
    savepoints inside it, so they commit for real and everything is rolled
    back after the test."""
    engine = registry["db.engine"]
    connection = engine.connect()
    outer = connection.begin()
    factory = sessionmaker(bind=connection, join_transaction_mode="create_savepoint",
                           expire_on_commit=False)
    original = registry["dbsession_factory"]
    registry["dbsession_factory"] = factory
    refdata.forget(registry)
    session = factory()
    yield session
    session.close()
    registry["dbsession_factory"] = original
    outer.rollback()
    connection.close()
    # The rollback takes the reference version back: the values cached under
    # the numbers this test used must go with it.
    refdata.forget(registry)


# --- HTTP clients ------------------------------------------------------


class Client(webtest.TestApp):
    """A browser at the site's public address: its own cookie jar, sending
    the site's Origin and Host (redirects lead to the public address)."""

    def __init__(self, app: Any, origin: str = PUBLIC_URL) -> None:
        super().__init__(app, extra_environ={"HTTP_ORIGIN": origin, "REMOTE_ADDR": "127.0.0.1",
                                             "HTTP_HOST": PUBLIC_URL.split("://", 1)[1]})

    def login(self, email: str, password: str = PASSWORD) -> dict:
        return self.post_json("/api/auth/login", {"email": email, "password": password}).json


@pytest.fixture
def new_client(registry: Any, dbsession: Any) -> Callable[..., Client]:
    def make(**kw: Any) -> Client:
        return Client(registry["wsgi_app"], **kw)
    return make


@pytest.fixture
def client(new_client: Callable[..., Client]) -> Client:
    return new_client()


@pytest.fixture
def admin(new_client: Callable[..., Client], inbox: Inbox) -> Client:
    """A client signed in as the organization's first admin."""
    browser = new_client()
    browser.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                     "email": "admin@acme.test", "password": PASSWORD})
    return browser


@pytest.fixture
def make_user(admin: Client, new_client: Callable[..., Client]) -> Callable[..., Client]:
    """Create a user of a role (through the API) and return a signed-in client."""
    counter = iter(range(1, 10_000))

    def make(role: str = "reporter", name: str | None = None, email: str | None = None) -> Client:
        n = next(counter)
        email = email or f"{role}{n}@acme.test"
        created = admin.post_json("/api/users", {"name": name or f"{role.title()} {n}",
                                                 "email": email, "role": role,
                                                 "password": PASSWORD}).json
        browser = new_client()
        browser.login(email)
        browser.user = created["user"]
        return browser

    return make


@pytest.fixture
def reporter(make_user: Callable[..., Client]) -> Client:
    """A client signed in as a reporter (`reporter.user` is their JSON)."""
    return make_user("reporter")


@pytest.fixture
def supervisor(make_user: Callable[..., Client]) -> Client:
    return make_user("supervisor")


@pytest.fixture
def safety_manager(make_user: Callable[..., Client]) -> Client:
    return make_user("safety_manager")


# --- data through the API ---------------------------------------------------


def form_with(page: webtest.TestResponse, action: str, method: str | None = None) -> webtest.Form:
    """The form of a page that posts to `action` (the page's own forms as a
    browser sees them), e.g. `form_with(page, "/incidents/7/comments")`."""
    for form in page.forms.values():
        if form.action == action and (method is None or form.method.lower() == method.lower()):
            return form
    raise AssertionError(f"no form posting to {action}: {[f.action for f in page.forms.values()]}")


def submit_with_files(browser: webtest.TestApp, form: webtest.Form, files: list[tuple[str, ...]],
                      status: int | str) -> webtest.TestResponse:
    """Submit a form with files as a browser sends it (multipart)."""
    names = {f[0] for f in files}
    fields = [(k, v) for k, v in form.submit_fields() if k not in names]
    return browser.post(form.action, fields, upload_files=files, status=status)


def new_site(browser: webtest.TestApp, name: str = "Plant North", **body: Any) -> dict[str, Any]:
    """Create a site as `browser` (an admin) and return its JSON."""
    return browser.post_json("/api/sites", {"name": name, **body}, status=201).json


def new_area(browser: webtest.TestApp, site_id: int, name: str = "Assembly", **body: Any) -> dict[str, Any]:
    return browser.post_json(f"/api/sites/{site_id}/areas", {"name": name, **body}, status=201).json


def report_body(site_id: int, **fields: Any) -> dict[str, Any]:
    """A valid report on `site_id`; `fields` add to or replace the defaults."""
    return {"title": "Oil on the floor", "type": "hazard", "severity": "low", "occurredAt": OCCURRED,
            "siteId": site_id, **fields}


def file_report(browser: webtest.TestApp, site_id: int, status: int | str = 201, **fields: Any) -> Any:
    """POST a report through the JSON API; returns the response."""
    return browser.post_json("/api/incidents", report_body(site_id, **fields), status=status)


@pytest.fixture
def site(admin: Client) -> int:
    """The id of a site the admin created."""
    return new_site(admin)["id"]


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No EHS_* (except EHS_TEST_*), MAX_UPLOAD_MB or TZ from the outside, so
    settings come from the ini values a test gives."""
    for name in list(os.environ):
        if name.startswith("EHS_") and not name.startswith("EHS_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    monkeypatch.delenv("TZ", raising=False)


# --- query discipline ----------------------------------------------------


class StatementCounter:
    """Counts the SQL statements the application sends while active."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.count = 0
        self.statements: list[str] = []

    def _count(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.count += 1
        self.statements.append(statement)

    def __enter__(self) -> StatementCounter:
        self.count = 0
        self.statements = []
        sa.event.listen(self.engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *exc: Any) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._count)


@pytest.fixture
def count_statements(registry: Any, dbsession: Any) -> Callable[[], StatementCounter]:
    """`with count_statements() as counted: ...; counted.count`"""
    return lambda: StatementCounter(dbsession.get_bind().engine)
