"""Photos are held to a pixel limit read from their header, before any
decode, and decoded a few at a time: a small PNG of 13,000 x 13,000 pixels
took 7 seconds and 600 MB to upload and 1.3 GB more for its preview.

Security reference: ASVS 4.0.3 12.1.2 and ASVS 5.0 5.2.1 (a file the
service cannot process without harm is refused before it is processed)."""

from __future__ import annotations

import io
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from ehs_core.attachments import decoding
from ehs_core.attachments.models import Attachment
from ehs_core.attachments.storage import storage_backend
from ehs_core.db import utcnow
from ehs_core.incidents.models import Incident
from tests.core.attachments import samples
from tests.core.attachments.test_attachments import assert_error, detail_attachments, report, upload

MB = 1024 * 1024


@dataclass
class Cost:
    seconds: float = 0.0
    peak_growth: int = 0  # bytes the process's peak resident set grew by


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return int(re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.MULTILINE)[1])


@contextmanager
def measured() -> Iterator[Cost]:
    """The time and the growth of the peak resident memory of what runs
    inside. Linux keeps a process's peak (VmHWM) and resets it when asked
    (proc(5), /proc/pid/clear_refs, value 5), so the peak measured is this
    block's, not that of an earlier test."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    cost = Cost()
    resident = _status_kib("VmRSS")
    started = time.perf_counter()
    yield cost
    cost.seconds = time.perf_counter() - started
    cost.peak_growth = (_status_kib("VmHWM") - resident) * 1024


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return samples.png_bomb(13_000, 13_000)


@pytest.fixture
def on_disk(app_settings):
    """Names in the upload directory (shared by the session's tests, so
    tests compare snapshots)."""
    folder = Path(app_settings["ehs.upload_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    return lambda: set(os.listdir(folder))


@pytest.fixture
def number(reporter, site) -> int:
    return report(reporter, site)


@pytest.fixture
def pixel_limit(registry, monkeypatch):
    """Sets ehs.max_image_pixels for one test (the setting is read per request)."""
    return lambda value: monkeypatch.setitem(registry.settings, "ehs.max_image_pixels", value)


def keep_as_stored(registry, dbsession, number: int, data: bytes, content_type: str = "image/png") -> int:
    """A photo kept before the limit existed (or under a higher one): the
    bytes in the store and the row, without the upload's checks."""
    incident = dbsession.execute(select(Incident).where(Incident.number == number)).scalar_one()
    name = secrets.token_hex(16)
    storage_backend(registry).write(dbsession, name, io.BytesIO(data))
    item = Attachment(incident_id=incident.id, filename="huge.png", storage_name=name,
                      content_type=content_type, size=len(data), uploaded_by_id=None, created_at=utcnow())
    dbsession.add(item)
    dbsession.flush()
    return item.id


def test_a_small_png_of_169_million_pixels_is_refused_in_under_a_second_and_200_mb(reporter, number, bomb,
                                                                                   on_disk):
    assert len(bomb) < MB
    before = on_disk()
    with measured() as cost:
        response = upload(reporter, number, "IMG_0001.png", bomb, "image/png", status="*")
    assert_error(response, 413)
    assert "13000 by 13000" in response.json["error"] and "50 million" in response.json["error"]
    assert cost.seconds < 1.0, cost
    assert cost.peak_growth < 200 * MB, cost
    assert detail_attachments(reporter, number) == [] and on_disk() == before


def test_the_preview_of_a_kept_huge_png_is_refused_in_under_a_second_and_200_mb(registry, dbsession, reporter,
                                                                                number, bomb):
    attachment = keep_as_stored(registry, dbsession, number, bomb)
    with measured() as cost:
        response = reporter.get(f"/api/attachments/{attachment}/preview", status="*")
    assert_error(response, 404)
    assert cost.seconds < 1.0, cost
    assert cost.peak_growth < 200 * MB, cost
    # The file itself is still served as it was kept (nothing decodes it).
    assert reporter.get(f"/api/attachments/{attachment}").body == bomb


@pytest.mark.parametrize(("fmt", "content_type", "width", "height"), [
    ("JPEG", "image/jpeg", 13_000, 13_000),
    ("WEBP", "image/webp", 12_000, 12_000),
    ("WEBP", "image/webp", 16_383, 16_383),  # beyond Pillow's own bomb error
    ("GIF", "image/gif", 8_000, 8_000),
    ("HEIF", "image/heic", 13_000, 13_000),
], ids=["jpeg", "webp", "webp-beyond-pillow", "gif", "heic"])
def test_every_photo_type_is_refused_from_the_size_its_header_claims(reporter, number, on_disk, fmt,
                                                                     content_type, width, height):
    before = on_disk()
    with measured() as cost:
        response = upload(reporter, number, "photo", samples.claiming_size(fmt, width, height), content_type,
                          status="*")
    assert_error(response, 413)
    assert "at most 50 million pixels" in response.json["error"]
    if width * height < 178_956_970:  # beyond it Pillow refuses before telling the size
        assert f"{width} by {height}" in response.json["error"]
    assert cost.seconds < 1.0 and cost.peak_growth < 200 * MB, cost
    assert detail_attachments(reporter, number) == [] and on_disk() == before


@pytest.mark.parametrize("fmt", ["GIF", "WEBP", "PNG"])
def test_the_frames_of_an_animation_count_together(reporter, number, pixel_limit, fmt):
    pixel_limit(1000)  # ten frames of 10 x 10
    refused = upload(reporter, number, "moving", samples.animation(fmt, 11), status="*")
    assert_error(refused, 413)
    assert "11 frames" in refused.json["error"]
    upload(reporter, number, "moving", samples.animation(fmt, 10), status=201)


def test_a_photo_of_exactly_the_limit_is_kept_and_previewed(reporter, number, pixel_limit):
    pixel_limit(16 * 8)
    created = upload(reporter, number, "IMG_0002.jpg", samples.photo_with_metadata("JPEG"), "image/jpeg").json
    preview = reporter.get(f"/api/attachments/{created['id']}/preview", status=200)
    assert Image.open(io.BytesIO(preview.body)).size == (16, 8)
    assert_error(upload(reporter, number, "IMG_0003.png", samples.png(width=16, height=9), "image/png",
                        status="*"), 413)


def test_a_preview_over_a_lowered_limit_is_not_drawn(registry, reporter, number, pixel_limit):
    created = upload(reporter, number, "IMG_0004.png", samples.png(width=20, height=20), "image/png").json
    pixel_limit(100)
    assert_error(reporter.get(f"/api/attachments/{created['id']}/preview", status="*"), 404)


@pytest.fixture
def slots_taken(monkeypatch) -> Iterator[None]:
    """Every decode slot of this process held, as by long decodes in other
    threads; a request waits a short time for one."""
    monkeypatch.setattr(decoding, "WAIT_SECONDS", 0.2)
    taken = 0
    while decoding.DECODES.acquire(blocking=False):
        taken += 1
    assert taken == decoding.AT_ONCE
    try:
        yield
    finally:
        for _ in range(taken):
            decoding.DECODES.release()


def test_uploads_wait_for_a_free_decode_and_answer_503_when_none_frees(reporter, number, slots_taken,
                                                                       on_disk):
    before = on_disk()
    busy = upload(reporter, number, "IMG_0005.jpg", samples.photo_with_metadata("JPEG"), "image/jpeg",
                  status="*")
    assert_error(busy, 503)
    assert busy.headers["Retry-After"].isdigit()
    assert on_disk() == before and detail_attachments(reporter, number) == []


def test_a_preview_waits_for_a_free_decode(reporter, number, slots_taken):
    created = upload(reporter, number, "IMG_0006.pdf", samples.PDF, "application/pdf").json  # not decoded
    photo = upload(reporter, number, "IMG_0006.gif", samples.GIF, "image/gif").json  # kept as sent
    assert created["contentType"] == "application/pdf"
    assert_error(reporter.get(f"/api/attachments/{photo['id']}/preview", status="*"), 503)
    released = threading.Timer(0.05, decoding.DECODES.release)
    released.start()
    try:
        drawn = reporter.get(f"/api/attachments/{photo['id']}/preview", status=200)
        assert drawn.content_type == "image/webp"
    finally:
        released.join()
        decoding.DECODES.acquire()  # the fixture releases every slot it took
