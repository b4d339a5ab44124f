"""An application of its own for the webhook tests (its own database, real
commits, its job runner delivering after commit) and a real HTTP receiver on
loopback that can be taken down and brought back on the same port."""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ehs_core.testing import PASSWORD, Client, backends, base_settings, free_port, postgres_database


class Receiver:
    """Records every POST; answers `status` (200 unless told otherwise).
    With `tls` (a certificate and key file), over https as `localhost`."""

    def __init__(self, tls: tuple[str, str] | None = None) -> None:
        self.port = free_port()
        self.received: list[dict[str, Any]] = []
        self.status = 200
        self.server: ThreadingHTTPServer | None = None
        self.lock = threading.Lock()
        self.tls = tls

    @property
    def url(self) -> str:
        if self.tls:
            return f"https://localhost:{self.port}/hooks/ehs?src=tests"
        return f"http://127.0.0.1:{self.port}/hooks/ehs?src=tests"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                with receiver.lock:
                    receiver.received.append({"path": self.path, "headers": dict(self.headers.items()),
                                              "body": body})
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def wait(self, count: int, timeout: float = 15) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        raise AssertionError(f"{len(self.received)} of {count} webhooks arrived: "
                             f"{[json.loads(r['body'])['type'] for r in self.received]}")

    def payloads(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(r["body"]) for r in self.received]


def self_signed(directory: Path, name: str = "localhost") -> tuple[str, str]:
    """A certificate for `name` (and its key), its own issuer: (cert, key)."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = directory / "receiver.pem", directory / "receiver.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_file), str(key_file)


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[Receiver]:
    receiving = Receiver(tls=self_signed(tmp_path))
    receiving.start()
    yield receiving
    receiving.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiving = Receiver()
    receiving.start()
    yield receiving
    receiving.stop()


class HooksApp:
    def __init__(self, app: Any, registry: Any, runner: Any) -> None:
        self.app, self.registry, self.runner = app, registry, runner

    def client(self) -> Client:
        return Client(self.app)

    def admin(self) -> Client:
        browser = self.client()
        browser.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                         "email": "admin@acme.test", "password": PASSWORD})
        return browser

    def user(self, admin: Client, role: str) -> Client:
        email = f"{role}@acme.test"
        admin.post_json("/api/users", {"name": f"{role.title()} Person", "email": email, "role": role,
                                       "password": PASSWORD})
        browser = self.client()
        browser.login(email)
        return browser

    def settle(self, timeout: float = 15) -> None:
        """Every job of the outbox due so far has run to its end (the sends
        after commit), claimed or not yet."""
        from sqlalchemy import func, select

        from ehs_core.db import utcnow
        from ehs_core.jobs.models import PENDING, OutboxJob

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.runner.wake()
            with self.registry["dbsession_factory"]() as session:
                running = session.execute(select(func.count()).select_from(OutboxJob).where(
                    OutboxJob.status == PENDING, OutboxJob.due_at <= utcnow())).scalar_one()
            if not running:
                return
            time.sleep(0.05)
        raise AssertionError("the outbox's jobs did not finish")


@pytest.fixture(params=backends())
def hooks_app(request: pytest.FixtureRequest, tmp_path: Path, smtp_server: Any,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksApp]:
    """Webhook settings as an operator running them on loopback would set
    them (the tests set EHS_WEBHOOK_ALLOW_PRIVATE; it is false by default);
    retries a second apart, two tries, switched off after two failures."""
    from ehs_core.config import configure
    from ehs_core.jobs import start_in_process_runner
    from ehs_core.migrations import upgrade

    for name in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch.delenv(name)
    with (postgres_database("hooks") if request.param == "postgresql"
          else nullcontext(f"sqlite:///{tmp_path}/hooks.sqlite")) as url:
        settings = base_settings(url, smtp_server.port, str(tmp_path / "uploads"))
        settings.update({"webhooks.allow_private": "true", "webhooks.http_hosts": "127.0.0.1",
                         "webhooks.retry_delay": "1", "webhooks.max_attempts": "2",
                         "webhooks.disable_after": "2"})
        config = configure(settings)
        upgrade(config.registry)
        runner = start_in_process_runner(config.registry, periodic=False)
        try:
            yield HooksApp(config.make_wsgi_app(), config.registry, runner)
        finally:
            if runner is not None:
                runner.stop()
            config.registry["db.engine"].dispose()
