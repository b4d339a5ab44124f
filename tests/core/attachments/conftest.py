"""Fixtures of the attachment tests: an S3-compatible server on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from ehs_core.attachments.backends import Backend, make_backend
from ehs_core.testing import free_port


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """An S3-compatible HTTP server on loopback for the whole session."""
    moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed")
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def s3_environ(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The backend takes everything from the standard AWS_* variables, as in production.
    for name, value in {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "test-key",
                        "AWS_SECRET_ACCESS_KEY": "test-secret", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def new_s3_store(s3_environ: None) -> Callable[[], Backend]:
    """Makes an S3 store on a new, empty bucket, configured as an operator would."""

    def make() -> Backend:
        bucket = f"ehs-{uuid.uuid4().hex[:12]}"
        backend = make_backend(f"s3://{bucket}/attachments", registry=None)
        backend.client.create_bucket(Bucket=bucket)
        return backend

    return make
