"""The storage suite every attachment store passes: a local folder, the
database (SQLite, and PostgreSQL when EHS_TEST_POSTGRES_URL is set) and an
S3-compatible store (moto's S3 server, started here on 127.0.0.1).

The same tests run against each store, first on the Backend interface and
then end to end through the API: what is uploaded downloads byte for byte
with the same headers, bytes move in bounded chunks, a deleted attachment
leaves nothing behind, and neither does a request that fails after the bytes
were written (issue 16: "no orphan in any backend")."""

from __future__ import annotations

import io
import os
from typing import Any

import pytest

import ehs_core.audit
from ehs_core.attachments.backends import CHUNK_SIZE, Backend, Missing
from ehs_core.attachments.backends.database import DatabaseBackend
from ehs_core.attachments.backends.local import LocalBackend
from tests.core.attachments import samples
from tests.core.attachments.test_attachments import new_site, report, upload

BACKENDS = ["local", "database", "s3"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, registry: Any, dbsession: Any, tmp_path: Any,
          monkeypatch: pytest.MonkeyPatch) -> Backend:
    """One store, empty, and the application's store for this test."""
    if request.param == "local":
        backend: Backend = LocalBackend(tmp_path / "uploads")
    elif request.param == "database":
        backend = DatabaseBackend(registry)
    else:
        backend = request.getfixturevalue("new_s3_store")()
    monkeypatch.setitem(registry, "attachments.storage", backend)
    return backend


class Source(io.BytesIO):
    """An upload that records the largest piece read from it at once."""

    largest = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.largest = max(self.largest, len(data))
        return data


def big_file(size: int) -> bytes:
    return os.urandom(size)


# --- the interface ---------------------------------------------------------------


def test_written_bytes_read_back_in_chunks(store, dbsession):
    data = big_file(2 * CHUNK_SIZE + 12345)
    source = Source(data)
    source.seek(0, 2)  # the caller may hand over a file positioned anywhere
    assert store.write(dbsession, "k1", source) == len(data)
    dbsession.flush()
    chunks = list(store.open("k1"))
    assert b"".join(chunks) == data
    assert len(chunks) >= 3
    assert max(len(chunk) for chunk in chunks) <= CHUNK_SIZE


def test_writing_never_reads_the_whole_file_at_once(store, dbsession):
    source = Source(big_file(3 * CHUNK_SIZE))
    store.write(dbsession, "k2", source)
    assert 0 < source.largest <= CHUNK_SIZE


def test_a_missing_key_is_reported_before_any_byte(store):
    with pytest.raises(Missing):
        store.open("nothing-here")


def test_keys_lists_what_was_written_and_delete_removes_it(store, dbsession):
    store.write(dbsession, "a" * 32, io.BytesIO(samples.PNG))
    store.write(dbsession, "b" * 32, io.BytesIO(samples.PDF))
    assert {"a" * 32, "b" * 32} <= set(store.keys())
    store.delete(dbsession, "a" * 32)
    store.delete(dbsession, "a" * 32)  # already gone: not an error
    assert "a" * 32 not in set(store.keys())
    with pytest.raises(Missing):
        store.open("a" * 32)
    assert b"".join(store.open("b" * 32)) == samples.PDF


# --- through the API ------------------------------------------------------------


@pytest.fixture
def reporter(make_user):
    return make_user("reporter")


@pytest.fixture
def number(admin, reporter) -> int:
    return report(reporter, new_site(admin))


def test_an_upload_downloads_byte_for_byte_with_the_same_headers(store, reporter, number):
    created = upload(reporter, number, "site photo.png", samples.PNG, "image/png").json
    assert created["size"] == len(samples.PNG)
    response = reporter.get(created["url"])
    assert response.body == samples.PNG
    assert response.headers["Content-Type"] == "image/png"
    assert response.headers["Content-Length"] == str(len(samples.PNG))
    assert response.headers["Content-Disposition"].startswith('inline; filename="site photo.png"')
    assert response.headers["Content-Security-Policy"].startswith("sandbox")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "private, no-store"
    assert "Last-Modified" in response.headers
    assert len(set(store.keys())) == 1


def test_a_deleted_attachment_leaves_nothing_in_the_store(store, reporter, number):
    created = upload(reporter, number, "photo.png", samples.PNG, "image/png").json
    assert len(set(store.keys())) == 1
    reporter.delete(f"/api/attachments/{created['id']}", status=204)
    assert set(store.keys()) == set()
    reporter.get(created["url"], status=404)


def test_a_request_that_fails_after_writing_leaves_nothing_in_the_store(store, reporter, number):
    def broken(*args, **kwargs):
        raise RuntimeError("audit store unavailable")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ehs_core.audit, "record", broken)
        upload(reporter, number, "photo.png", samples.PNG, "image/png", status=500)
    assert set(store.keys()) == set()
    assert reporter.get(f"/api/incidents/{number}").json["attachments"] == []


def test_a_file_lost_from_the_store_is_a_404_not_a_500(store, reporter, number, dbsession):
    created = upload(reporter, number, "photo.png", samples.PNG, "image/png").json
    for key in list(store.keys()):
        store.delete(dbsession, key)
    reporter.get(created["url"], status=404)
