"""Reports filed through a link: the multipart body, anonymity, channel and
kiosk on the incident, files (at most 5, type from content, refused files
listed without losing the report), retries with a clientId, the 30 per 10
minutes cap per link, and the notice of serious reports.

Spec: Reporting links endpoints, Incident (channel, kiosk), Limits, Events;
security reference items 25, 29 and 30."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest
from sqlalchemy import select

import ehs_core.auth.ratelimit
from ehs_core.attachments.models import Attachment
from ehs_core.audit.models import AuditEntry
from ehs_core.incidents.models import Incident
from ehs_core.testing import mail_text
from tests.core.attachments import samples
from tests.plugins.kiosk.support import (
    HEADER,
    REPORTS,
    assert_error,
    attachment_count,
    file_report,
    incident_count,
    new_area,
    new_link,
    new_site,
    report_body,
    stored_files,
)

PNG = ("photo.png", samples.PNG, "image/png")


@pytest.fixture
def site(admin) -> int:
    return new_site(admin)


@pytest.fixture
def link(admin) -> dict:
    return new_link(admin, "Gate tablet")


@pytest.fixture
def token(link) -> str:
    return link["token"]


@pytest.fixture
def upload_dir(app_settings) -> str:
    return app_settings["ehs.upload_dir"]


# --- a report ---------------------------------------------------------------------------------


def test_a_report_without_a_name_is_anonymous_and_marked_as_from_the_link(admin, client, dbsession,
                                                                           site, link, token):
    area = new_area(admin, site)
    body = report_body(site, areaId=area, locationDetail="By door 3", description="A puddle of oil",
                       immediateAction="Put up a sign")
    response = file_report(client, token, body, status=201)
    # The code: tests/plugins/kiosk/test_followup.py.
    assert response.json == {"reference": "INC-0001", "failedFiles": [],
                             "followUpCode": response.json["followUpCode"]}

    incident = admin.get("/api/incidents/1").json
    assert incident["title"] == "Oil on the floor"
    assert (incident["type"], incident["severity"], incident["status"]) == ("hazard", "low", "reported")
    assert (incident["siteId"], incident["areaId"]) == (site, area)
    assert incident["locationDetail"] == "By door 3"
    assert incident["description"] == "A puddle of oil"
    assert incident["immediateAction"] == "Put up a sign"
    assert incident["occurredAt"] == "2024-05-01T08:15:00+02:00"
    assert incident["anonymous"] is True
    assert incident["reporter"] is None
    assert incident["channel"] == "kiosk"
    assert incident["kiosk"]["id"] == link["id"]
    assert incident["kiosk"]["name"] == "Gate tablet"
    assert incident["kiosk"].get("reporterName") is None

    listed = admin.get("/api/incidents").json["items"][0]
    assert listed["channel"] == "kiosk"
    assert (listed["kiosk"]["id"], listed["kiosk"]["name"]) == (link["id"], "Gate tablet")

    timeline = admin.get("/api/incidents/1/timeline").json
    assert timeline[0]["action"] == "incident.created"
    assert all(entry["actor"] is None for entry in timeline)
    stored = dbsession.execute(select(Incident)).scalar_one()
    assert stored.reporter_id is None and stored.anonymous is True
    actors = dbsession.execute(select(AuditEntry.actor_id)).scalars().all()
    assert actors and set(actors) == {None}


def test_the_link_name_shown_on_an_incident_follows_a_rename(admin, client, site, link, token):
    file_report(client, token, report_body(site))
    admin.patch_json(f"/api/kiosks/{link['id']}", {"name": "North gate"}, status=200)
    assert admin.get("/api/incidents/1").json["kiosk"]["name"] == "North gate"


def test_a_report_with_a_name_is_not_anonymous_and_keeps_the_name(admin, client, dbsession, site, token):
    file_report(client, token, report_body(site, reporterName="Pat Doe"), status=201)
    incident = admin.get("/api/incidents/1").json
    assert incident["anonymous"] is False
    assert incident["reporter"] is None  # no user account is behind a link
    assert incident["channel"] == "kiosk"
    assert "Pat Doe" in json.dumps(incident)
    assert admin.get("/api/incidents/1/timeline").json[0]["actor"] is None


@pytest.mark.parametrize("name", [None, ""])
def test_an_empty_or_null_name_still_makes_the_report_anonymous(admin, client, site, token, name):
    file_report(client, token, report_body(site, reporterName=name), status=201)
    incident = admin.get("/api/incidents/1").json
    assert incident["anonymous"] is True
    assert incident["reporter"] is None


def test_a_link_cannot_claim_anonymous_false_nor_a_reporter(admin, make_user, client, site, token):
    reporter = make_user("reporter")
    body = report_body(site, anonymous=False, reporterId=reporter.user["id"], status="closed")
    response = file_report(client, token, body, status=400)
    issues = {issue["path"]: issue["message"] for issue in response.json["issues"]}
    assert set(issues) == {"anonymous", "reporterId", "status"}
    assert "reporterName" in issues["anonymous"]
    assert admin.get("/api/incidents").json["items"] == []


def test_reports_filed_on_the_web_are_not_marked_as_from_a_link(admin, client, site, token):
    admin.post_json("/api/incidents", report_body(site, title="From the web"), status=201)
    file_report(client, token, report_body(site, title="From the kiosk"), status=201)
    items = {item["title"]: item for item in admin.get("/api/incidents").json["items"]}
    assert items["From the web"]["channel"] != "kiosk"
    assert items["From the web"]["kiosk"] is None
    assert items["From the kiosk"]["channel"] == "kiosk"
    assert admin.get("/api/incidents/1").json["kiosk"] is None


def test_reports_share_the_organizations_numbering(admin, client, site, token):
    admin.post_json("/api/incidents", report_body(site), status=201)
    assert file_report(client, token, report_body(site)).json["reference"] == "INC-0002"
    assert admin.post_json("/api/incidents", report_body(site), status=201).json["reference"] == "INC-0003"


def test_the_report_part_may_be_sent_as_a_json_file_part(admin, client, site, token):
    part = ("report", "report.json", json.dumps(report_body(site)).encode(), "application/json")
    response = client.post(REPORTS, upload_files=[part, ("files", *PNG)], headers={HEADER: token}, status=201)
    assert response.json["reference"] == "INC-0001"
    assert len(admin.get("/api/incidents/1").json["attachments"]) == 1


# --- validation: nothing is stored ---------------------------------------------------------------


@pytest.mark.parametrize("missing", ["title", "type", "severity", "occurredAt", "siteId"])
def test_required_fields(client, dbsession, site, token, missing):
    body = report_body(site)
    del body[missing]
    response = file_report(client, token, body, files=[PNG], status=400)
    assert_error(response, 400)
    assert missing in {issue["path"] for issue in response.json["issues"]}
    assert incident_count(dbsession) == 0
    assert attachment_count(dbsession) == 0


@pytest.mark.parametrize(("field", "value"), [("type", "fire"), ("severity", "extreme"), ("title", ""),
                                              ("occurredAt", "2024-05-01T08:15:00"),
                                              ("occurredAt", "2999-01-01T00:00:00Z"),
                                              ("reporterName", "x" * 201), ("clientId", "not-a-uuid")])
def test_field_values_are_checked(client, dbsession, site, token, field, value):
    response = file_report(client, token, report_body(site, **{field: value}), status=400)
    assert_error(response, 400)
    assert incident_count(dbsession) == 0


@pytest.mark.parametrize("report", ["not json", "[1, 2]", "\"text\""])
def test_a_malformed_report_part_is_refused(client, dbsession, token, report):
    assert_error(file_report(client, token, report, files=[PNG], status=400), 400)
    assert incident_count(dbsession) == 0


def test_a_missing_report_part_is_refused(client, dbsession, token, upload_dir):
    before = stored_files(upload_dir)
    response = client.post(REPORTS, upload_files=[("files", *PNG)], headers={HEADER: token}, status=400)
    assert_error(response, 400)
    assert incident_count(dbsession) == 0
    assert stored_files(upload_dir) == before


def test_a_report_must_be_multipart(client, dbsession, site, token):
    response = client.post_json(REPORTS, report_body(site), headers={HEADER: token}, status="*")
    assert 400 <= response.status_int < 500
    assert incident_count(dbsession) == 0


def test_unknown_or_archived_locations_are_refused(admin, client, dbsession, site, token):
    other = new_site(admin, "Plant South")
    foreign_area = new_area(admin, other, "Their dock")
    old_area = new_area(admin, site, "Old shed")
    admin.patch_json(f"/api/areas/{old_area}", {"archived": True}, status=200)
    closed = new_site(admin, "Closed plant")
    admin.patch_json(f"/api/sites/{closed}", {"archived": True}, status=200)
    for body in (report_body(9999), report_body(closed), report_body(site, areaId=foreign_area),
                 report_body(site, areaId=old_area), report_body(site, areaId=99999)):
        assert_error(file_report(client, token, body, status=400), 400)
    assert incident_count(dbsession) == 0


def test_a_link_tied_to_a_site_reports_only_on_that_site(admin, client, dbsession, site):
    other = new_site(admin, "Plant South")
    link = new_link(admin, "North gate", site_id=site)
    response = file_report(client, link["token"], report_body(other), status=400)
    assert "siteId" in {issue["path"] for issue in response.json["issues"]}
    assert incident_count(dbsession) == 0
    area = new_area(admin, site)
    file_report(client, link["token"], report_body(site, areaId=area), status=201)
    assert admin.get("/api/incidents/1").json["siteId"] == site


# --- files ---------------------------------------------------------------------------------------


def test_up_to_five_files_are_attached(admin, client, dbsession, site, token):
    files = [(f"photo{n}.png", samples.png(seed=n), "image/png") for n in range(5)]
    response = file_report(client, token, report_body(site, reporterName="Kim Lee"), files=files, status=201)
    assert response.json["failedFiles"] == []
    attachments = admin.get("/api/incidents/1").json["attachments"]
    assert sorted(item["filename"] for item in attachments) == [f"photo{n}.png" for n in range(5)]
    assert {item["contentType"] for item in attachments} == {"image/png"}
    assert {item["uploadedById"] for item in attachments} == {None}
    for item, (_, data, _) in zip(sorted(attachments, key=lambda a: a["filename"]), files, strict=True):
        assert admin.get(item["url"]).body == data
    assert attachment_count(dbsession) == 5


def test_six_files_are_refused_and_nothing_is_stored(admin, client, dbsession, site, token, upload_dir):
    before = stored_files(upload_dir)
    files = [(f"photo{n}.png", samples.png(seed=n), "image/png") for n in range(6)]
    response = file_report(client, token, report_body(site), files=files, status=400)
    assert_error(response, 400)
    assert incident_count(dbsession) == 0
    assert attachment_count(dbsession) == 0
    assert stored_files(upload_dir) == before
    # the number was not used up either
    assert file_report(client, token, report_body(site)).json["reference"] == "INC-0001"


def test_six_files_under_different_part_names_are_refused_too(client, dbsession, site, token):
    response = client.post(REPORTS, params=[("report", json.dumps(report_body(site)))],
                           upload_files=[(f"photo{n}", f"p{n}.png", samples.png(seed=n), "image/png")
                                         for n in range(6)],
                           headers={HEADER: token}, status=400)
    assert_error(response, 400)
    assert incident_count(dbsession) == 0


def test_refused_files_are_listed_and_the_report_is_kept(admin, client, dbsession, site, token, upload_dir):
    before = stored_files(upload_dir)
    files = [PNG, ("page.png", samples.HTML, "image/png"), ("drawing.png", samples.SVG, "image/png"),
             ("setup.png", samples.EXE, "image/png"), ("empty.jpg", b"", "image/jpeg")]
    response = file_report(client, token, report_body(site, reporterName="Kim Lee"), files=files, status=201)
    assert response.json["reference"] == "INC-0001"
    failed = response.json["failedFiles"]
    assert [item["name"] for item in failed] == ["page.png", "drawing.png", "setup.png", "empty.jpg"]
    assert all(isinstance(item["error"], str) and item["error"] for item in failed)
    attachments = admin.get("/api/incidents/1").json["attachments"]
    assert [(item["filename"], item["contentType"]) for item in attachments] == [("photo.png", "image/png")]
    assert attachment_count(dbsession) == 1
    assert len(stored_files(upload_dir) - before) == 1


def test_a_photo_of_too_many_pixels_is_refused_from_its_header_and_the_report_kept(admin, client, site,
                                                                                 token):
    bomb = samples.png_bomb(13_000, 13_000)  # half a megabyte, 169 million pixels
    response = file_report(client, token, report_body(site, reporterName="Kim Lee"),
                           files=[("IMG_0001.png", bomb, "image/png"), PNG], status=201)
    assert response.json["failedFiles"] == [{
        "name": "IMG_0001.png",
        "error": "The photo is 13000 by 13000 pixels; photos of at most 50 million pixels are accepted"}]
    attachments = admin.get("/api/incidents/1").json["attachments"]
    assert [item["filename"] for item in attachments] == ["photo.png"]


def test_the_type_comes_from_the_content_not_the_name(admin, client, site, token):
    files = [("scan.pdf", samples.PNG, "application/pdf"), ("photo.jpg", samples.PDF, "image/jpeg"),
             ("IMG_0001.HEIC", samples.HEIC, "image/heic")]
    response = file_report(client, token, report_body(site, reporterName="Kim Lee"), files=files, status=201)
    assert response.json["failedFiles"] == []
    attachments = admin.get("/api/incidents/1").json["attachments"]
    assert [(item["filename"], item["contentType"]) for item in attachments] == [
        ("scan.png", "image/png"), ("photo.pdf", "application/pdf"), ("IMG_0001.heic", "image/heic")]


def test_an_oversized_file_is_refused_and_the_others_kept(admin, client, dbsession, registry, site, token,
                                                          upload_dir, monkeypatch):
    monkeypatch.setitem(registry.settings, "ehs.max_upload_mb", 1)
    before = stored_files(upload_dir)
    big = samples.PNG + b"\x00" * (1024 * 1024 + 1 - len(samples.PNG))
    files = [("big.png", big, "image/png"), PNG]
    response = file_report(client, token, report_body(site, reporterName="Kim Lee"), files=files, status=201)
    assert [item["name"] for item in response.json["failedFiles"]] == ["big.png"]
    attachments = admin.get("/api/incidents/1").json["attachments"]
    assert [item["filename"] for item in attachments] == ["photo.png"]
    assert len(stored_files(upload_dir) - before) == 1
    # exactly at the limit is accepted
    exact = samples.PNG + b"\x00" * (1024 * 1024 - len(samples.PNG))
    file_report(client, token, report_body(site, reporterName="Kim Lee"),
                files=[("exact.png", exact, "image/png")], status=201)
    assert [item["filename"] for item in admin.get("/api/incidents/2").json["attachments"]] == ["exact.png"]


def test_an_oversized_request_is_refused_before_anything_is_stored(client, dbsession, registry, site, token,
                                                                   upload_dir, monkeypatch):
    monkeypatch.setitem(registry.settings, "ehs.max_upload_mb", 1)
    before = stored_files(upload_dir)
    chunk = samples.PNG + b"\x00" * (1024 * 1024 + 400 * 1024)  # 5 of them: over 5 MB + 1 MB
    files = [(f"p{n}.png", chunk, "image/png") for n in range(5)]
    response = file_report(client, token, report_body(site), files=files, status="*")
    assert response.status_int in (400, 413)
    assert incident_count(dbsession) == 0
    assert attachment_count(dbsession) == 0
    assert stored_files(upload_dir) == before


# --- retries with a clientId -------------------------------------------------------------------


def test_the_same_client_id_again_returns_the_same_reference_with_200(admin, client, dbsession, site, token,
                                                                      inbox):
    key = str(uuid.uuid4())
    body = report_body(site, clientId=key, severity="critical")
    first = file_report(client, token, body, files=[PNG], status=201)
    inbox.wait(1)
    again = file_report(client, token, body, files=[PNG], status=200)
    assert again.json["reference"] == first.json["reference"] == "INC-0001"
    assert again.json["failedFiles"] == []
    assert incident_count(dbsession) == 1
    assert attachment_count(dbsession) == 1  # the retried photo is not attached twice
    assert len(inbox.settle(0.5)) == 1  # nor is the notice sent twice
    # a new clientId is a new report
    other = file_report(client, token, report_body(site, clientId=str(uuid.uuid4())), status=201)
    assert other.json["reference"] == "INC-0002"


def test_a_different_report_under_a_used_client_id_is_not_silently_dropped(admin, client, dbsession,
                                                                           site, token):
    """A clientId sent again with a different report is not a retry: the core's
    create answers 422 (security reference section 3: "different payload ->
    409/422"); answering 200 with the first report's reference loses the
    second report without telling the person."""
    key = str(uuid.uuid4())
    file_report(client, token, report_body(site, clientId=key, title="Oil on the floor"), status=201)
    response = file_report(client, token, report_body(site, clientId=key, title="Broken ladder",
                                                      severity="high"), status="*")
    assert response.status_int in (409, 422), response.body[:300]
    assert [item["title"] for item in admin.get("/api/incidents").json["items"]] == ["Oil on the floor"]


def test_a_client_id_of_a_report_filed_elsewhere_reveals_nothing(admin, client, dbsession, site, token):
    """A link must not learn of, nor attach itself to, a signed-in user's report
    by sending its clientId (the core answers 409 to a caller who cannot see it)."""
    key = str(uuid.uuid4())
    admin.post_json("/api/incidents", report_body(site, clientId=key, title="Named report"), status=201)
    response = file_report(client, token, report_body(site, clientId=key, title="Named report"), status="*")
    assert response.status_int in (409, 422), response.body[:300]
    assert "INC-0001" not in response.text
    incident = admin.get("/api/incidents/1").json
    assert incident["channel"] != "kiosk" and incident["kiosk"] is None


def test_files_of_an_anonymous_report_keep_no_name_the_phone_gave_them(admin, client, site, token):
    files = [("Kim Lee IMG_20250101_081500.png", samples.png(seed=1), "image/png"),
             ("IMG_0002.jpg", samples.photo_with_metadata("JPEG"), "image/jpeg")]
    file_report(client, token, report_body(site), files=files, status=201)
    incident = admin.get("/api/incidents/1").json
    assert incident["anonymous"] is True
    names = sorted(item["filename"] for item in incident["attachments"])
    assert names == ["attachment.jpg", "attachment.png"]
    photo = next(item for item in incident["attachments"] if item["contentType"] == "image/jpeg")
    assert b"Jane Owner" not in admin.get(photo["url"]).body


# --- the cap: 30 reports per link per 10 minutes (item 25) ----------------------------------------


def test_the_31st_report_in_ten_minutes_is_refused_per_link(admin, client, dbsession, site, link, token,
                                                            monkeypatch):
    for n in range(30):
        file_report(client, token, report_body(site, title=f"Report {n}"), status=201)
    refused = file_report(client, token, report_body(site, title="One too many"), files=[PNG], status=429)
    assert_error(refused, 429)
    assert 1 <= int(refused.headers["Retry-After"]) <= 600
    assert incident_count(dbsession) == 30
    assert attachment_count(dbsession) == 0

    # the limit belongs to the link: another link still files
    other = new_link(admin, "Canteen tablet")
    assert file_report(client, other["token"], report_body(site)).json["reference"] == "INC-0031"
    # a retry within the window is still refused
    file_report(client, token, report_body(site, title="Still too many"), status=429)

    # ten minutes after the first report the link files again
    real = ehs_core.auth.ratelimit.utcnow
    monkeypatch.setattr(ehs_core.auth.ratelimit, "utcnow",
                        lambda: real() + dt.timedelta(minutes=10, seconds=1))
    assert file_report(client, token, report_body(site)).json["reference"] == "INC-0032"


def test_invalid_reports_do_not_use_up_the_cap(client, dbsession, site, token):
    for _ in range(31):
        file_report(client, token, report_body(site, type="fire"), status=400)
    file_report(client, token, report_body(site), status=201)


# --- notice of serious reports ----------------------------------------------------------------


def staff(admin, make_user) -> set[str]:
    managers = [make_user("safety_manager") for _ in range(2)]
    make_user("supervisor")
    make_user("reporter")
    return {m.user["email"] for m in managers} | {"admin@acme.test"}


@pytest.mark.parametrize("severity", ["high", "critical"])
def test_a_serious_report_is_mailed_to_safety_managers_and_admins(admin, make_user, client, inbox, site,
                                                                  token, severity):
    expected = staff(admin, make_user)
    inbox.settle()
    inbox.clear()
    file_report(client, token, report_body(site, severity=severity, title="Forklift tipped over"))
    inbox.wait(len(expected))
    messages = inbox.settle()
    assert sorted(m["To"] for m in messages) == sorted(expected)
    for message in messages:
        assert "INC-0001" in message["Subject"]
        assert severity in message["Subject"]
        assert "Forklift tipped over" in mail_text(message)


@pytest.mark.parametrize("severity", ["low", "medium"])
def test_a_minor_report_sends_no_mail(admin, make_user, client, inbox, site, token, severity):
    staff(admin, make_user)
    inbox.settle()
    inbox.clear()
    file_report(client, token, report_body(site, severity=severity))
    assert inbox.settle(0.5) == []


def test_attachments_and_audit_of_a_kiosk_report_name_no_user(admin, client, dbsession, site, token):
    file_report(client, token, report_body(site), files=[PNG])
    stored = dbsession.execute(select(Attachment)).scalar_one()
    assert stored.uploaded_by_id is None
    timeline = admin.get("/api/incidents/1/timeline").json
    assert [entry["action"] for entry in timeline] == ["incident.created", "attachment.created"]
    assert [entry["actor"] for entry in timeline] == [None, None]
