"""Moving attachment files between stores (`ehs storage-move`): every file
an attachment names arrives whole in the target and downloads from it once
the service is switched over; a second run copies nothing; orphans are
reported, not copied; the source is emptied only when asked."""

from __future__ import annotations

import io
from typing import Any

import pytest

from ehs_core.attachments.backends import Backend
from ehs_core.attachments.backends.database import DatabaseBackend
from ehs_core.attachments.backends.local import LocalBackend
from ehs_core.attachments.moving import move_files
from tests.core.attachments import samples
from tests.core.attachments.test_attachments import new_site, report, upload


def make(kind: str, request: pytest.FixtureRequest, registry: Any, tmp_path: Any) -> Backend:
    if kind == "local":
        return LocalBackend(tmp_path / "uploads")
    if kind == "database":
        return DatabaseBackend(registry)
    return request.getfixturevalue("new_s3_store")()


@pytest.mark.parametrize(("source_kind", "target_kind"),
                         [("local", "database"), ("database", "s3"), ("s3", "local")])
def test_every_attachment_moves_and_downloads_from_the_new_store(
        request, registry, dbsession, tmp_path, monkeypatch, make_user, admin, source_kind, target_kind):
    source = make(source_kind, request, registry, tmp_path / "a")
    target = make(target_kind, request, registry, tmp_path / "b")
    monkeypatch.setitem(registry, "attachments.storage", source)
    reporter = make_user("reporter")
    number = report(reporter, new_site(admin))
    photo = upload(reporter, number, "photo.png", samples.PNG, "image/png").json
    pdf = upload(reporter, number, "form.pdf", samples.PDF, "application/pdf").json
    source.write(dbsession, "f" * 32, io.BytesIO(b"left behind by a crash"))
    dbsession.flush()

    first = move_files(registry, target)
    assert (first.copied, first.already_there, first.missing) == (2, 0, [])
    assert first.orphans == ["f" * 32]
    assert "f" * 32 not in set(target.keys())

    monkeypatch.setitem(registry, "attachments.storage", target)
    assert reporter.get(photo["url"]).body == samples.PNG
    assert reporter.get(pdf["url"]).body == samples.PDF

    monkeypatch.setitem(registry, "attachments.storage", source)
    again = move_files(registry, target, delete_source=True)
    assert (again.copied, again.already_there, again.deleted_from_source) == (0, 2, 2)
    assert set(source.keys()) == {"f" * 32}
