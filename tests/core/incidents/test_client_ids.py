"""A comment or an upload sent again (the connection dropped before the
answer came) is stored once when it carries a clientId, and the second
answer is the first with 200 (issue 35; as reports already do)."""

from __future__ import annotations

import uuid

from ehs_core.testing import file_report, form_with, submit_with_files
from tests.core.attachments import samples


def comments_of(browser, number):
    return browser.get(f"/api/incidents/{number}/comments").json


def test_a_comment_sent_twice_with_one_client_id_is_stored_once(admin, site):
    number = file_report(admin, site).json["number"]
    key = str(uuid.uuid4())
    first = admin.post_json(f"/api/incidents/{number}/comments", {"body": "Cordoned off", "clientId": key},
                            status=201).json
    again = admin.post_json(f"/api/incidents/{number}/comments", {"body": "Cordoned off", "clientId": key},
                            status=200).json
    assert again == first
    assert [c["body"] for c in comments_of(admin, number)] == ["Cordoned off"]
    # Without a clientId, two sends are two comments, as before.
    admin.post_json(f"/api/incidents/{number}/comments", {"body": "Again"}, status=201)
    admin.post_json(f"/api/incidents/{number}/comments", {"body": "Again"}, status=201)
    assert len(comments_of(admin, number)) == 3


def test_a_used_comment_client_id_is_not_a_way_to_write_or_read_another_comment(admin, site, make_user):
    number = file_report(admin, site).json["number"]
    key = str(uuid.uuid4())
    admin.post_json(f"/api/incidents/{number}/comments", {"body": "First", "clientId": key}, status=201)
    refused = admin.post_json(f"/api/incidents/{number}/comments", {"body": "Other", "clientId": key},
                              status=422).json
    assert "different comment" in refused["error"]
    other = make_user("safety_manager")
    assert other.post_json(f"/api/incidents/{number}/comments", {"body": "First", "clientId": key},
                           status=409).json["error"] == "This clientId was already used"
    assert admin.post_json(f"/api/incidents/{number}/comments", {"body": "x", "clientId": "nope"},
                           status=400).json["issues"][0]["path"] == "clientId"
    assert [c["body"] for c in comments_of(admin, number)] == ["First"]


def test_an_upload_sent_twice_with_one_client_id_is_stored_once(admin, site, registry):
    number = file_report(admin, site).json["number"]
    key = str(uuid.uuid4())

    def send(status):
        return admin.post(f"/api/incidents/{number}/attachments", {"clientId": key},
                          upload_files=[("file", "leak.png", samples.PNG, "image/png")], status=status).json

    first = send(201)
    files = set(registry["attachments.storage"].keys())
    again = send(200)
    assert again == first
    assert [a["id"] for a in admin.get(f"/api/incidents/{number}").json["attachments"]] == [first["id"]]
    assert set(registry["attachments.storage"].keys()) == files  # the bytes were not stored again
    assert admin.post(f"/api/incidents/{number}/attachments", {"clientId": "not-a-uuid"},
                      upload_files=[("file", "leak.png", samples.PNG, "image/png")],
                      status=400).json["issues"][0]["path"] == "clientId"


def test_the_comment_form_sends_a_client_id_so_a_resent_form_is_stored_once(admin, site):
    number = file_report(admin, site).json["number"]
    page = admin.get(f"/incidents/{number}")
    form = form_with(page, f"/incidents/{number}/comments")
    assert uuid.UUID(form["clientId"].value)
    form["body"] = "Spill kit used"
    form.submit(status=302)
    form.submit(status=302)  # the browser sent it again
    assert [c["body"] for c in comments_of(admin, number)] == ["Spill kit used"]
    fresh = form_with(admin.get(f"/incidents/{number}"), f"/incidents/{number}/comments")
    assert fresh["clientId"].value != form["clientId"].value  # each form its own


def test_the_upload_form_sends_a_client_id_so_a_resent_form_stores_its_files_once(admin, site):
    number = file_report(admin, site).json["number"]
    form = form_with(admin.get(f"/incidents/{number}"), f"/incidents/{number}/attachments")
    assert uuid.UUID(form["clientId"].value)
    files = [("file", "a.png", samples.PNG, "image/png"), ("file", "b.pdf", samples.PDF, "application/pdf")]
    for _ in range(2):  # the browser sent it again
        submit_with_files(admin, form, files, status=302)
    assert sorted(a["filename"] for a in admin.get(f"/api/incidents/{number}").json["attachments"]) == [
        "a.png", "b.pdf"]
