"""Attachments: the type comes from the content (never the name or the
client's Content-Type), refused files leave nothing behind, size and count
limits, the origin check on multipart uploads, safe serving (sandbox CSP,
nosniff, RFC 6266 names, generated storage names), who may see and delete,
and no orphan file when the request fails after the bytes were written.

Spec: Attachment, attachment endpoints, Limits; security reference items 26,
29, 30 and 31 and the HEIC note."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import webtest
from PIL import Image

import ehs_core.audit
from ehs_core.auth.sessions import COOKIE_NAME
from tests.core.attachments import samples

EVIL = "https://evil.test"
OCCURRED = "2024-05-01T08:15:00+02:00"


# --- helpers ---------------------------------------------------------------


def new_site(admin) -> int:
    return admin.post_json("/api/sites", {"name": "Plant North"}, status=201).json["id"]


def report(browser, site_id: int, title: str = "Oil on the floor", **extra) -> int:
    body = {"title": title, "type": "hazard", "severity": "low", "occurredAt": OCCURRED,
            "siteId": site_id, **extra}
    return browser.post_json("/api/incidents", body, status=201).json["number"]


def upload(browser, number: int, name: str, data: bytes, content_type: str = "application/octet-stream",
           status: int | str = 201, field: str = "file", **kw):
    return browser.post(f"/api/incidents/{number}/attachments",
                        upload_files=[(field, name, data, content_type)], status=status, **kw)


def detail_attachments(browser, number: int) -> list[dict]:
    return browser.get(f"/api/incidents/{number}").json["attachments"]


def timeline_actions(browser, number: int) -> list[str]:
    return [entry["action"] for entry in browser.get(f"/api/incidents/{number}/timeline").json]


def assert_error(response, status: int) -> None:
    assert response.status_int == status, response.body[:300]
    assert response.content_type == "application/json"
    assert isinstance(response.json["error"], str) and response.json["error"]


def without_origin(registry, browser) -> webtest.TestApp:
    """A client sending the same session cookie but no Origin header."""
    bare = webtest.TestApp(registry["wsgi_app"], extra_environ={"REMOTE_ADDR": "127.0.0.1"})
    bare.extra_environ["HTTP_COOKIE"] = f"{COOKIE_NAME}={browser.cookies[COOKIE_NAME]}"
    return bare


# --- fixtures --------------------------------------------------------------


@pytest.fixture
def upload_dir(app_settings) -> Path:
    path = Path(app_settings["ehs.upload_dir"])
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def on_disk(upload_dir):
    """Names currently in the upload directory (shared by the session's tests,
    so tests compare snapshots)."""
    return lambda: set(os.listdir(upload_dir))


@pytest.fixture
def site(admin) -> int:
    return new_site(admin)


@pytest.fixture
def reporter(make_user):
    return make_user("reporter")


@pytest.fixture
def supervisor(make_user):
    return make_user("supervisor")


@pytest.fixture
def outsider(make_user):
    """A reporter who neither reported the incident nor has an action on it."""
    return make_user("reporter")


@pytest.fixture
def number(reporter, site) -> int:
    return report(reporter, site)


@pytest.fixture
def assignee(make_user, supervisor, number):
    """A reporter who sees the incident through a corrective action assigned to them."""
    browser = make_user("reporter")
    supervisor.post_json(f"/api/incidents/{number}/actions",
                         {"title": "Fix the leak", "assigneeId": browser.user["id"]}, status=201)
    return browser


# --- accepted types ----------------------------------------------------------


ACCEPTED = [
    ("png", samples.PNG, {"image/png"}, (".png",)),
    ("jpeg", samples.JPEG, {"image/jpeg"}, (".jpg", ".jpeg")),
    ("gif", samples.GIF, {"image/gif"}, (".gif",)),
    ("webp", samples.WEBP, {"image/webp"}, (".webp",)),
    ("pdf", samples.PDF, {"application/pdf"}, (".pdf",)),
    ("heic", samples.HEIC, {"image/heic"}, (".heic",)),
    # A HEIF photo whose only brand is 'mif1' (some libmagic call it video/mp4).
    ("heif-mif1", samples.HEIF_MIF1, {"image/heic", "image/heif"}, (".heic", ".heif")),
]


@pytest.mark.parametrize(("kind", "data", "types", "extensions"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_accepted_file_is_typed_from_its_content(reporter, number, on_disk, kind, data, types, extensions):
    before = on_disk()
    # The name and the client's Content-Type say nothing useful.
    created = upload(reporter, number, "upload.bin", data, "application/octet-stream").json
    assert created["contentType"] in types
    assert created["filename"].startswith("upload")
    assert created["filename"].endswith(extensions)
    assert created["size"] == len(data)
    assert created["uploadedById"] == reporter.user["id"]
    assert len(on_disk() - before) == 1

    listed = detail_attachments(reporter, number)
    assert [a["id"] for a in listed] == [created["id"]]
    assert listed[0]["contentType"] == created["contentType"]

    served = reporter.get(f"/api/attachments/{created['id']}", status=200)
    assert served.body == data
    assert served.headers["Content-Type"].split(";")[0].strip() == created["contentType"]


def test_png_sent_as_pdf_is_stored_as_png(reporter, number):
    created = upload(reporter, number, "x.pdf", samples.PNG, "application/pdf").json
    assert created["contentType"] == "image/png"
    assert created["filename"].endswith(".png")
    assert ".pdf" not in created["filename"]
    served = reporter.get(f"/api/attachments/{created['id']}")
    assert served.headers["Content-Type"].startswith("image/png")
    assert served.body == samples.PNG


# --- refused types -----------------------------------------------------------


REFUSED = [
    ("html-as-png", "x.png", samples.HTML, "image/png"),
    ("svg", "drawing.svg", samples.SVG, "image/svg+xml"),
    ("svg-as-png", "x.png", samples.SVG, "image/png"),
    ("exe-as-png", "x.png", samples.EXE, "image/png"),
    ("exe", "setup.exe", samples.EXE, "application/octet-stream"),
    ("text-as-pdf", "report.pdf", samples.TEXT, "application/pdf"),
]


@pytest.mark.parametrize(("name", "data", "content_type"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])
def test_file_of_another_type_is_refused_and_nothing_is_kept(reporter, number, on_disk, name, data,
                                                             content_type):
    before = on_disk()
    response = upload(reporter, number, name, data, content_type, status="*")
    assert_error(response, 415)
    assert on_disk() == before
    assert detail_attachments(reporter, number) == []
    assert "attachment.created" not in timeline_actions(reporter, number)


def test_empty_file_is_refused(reporter, number, on_disk):
    before = on_disk()
    response = upload(reporter, number, "empty.png", b"", "image/png", status="*")
    assert 400 <= response.status_int < 500
    assert on_disk() == before
    assert detail_attachments(reporter, number) == []


# --- size and count limits -------------------------------------------------


@pytest.fixture
def one_mb_limit(registry, monkeypatch):
    """MAX_UPLOAD_MB=1 for this test (the parsed setting is read per request)."""
    monkeypatch.setitem(registry.settings, "ehs.max_upload_mb", 1)
    return 1024 * 1024


def padded_png(size: int) -> bytes:
    data = samples.png(seed=9)
    return data + b"\x00" * (size - len(data))


def test_file_of_exactly_the_limit_is_accepted(reporter, number, one_mb_limit):
    data = padded_png(one_mb_limit)
    created = upload(reporter, number, "big.png", data, "image/png").json
    assert created["size"] == one_mb_limit
    assert reporter.get(f"/api/attachments/{created['id']}").body == data


@pytest.mark.parametrize("extra", [1, 200 * 1024], ids=["one-byte-over", "far-over"])
def test_file_over_the_limit_is_refused_with_413(reporter, number, on_disk, one_mb_limit, extra):
    before = on_disk()
    response = upload(reporter, number, "big.png", padded_png(one_mb_limit + extra), "image/png",
                      status="*")
    assert_error(response, 413)
    assert on_disk() == before
    assert detail_attachments(reporter, number) == []


def test_the_21st_attachment_is_refused(reporter, number, on_disk):
    for i in range(20):
        upload(reporter, number, f"photo{i}.png", samples.png(seed=i), "image/png")
    before = on_disk()
    response = upload(reporter, number, "photo20.png", samples.png(seed=20), "image/png", status="*")
    assert_error(response, 409)
    assert on_disk() == before
    assert len(detail_attachments(reporter, number)) == 20
    assert timeline_actions(reporter, number).count("attachment.created") == 20


def test_the_limit_is_per_incident(reporter, site, number):
    for i in range(20):
        upload(reporter, number, f"photo{i}.png", samples.png(seed=i), "image/png")
    other = report(reporter, site, title="Second report")
    upload(reporter, other, "photo.png", samples.PNG, "image/png", status=201)


def test_a_deleted_attachment_frees_its_slot(reporter, number):
    ids = [upload(reporter, number, f"p{i}.png", samples.png(seed=i), "image/png").json["id"]
           for i in range(20)]
    upload(reporter, number, "p.png", samples.PNG, "image/png", status=409)
    reporter.delete(f"/api/attachments/{ids[0]}", status=204)
    upload(reporter, number, "p.png", samples.PNG, "image/png", status=201)


# --- request shape and origin ----------------------------------------------


def test_missing_file_field_is_400(reporter, number, on_disk):
    before = on_disk()
    response = upload(reporter, number, "x.png", samples.PNG, "image/png", field="photo", status="*")
    assert_error(response, 400)
    assert on_disk() == before
    assert detail_attachments(reporter, number) == []


def test_file_field_that_is_plain_text_is_400(reporter, number):
    response = reporter.post(f"/api/incidents/{number}/attachments", {"file": "not a file"}, status="*",
                             content_type="multipart/form-data")
    assert_error(response, 400)
    assert detail_attachments(reporter, number) == []


def test_non_multipart_body_is_refused(reporter, number):
    response = reporter.post_json(f"/api/incidents/{number}/attachments", {"file": "x"}, status="*")
    assert 400 <= response.status_int < 500
    assert detail_attachments(reporter, number) == []


def test_upload_without_origin_is_403(registry, reporter, number, on_disk):
    before = on_disk()
    bare = without_origin(registry, reporter)
    bare.get("/api/auth/me", status=200)  # the session itself is valid
    response = upload(bare, number, "x.png", samples.PNG, "image/png", status="*")
    assert_error(response, 403)
    assert on_disk() == before
    assert detail_attachments(reporter, number) == []


def test_upload_with_a_foreign_origin_is_403(reporter, number, on_disk):
    before = on_disk()
    response = upload(reporter, number, "x.png", samples.PNG, "image/png", status="*",
                      headers={"Origin": EVIL})
    assert_error(response, 403)
    assert on_disk() == before
    assert detail_attachments(reporter, number) == []


def test_delete_with_a_foreign_origin_is_403_and_keeps_the_file(reporter, number):
    created = upload(reporter, number, "x.png", samples.PNG, "image/png").json
    response = reporter.delete(f"/api/attachments/{created['id']}", headers={"Origin": EVIL}, status="*")
    assert_error(response, 403)
    reporter.get(f"/api/attachments/{created['id']}", status=200)


def test_upload_needs_a_session(client, number):
    response = upload(client, number, "x.png", samples.PNG, "image/png", status="*")
    assert_error(response, 401)


def test_upload_to_unknown_incident_is_404(reporter, number):
    response = upload(reporter, number + 1000, "x.png", samples.PNG, "image/png", status="*")
    assert_error(response, 404)


# --- serving -------------------------------------------------------------------


def test_served_file_is_sandboxed_and_not_sniffed(reporter, number):
    created = upload(reporter, number, "photo.png", samples.PNG, "image/png").json
    served = reporter.get(f"/api/attachments/{created['id']}", status=200)
    csp = served.headers["Content-Security-Policy"]
    assert "sandbox" in [part.strip().split(" ")[0] for part in csp.split(";")]
    assert "default-src 'none'" in csp
    assert "script-src" not in csp or "'none'" in csp
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    disposition = served.headers["Content-Disposition"]
    assert 'filename="photo.png"' in disposition
    assert "filename*=UTF-8''photo.png" in disposition


def test_pdf_is_served_as_a_download(reporter, number):
    created = upload(reporter, number, "report.pdf", samples.PDF, "application/pdf").json
    served = reporter.get(f"/api/attachments/{created['id']}", status=200)
    assert served.headers["Content-Type"].startswith("application/pdf")
    assert served.headers["Content-Disposition"].startswith("attachment")
    assert "sandbox" in served.headers["Content-Security-Policy"]


def test_non_ascii_name_is_encoded_per_rfc_6266(reporter, number):
    created = upload(reporter, number, "Prüfung.pdf", samples.PDF, "application/pdf").json
    assert created["filename"] == "Prüfung.pdf"
    disposition = reporter.get(f"/api/attachments/{created['id']}").headers["Content-Disposition"]
    assert disposition.isascii()
    assert "filename*=UTF-8''Pr%C3%BCfung.pdf" in disposition
    fallback = disposition.split('filename="', 1)[1].split('"', 1)[0]
    assert fallback.isascii() and fallback.endswith(".pdf")


def test_quotes_in_the_name_cannot_break_the_header(reporter, number):
    created = upload(reporter, number, 'a";b=c.png', samples.PNG, "image/png").json
    disposition = reporter.get(f"/api/attachments/{created['id']}").headers["Content-Disposition"]
    fallback = disposition.split('filename="', 1)[1]
    # The quoted fallback ends at the first quote that follows it, before any ';'.
    assert fallback.split('"', 1)[1].startswith("; filename*=")


@pytest.mark.parametrize("name", ["../../etc/passwd.png", "..\\..\\windows\\evil.png", "/etc/passwd.png"])
def test_path_components_are_stripped_from_the_name(reporter, number, on_disk, upload_dir, name):
    before = on_disk()
    created = upload(reporter, number, name, samples.PNG, "image/png").json
    assert "/" not in created["filename"] and "\\" not in created["filename"]
    assert ".." not in created["filename"]
    assert created["filename"].endswith(".png")
    added = on_disk() - before
    assert len(added) == 1
    stored = added.pop()
    # The bytes live under a generated name, not the uploaded one.
    assert stored != created["filename"]
    assert "passwd" not in stored and "evil" not in stored
    assert (upload_dir / stored).read_bytes() == samples.PNG
    assert not (upload_dir.parent / "etc").exists()
    disposition = reporter.get(f"/api/attachments/{created['id']}").headers["Content-Disposition"]
    assert "/" not in disposition and "%2F" not in disposition.upper()


def test_storage_names_are_generated_and_distinct(reporter, number, on_disk):
    before = on_disk()
    first = upload(reporter, number, "same.png", samples.PNG, "image/png").json
    second = upload(reporter, number, "same.png", samples.PNG, "image/png").json
    assert first["id"] != second["id"]
    added = on_disk() - before
    assert len(added) == 2
    assert "same.png" not in added
    for name in added:
        assert len(name) >= 22 and not name.startswith(".")


# --- visibility and deletion ---------------------------------------------------


@pytest.fixture
def attachment(reporter, number) -> dict:
    return upload(reporter, number, "photo.png", samples.PNG, "image/png").json


def test_outsider_gets_404_like_a_missing_id(outsider, attachment):
    missing = outsider.get(f"/api/attachments/{attachment['id'] + 100000}", status=404)
    hidden = outsider.get(f"/api/attachments/{attachment['id']}", status=404)
    assert hidden.json == missing.json
    assert samples.PNG not in hidden.body
    hidden_delete = outsider.delete(f"/api/attachments/{attachment['id']}", status=404)
    missing_delete = outsider.delete(f"/api/attachments/{attachment['id'] + 100000}", status=404)
    assert hidden_delete.json == missing_delete.json == missing.json


def test_outsider_cannot_delete_and_the_file_stays(outsider, reporter, attachment):
    outsider.delete(f"/api/attachments/{attachment['id']}", status=404)
    assert reporter.get(f"/api/attachments/{attachment['id']}", status=200).body == samples.PNG


def test_outsider_cannot_upload_to_an_invisible_incident(outsider, number, on_disk):
    before = on_disk()
    hidden = upload(outsider, number, "x.png", samples.PNG, "image/png", status="*")
    missing = upload(outsider, number + 1000, "x.png", samples.PNG, "image/png", status="*")
    assert_error(hidden, 404)
    assert hidden.json == missing.json
    assert on_disk() == before


def test_anonymous_caller_cannot_fetch(client, attachment):
    response = client.get(f"/api/attachments/{attachment['id']}", status="*")
    assert response.status_int in (401, 404)
    assert samples.PNG not in response.body


def test_supervisor_sees_every_attachment(supervisor, attachment):
    assert supervisor.get(f"/api/attachments/{attachment['id']}", status=200).body == samples.PNG


def test_uploader_deletes_and_the_file_leaves_the_disk(reporter, number, on_disk, upload_dir):
    before = on_disk()
    created = upload(reporter, number, "photo.png", samples.PNG, "image/png").json
    (stored,) = on_disk() - before
    reporter.delete(f"/api/attachments/{created['id']}", status=204)
    assert not (upload_dir / stored).exists()
    assert on_disk() == before
    missing = reporter.get(f"/api/attachments/{created['id']}", status=404)
    assert set(missing.json) == {"error"}
    assert detail_attachments(reporter, number) == []
    reporter.delete(f"/api/attachments/{created['id']}", status=404)
    assert timeline_actions(reporter, number)[-2:] == ["attachment.created", "attachment.deleted"]


def test_supervisor_deletes_anyones_attachment(supervisor, reporter, number, attachment, on_disk):
    before = on_disk()
    supervisor.delete(f"/api/attachments/{attachment['id']}", status=204)
    assert len(before - on_disk()) == 1
    reporter.get(f"/api/attachments/{attachment['id']}", status=404)
    assert detail_attachments(reporter, number) == []


def test_assignee_sees_but_cannot_delete_anothers_file(assignee, reporter, attachment, on_disk):
    before = on_disk()
    assert assignee.get(f"/api/attachments/{attachment['id']}", status=200).body == samples.PNG
    response = assignee.delete(f"/api/attachments/{attachment['id']}", status="*")
    assert_error(response, 403)
    assert on_disk() == before
    assert reporter.get(f"/api/attachments/{attachment['id']}", status=200).body == samples.PNG


def test_assignee_uploads_and_deletes_their_own_file(assignee, reporter, number):
    created = upload(assignee, number, "fix.jpg", samples.JPEG, "image/jpeg").json
    assert created["uploadedById"] == assignee.user["id"]
    reporter.delete(f"/api/attachments/{created['id']}", status=403)
    assignee.delete(f"/api/attachments/{created['id']}", status=204)
    assert detail_attachments(reporter, number) == []


def test_reporter_of_the_incident_cannot_delete_anothers_file(supervisor, reporter, number):
    created = upload(supervisor, number, "evidence.png", samples.PNG, "image/png").json
    assert reporter.get(f"/api/attachments/{created['id']}", status=200).body == samples.PNG
    reporter.delete(f"/api/attachments/{created['id']}", status=403)
    reporter.get(f"/api/attachments/{created['id']}", status=200)


def test_reporter_of_an_anonymous_report_cannot_upload_to_it(reporter, site):
    # The anonymous report is linked to nobody, so its filer no longer sees it.
    hidden = reporter.post_json("/api/incidents", {
        "title": "Anonymous", "type": "hazard", "severity": "low", "occurredAt": OCCURRED,
        "siteId": site, "anonymous": True}, status=201).json["number"]
    assert_error(upload(reporter, hidden, "x.png", samples.PNG, "image/png", status="*"), 404)


# --- no orphan files ---------------------------------------------------------


def test_failure_after_the_file_was_written_leaves_no_file_and_no_row(reporter, number, on_disk,
                                                                       monkeypatch):
    before = on_disk()

    def broken(*args, **kwargs):
        raise RuntimeError("audit store unavailable")

    monkeypatch.setattr(ehs_core.audit, "record", broken)
    response = upload(reporter, number, "photo.png", samples.PNG, "image/png", status="*")
    assert_error(response, 500)
    assert "audit store unavailable" not in response.text
    monkeypatch.undo()
    assert detail_attachments(reporter, number) == []
    leftover = on_disk() - before
    assert leftover == set(), f"orphan files in the upload dir: {sorted(leftover)}"


# --- what a photo tells about its taker --------------------------------------------------------


@pytest.mark.parametrize(("fmt", "content_type"), [
    ("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp"), ("HEIF", "image/heic"),
])
def test_gps_position_and_owner_are_removed_from_photos(reporter, number, upload_dir, fmt, content_type):
    data = samples.photo_with_metadata(fmt)
    assert b"Jane Owner" in data
    created = upload(reporter, number, "IMG_0001.jpg", data, content_type).json
    served = reporter.get(f"/api/attachments/{created['id']}").body
    assert b"Jane Owner" not in served
    assert any(path.read_bytes() == served for path in upload_dir.iterdir())  # what is kept on disk
    photo = Image.open(io.BytesIO(served))
    assert dict(photo.getexif()) == {}
    assert photo.size == (16, 8)
    assert photo.convert("RGB").getpixel((8, 4))[0] > 150  # still the red picture
    assert created["size"] == len(served)


def test_a_rotated_photo_keeps_its_orientation_once_exif_is_gone(reporter, number):
    data = samples.photo_with_metadata("JPEG", orientation=6)  # "rotate 90 degrees to view"
    created = upload(reporter, number, "IMG_0002.jpg", data, "image/jpeg").json
    photo = Image.open(io.BytesIO(reporter.get(f"/api/attachments/{created['id']}").body))
    assert photo.size == (8, 16)


@pytest.mark.parametrize("cut", [400, 600], ids=["exif-only", "truncated-pixels"])
def test_a_photo_with_metadata_that_cannot_be_decoded_is_refused(reporter, number, on_disk, cut):
    data = samples.photo_with_metadata("JPEG")
    before = on_disk()
    response = upload(reporter, number, "cut.jpg", data[:cut], "image/jpeg", status="*")
    assert_error(response, 415)
    assert on_disk() == before


def test_files_of_an_anonymous_report_keep_no_original_name(reporter, supervisor, site):
    number = report(reporter, site, anonymous=True)
    created = upload(supervisor, number, "Jane Doe - broken arm.png", samples.png(seed=3), "image/png").json
    assert created["filename"] == "attachment.png"
    assert [a["filename"] for a in detail_attachments(supervisor, number)] == ["attachment.png"]
    timeline = supervisor.get(f"/api/incidents/{number}/timeline").json
    assert "Jane Doe" not in str(timeline)
    # a named report keeps the name its reporter gave
    named = report(reporter, site)
    assert upload(reporter, named, "dock 3.png", samples.png(seed=4), "image/png").json["filename"] == \
        "dock 3.png"


# --- previews ----------------------------------------------------------------------------------


def big_photo(width: int, height: int, fmt: str = "JPEG") -> bytes:
    """A photo as a phone takes it: large, its left half red, its right half blue."""
    image = Image.new("RGB", (width, height), (220, 20, 20))
    image.paste((20, 20, 220), (width // 2, 0, width, height))
    target = io.BytesIO()
    image.save(target, format=fmt, quality=90)
    return target.getvalue()


@pytest.mark.parametrize(("fmt", "content_type"), [
    ("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp"), ("HEIF", "image/heic"),
])
def test_a_photo_has_a_small_preview_drawn_from_its_pixels(reporter, number, fmt, content_type):
    data = big_photo(2000, 1500, fmt)
    created = upload(reporter, number, "IMG_0003", data, content_type).json
    response = reporter.get(f"/api/attachments/{created['id']}/preview", status=200)
    assert response.content_type == "image/webp"
    assert len(response.body) < len(data) / 4 or len(response.body) < 20_000
    preview = Image.open(io.BytesIO(response.body))
    assert preview.format == "WEBP" and preview.size == (480, 360)
    assert preview.convert("RGB").getpixel((100, 180))[0] > 150  # the red half on the left
    assert preview.convert("RGB").getpixel((380, 180))[2] > 150  # the blue half on the right
    assert dict(preview.getexif()) == {}
    assert response.headers["Content-Security-Policy"].startswith("sandbox")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "private, no-store"


def test_a_rotated_photos_preview_stands_as_the_photo_does(reporter, number):
    data = samples.photo_with_metadata("JPEG", orientation=6)
    created = upload(reporter, number, "IMG_0004.jpg", data, "image/jpeg").json
    preview = Image.open(io.BytesIO(reporter.get(f"/api/attachments/{created['id']}/preview").body))
    assert preview.size == (8, 16)  # small photos are not enlarged


def test_a_pdf_has_no_preview(reporter, number):
    created = upload(reporter, number, "report.pdf", samples.PDF, "application/pdf").json
    assert_error(reporter.get(f"/api/attachments/{created['id']}/preview", status=404), 404)


def test_only_who_may_see_the_photo_gets_its_preview(outsider, supervisor, client, attachment):
    path = f"/api/attachments/{attachment['id']}/preview"
    hidden = outsider.get(path, status=404)
    assert hidden.json == outsider.get(f"/api/attachments/{attachment['id'] + 100000}/preview",
                                       status=404).json
    assert client.get(path, status="*").status_int in (401, 404)
    assert Image.open(io.BytesIO(supervisor.get(path, status=200).body)).size == (1, 1)


# --- a full disk ---------------------------------------------------------------


@pytest.fixture
def full_disk(registry, tmp_path, monkeypatch):
    """The local store on a 64 KiB file system of its own (tmpfs, mounted
    for the test), so a larger upload really meets ENOSPC."""
    import shutil
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    if shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs is not permitted here")
    monkeypatch.setattr(registry["attachments.storage"], "directory", mount / "uploads")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_answers_507_in_words_a_person_understands(reporter, number, full_disk):
    """Issue 35: a full disk answered 500 "Internal server error"."""
    big = samples.PDF + b"%" + b"0" * 200_000
    response = upload(reporter, number, "scan.pdf", big, "application/pdf", status="*")
    assert_error(response, 507)
    assert "no room left" in response.json["error"] and "administrator" in response.json["error"]
    assert detail_attachments(reporter, number) == []
    assert list((full_disk / "uploads").iterdir()) == []  # the partial file is gone too


# --- orphan files ---------------------------------------------------------------


def test_the_daily_sweep_removes_files_no_attachment_holds_once_a_day_old(reporter, number, registry,
                                                                          dbsession):
    """Issue 35: a worker killed between writing a file and committing left
    an orphan nothing removed."""
    import time

    from ehs_core.attachments.models import Attachment
    from ehs_core.attachments.sweep import SWEEP_JOB, sweep_orphans

    kept = upload(reporter, number, "leak.png", samples.PNG, "image/png").json
    folder = Path(registry["attachments.storage"].directory)
    orphan, young, partial = folder / ("0" * 32), folder / ("1" * 32), folder / ".abc.partial"
    for path in (orphan, young, partial):
        path.write_bytes(b"left behind")
    two_days_ago = time.time() - 2 * 86400
    held = folder / dbsession.get(Attachment, kept["id"]).storage_name
    for path in (orphan, partial, held):
        os.utime(path, (two_days_ago, two_days_ago))
    assert sweep_orphans(registry) >= 2
    assert not orphan.exists() and not partial.exists()
    assert young.exists()  # an upload whose row may not be committed yet
    young.unlink()
    assert reporter.get(kept["url"]).body  # the attachment's own file stays
    assert SWEEP_JOB in registry["periodic"]
