"""Filing a report: numbering, validation, location rules, anonymous reports,
ignored fields, retries with a clientId, and the notice of serious reports."""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid

import pytest
from sqlalchemy import func, select

from ehs_core.audit.models import AuditEntry
from ehs_core.incidents.models import Incident
from ehs_core.testing import mail_text
from tests.core.incidents import (
    INCIDENTS,
    OCCURRED,
    file_report,
    issue_paths,
    listed_numbers,
    new_area,
    new_site,
    report,
    report_body,
)


def incident_count(dbsession) -> int:
    return dbsession.execute(select(func.count()).select_from(Incident)).scalar()


def written(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


# --- a new report -----------------------------------------------------------


def test_a_new_report_answers_201_with_the_report(admin, make_user):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    reporter = make_user("reporter", name="Rita Reporter")
    response = report(reporter, site["id"], areaId=area["id"], title="  Oil on the floor  ",
                      type="hazard", severity="medium", locationDetail="Near dock 3",
                      description="A puddle", immediateAction="Coned off")
    assert response.status_int == 201
    incident = response.json
    assert incident["number"] == 1
    assert incident["reference"] == "INC-0001"
    assert incident["status"] == "reported"
    assert incident["title"] == "Oil on the floor"
    assert (incident["type"], incident["severity"]) == ("hazard", "medium")
    assert (incident["siteId"], incident["areaId"]) == (site["id"], area["id"])
    assert (incident["siteName"], incident["areaName"]) == ("Plant North", "Assembly")
    assert incident["locationDetail"] == "Near dock 3"
    assert incident["description"] == "A puddle"
    assert incident["immediateAction"] == "Coned off"
    assert incident["anonymous"] is False
    assert incident["reporter"] == {"id": reporter.user["id"], "name": "Rita Reporter"}
    assert incident["closedAt"] is None
    # The reporter can read it back.
    assert reporter.get(f"{INCIDENTS}/1").json["title"] == "Oil on the floor"


def test_numbers_are_sequential_and_references_are_padded(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    created = [file_report(browser, site["id"]) for browser in (admin, reporter, admin)]
    assert [i["number"] for i in created] == [1, 2, 3]
    assert [i["reference"] for i in created] == ["INC-0001", "INC-0002", "INC-0003"]
    for incident in created:
        assert re.fullmatch(r"INC-\d{4,}", incident["reference"])


def test_a_report_needs_a_session(admin, client):
    site = new_site(admin)
    response = report(client, site["id"], status=401)
    assert list(response.json) == ["error"]
    assert listed_numbers(admin) == []


# --- validation ---------------------------------------------------------------


@pytest.mark.parametrize("missing", ["title", "type", "severity", "occurredAt", "siteId"])
def test_required_fields(admin, dbsession, missing):
    site = new_site(admin)
    body = report_body(site["id"])
    del body[missing]
    response = admin.post_json(INCIDENTS, body, status=400)
    assert issue_paths(response) == {missing}
    assert incident_count(dbsession) == 0


@pytest.mark.parametrize(("field", "value"), [
    ("title", ""),
    ("title", "   "),
    ("title", "x" * 201),
    ("title", None),
    ("type", "fire"),
    ("type", "Hazard"),
    ("type", None),
    ("severity", "extreme"),
    ("severity", "HIGH"),
    ("severity", 3),
    ("siteId", "1"),
    ("siteId", None),
    ("areaId", "1"),
    ("anonymous", "yes"),
    ("occurredAt", 1767247200),
    ("occurredAt", "yesterday"),
    ("occurredAt", "2026-01-01"),
])
def test_field_values_are_checked(admin, dbsession, field, value):
    site = new_site(admin)
    response = report(admin, site["id"], status=400, **{field: value})
    assert issue_paths(response) == {field}
    assert incident_count(dbsession) == 0


def test_occurred_at_without_an_offset_is_refused(admin, dbsession):
    site = new_site(admin)
    response = report(admin, site["id"], status=400, occurredAt="2026-01-01T08:00:00")
    assert issue_paths(response) == {"occurredAt"}
    assert incident_count(dbsession) == 0


def test_occurred_at_in_the_future_is_refused(admin, dbsession):
    site = new_site(admin)
    tomorrow = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    response = report(admin, site["id"], status=400, occurredAt=written(tomorrow))
    assert issue_paths(response) == {"occurredAt"}
    assert incident_count(dbsession) == 0


def test_the_future_is_judged_on_the_instant_not_on_the_written_clock(admin):
    site = new_site(admin)
    # An hour ahead, written at -10:00: the wall clock reads earlier than UTC now.
    ahead = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).astimezone(dt.timezone(dt.timedelta(hours=-10)))
    assert issue_paths(report(admin, site["id"], status=400, occurredAt=written(ahead))) == {"occurredAt"}
    # An hour ago, written at +14:00: the wall clock reads later than UTC now.
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).astimezone(dt.timezone(dt.timedelta(hours=14)))
    incident = file_report(admin, site["id"], occurredAt=written(past))
    assert incident["occurredAt"] == written(past)


@pytest.mark.parametrize("occurred", [OCCURRED, "2026-01-01T08:00:00-05:30", "2026-01-01T06:00:00Z"])
def test_occurred_at_comes_back_with_the_offset_it_was_given(admin, occurred):
    site = new_site(admin)
    incident = file_report(admin, site["id"], occurredAt=occurred)
    assert incident["occurredAt"] == occurred
    assert admin.get(f"{INCIDENTS}/{incident['number']}").json["occurredAt"] == occurred
    assert admin.get(INCIDENTS).json["items"][0]["occurredAt"] == occurred


def test_occurred_at_is_kept_as_an_instant(admin):
    site = new_site(admin)
    file_report(admin, site["id"], occurredAt="2026-01-01T08:00:00+02:00")
    file_report(admin, site["id"], occurredAt="2026-01-01T06:30:00Z")
    # Stored as instants: 06:00Z comes before 06:30Z whatever the written clock says.
    first, second = (admin.get(f"{INCIDENTS}/{n}").json["occurredAt"] for n in (1, 2))
    assert dt.datetime.fromisoformat(first) < dt.datetime.fromisoformat(second)
    assert dt.datetime.fromisoformat(first) == dt.datetime(2026, 1, 1, 6, tzinfo=dt.UTC)


# --- site and area ---------------------------------------------------------------


def test_an_unknown_site_is_refused(admin, dbsession):
    new_site(admin)
    response = report(admin, 999_999, status=400)
    assert issue_paths(response) == {"siteId"}
    assert incident_count(dbsession) == 0


def test_an_archived_site_is_refused(admin, dbsession):
    site = new_site(admin)
    admin.patch_json(f"/api/sites/{site['id']}", {"archived": True}, status=200)
    response = report(admin, site["id"], status=400)
    assert response.json["issues"] == [
        {"path": "siteId", "message": "This site is archived; it takes no new reports"}]
    assert incident_count(dbsession) == 0


def test_an_area_of_another_site_is_refused(admin, dbsession):
    site = new_site(admin)
    other = new_site(admin, "Plant South")
    foreign = new_area(admin, other["id"], "Paint shop")
    response = report(admin, site["id"], status=400, areaId=foreign["id"])
    assert issue_paths(response) == {"areaId"}
    assert incident_count(dbsession) == 0
    # The same area with its own site is fine.
    assert file_report(admin, other["id"], areaId=foreign["id"])["areaId"] == foreign["id"]


def test_an_unknown_or_archived_area_is_refused(admin, dbsession):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    assert issue_paths(report(admin, site["id"], status=400, areaId=999_999)) == {"areaId"}
    admin.patch_json(f"/api/areas/{area['id']}", {"archived": True}, status=200)
    response = report(admin, site["id"], status=400, areaId=area["id"])
    assert response.json["issues"] == [
        {"path": "areaId", "message": "This area is archived; it takes no new reports"}]
    assert incident_count(dbsession) == 0


@pytest.mark.parametrize(("occurred", "message"), [
    ("0001-01-01T00:00:00Z", "Must lie in the years 1970 to 2999"),
    ("0001-01-01T00:00:00+23:59", "The UTC offset must be whole minutes, at most 18 hours"),
    ("9999-12-31T23:59:59-23:59", "The UTC offset must be whole minutes, at most 18 hours"),
    ("9999-12-31T23:59:59Z", "Must lie in the years 1970 to 2999"),
    ("2026-01-05T08:00:00+05:30:15", "The UTC offset must be whole minutes, at most 18 hours"),
    ("\uff12\uff10\uff12\uff16-01-05T08:00:00Z", "Must be an ISO 8601 date and time with a UTC offset, "
                                 "such as 2026-03-01T14:30:00+01:00"),
])
def test_extreme_years_and_offsets_are_refused_not_overflowing(admin, dbsession, occurred, message):
    site = new_site(admin)
    response = report(admin, site["id"], status=400, occurredAt=occurred)
    assert response.json["issues"] == [{"path": "occurredAt", "message": message}]
    assert incident_count(dbsession) == 0


def test_the_area_is_optional(admin):
    site = new_site(admin)
    incident = file_report(admin, site["id"], areaId=None)
    assert incident["areaId"] is None and incident["areaName"] is None


# --- anonymous reports --------------------------------------------------------------


def test_an_anonymous_report_records_no_reporter_anywhere(admin, make_user, dbsession):
    site = new_site(admin)
    reporter = make_user("reporter")
    incident = file_report(reporter, site["id"], anonymous=True, title="Blocked fire exit")
    assert incident["anonymous"] is True
    assert incident["reporter"] is None
    assert admin.get(f"{INCIDENTS}/{incident['number']}").json["reporter"] is None
    timeline = admin.get(f"{INCIDENTS}/{incident['number']}/timeline").json
    assert [entry["action"] for entry in timeline] == ["incident.created"]
    assert timeline[0]["actor"] is None
    assert not {"reporter", "reporterId", "actor"} & set(timeline[0]["changes"])
    stored = dbsession.execute(select(Incident).where(Incident.number == incident["number"])).scalar_one()
    assert stored.reporter_id is None
    actors = dbsession.execute(select(AuditEntry.actor_id).where(AuditEntry.incident_id == stored.id))
    assert set(actors.scalars()) == {None}


def test_an_anonymous_report_is_not_linked_to_its_reporter(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    named = file_report(reporter, site["id"], title="Named report")
    anonymous = file_report(reporter, site["id"], anonymous=True, title="Anonymous report")
    assert listed_numbers(reporter) == [named["number"]]
    reporter.get(f"{INCIDENTS}/{anonymous['number']}", status=404)
    # Supervisors and above still see it.
    assert listed_numbers(admin) == [anonymous["number"], named["number"]]


def test_a_named_report_records_its_reporter_as_the_actor(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter", name="Rita Reporter")
    incident = file_report(reporter, site["id"], anonymous=False)
    timeline = admin.get(f"{INCIDENTS}/{incident['number']}/timeline").json
    assert timeline[0]["actor"] == {"id": reporter.user["id"], "name": "Rita Reporter"}


# --- fields the client may not set -------------------------------------------------------


def test_server_owned_fields_in_the_body_are_refused_by_name(admin, make_user, dbsession):
    site = new_site(admin)
    reporter = make_user("reporter")
    other = make_user("reporter")
    body = report_body(site["id"], number=77, reference="INC-0077", status="closed",
                       reporterId=other.user["id"], organizationId=999, id=12345, channel="kiosk")
    response = reporter.post_json(INCIDENTS, body, status=400)
    paths = issue_paths(response)
    assert paths == {"number", "reference", "status", "reporterId", "organizationId", "id", "channel"}
    assert incident_count(dbsession) == 0
    # without them the report is filed, owned by the caller
    created = reporter.post_json(INCIDENTS, report_body(site["id"]), status=201).json
    assert created["number"] == 1
    assert created["reporter"]["id"] == reporter.user["id"]
    assert listed_numbers(other) == []


# --- retries with a clientId -------------------------------------------------------------


def test_the_same_client_id_again_returns_the_original_with_200(admin, make_user, dbsession):
    site = new_site(admin)
    reporter = make_user("reporter")
    key = str(uuid.uuid4())
    first = report(reporter, site["id"], clientId=key)
    assert first.status_int == 201
    again = report(reporter, site["id"], status=200, clientId=key)
    assert again.json["number"] == first.json["number"] == 1
    assert again.json["reference"] == "INC-0001"
    assert incident_count(dbsession) == 1
    # The replay took no number: the next report is 2.
    assert file_report(reporter, site["id"])["number"] == 2


def test_a_client_id_is_compared_as_a_uuid(admin, dbsession):
    site = new_site(admin)
    key = uuid.uuid4()
    report(admin, site["id"], clientId=str(key))
    again = report(admin, site["id"], status=200, clientId=str(key).upper())
    assert again.json["number"] == 1
    assert incident_count(dbsession) == 1


@pytest.mark.parametrize(("field", "value"), [
    ("title", "Something else entirely"),
    ("type", "injury"),
    ("severity", "medium"),
])
def test_the_same_client_id_for_a_different_report_is_422(admin, dbsession, field, value):
    site = new_site(admin)
    key = str(uuid.uuid4())
    report(admin, site["id"], clientId=key)
    response = report(admin, site["id"], status=422, clientId=key, **{field: value})
    assert isinstance(response.json["error"], str)
    assert incident_count(dbsession) == 1
    assert admin.get(f"{INCIDENTS}/1").json["title"] == "Oil on the floor"


def test_the_same_client_id_on_another_site_is_422(admin, dbsession):
    site = new_site(admin)
    other = new_site(admin, "Plant South")
    key = str(uuid.uuid4())
    report(admin, site["id"], clientId=key)
    report(admin, other["id"], status=422, clientId=key)
    assert incident_count(dbsession) == 1


def test_a_replay_still_answers_200_after_the_site_was_archived(admin, dbsession):
    # Spec: the same clientId sent again answers 200 with the original; a
    # retry must not turn into a 400 because the site changed meanwhile.
    site = new_site(admin)
    key = str(uuid.uuid4())
    report(admin, site["id"], clientId=key)
    admin.patch_json(f"/api/sites/{site['id']}", {"archived": True}, status=200)
    again = report(admin, site["id"], status="*", clientId=key)
    assert again.status_int == 200, again.body
    assert again.json["number"] == 1
    assert incident_count(dbsession) == 1


def test_another_user_cannot_fetch_a_report_by_its_client_id(admin, make_user, dbsession):
    site = new_site(admin)
    owner = make_user("reporter")
    stranger = make_user("reporter")
    key = str(uuid.uuid4())
    report(owner, site["id"], clientId=key, title="Private matter")
    response = report(stranger, site["id"], status="*", clientId=key, title="Private matter")
    assert response.status_int not in (200, 201)
    assert "Private matter" not in response.text
    assert incident_count(dbsession) == 1


def investigate(admin, number):
    admin.put_json(f"{INCIDENTS}/{number}/investigation", {"summary": "Driver J. Smith was tired"})
    admin.post_json(f"{INCIDENTS}/{number}/root-causes",
                    {"category": "people", "description": "Night shift fatigue"}, status=201)


def test_a_replay_answers_only_to_the_user_who_filed_a_named_report(admin, make_user, dbsession):
    site = new_site(admin)
    owner = make_user("reporter")
    supervisor = make_user("supervisor")
    key = str(uuid.uuid4())
    report(owner, site["id"], clientId=key)
    investigate(admin, 1)
    # a supervisor may open the incident, but did not file it: the replay is not theirs
    response = report(supervisor, site["id"], status=409, clientId=key)
    assert "INC-0001" not in response.text
    again = report(owner, site["id"], status=200, clientId=key).json
    assert again["investigation"]["summary"] == "Driver J. Smith was tired"  # the owner sees it anyway
    assert incident_count(dbsession) == 1


def test_an_anonymous_replay_gives_back_only_the_report_as_filed(admin, make_user, dbsession):
    """The anonymous reporter cannot open the incident (404), so a retry
    must not hand them its investigation, root causes or actions."""
    site = new_site(admin)
    reporter = make_user("reporter")
    key = str(uuid.uuid4())
    first = report(reporter, site["id"], clientId=key, anonymous=True).json
    investigate(admin, 1)
    assert admin.get(f"{INCIDENTS}/1").json["investigation"]["summary"]  # it is there
    reporter.get(f"{INCIDENTS}/1", status=404)
    again = report(reporter, site["id"], status=200, clientId=key, anonymous=True)
    assert again.json["reference"] == first["reference"] == "INC-0001"
    assert "Smith" not in again.text and "fatigue" not in again.text
    assert again.json["investigation"] is None
    assert again.json["rootCauses"] == []
    assert again.json["reporter"] is None
    assert incident_count(dbsession) == 1


def test_a_reporting_links_client_id_does_not_replay_for_a_signed_in_user(admin, client, dbsession):
    site = new_site(admin)
    token = admin.post_json("/api/kiosks", {"name": "Gate tablet"}, status=201).json["token"]
    key = str(uuid.uuid4())
    body = {"title": "Oil on the floor", "type": "hazard", "severity": "low", "occurredAt": OCCURRED,
            "siteId": site["id"], "clientId": key}
    client.post("/api/kiosk/reports", params=[("report", json.dumps(body))],
                content_type="multipart/form-data", headers={"X-Kiosk-Token": token}, status=201)
    investigate(admin, 1)
    response = report(admin, site["id"], status=409, clientId=key, anonymous=True)
    assert "INC-0001" not in response.text and "Smith" not in response.text
    assert incident_count(dbsession) == 1


@pytest.mark.parametrize("value", ["abc", "", "1234", str(uuid.uuid4()) + "0", 42])
def test_an_invalid_client_id_is_refused(admin, dbsession, value):
    site = new_site(admin)
    response = report(admin, site["id"], status=400, clientId=value)
    assert issue_paths(response) == {"clientId"}
    assert incident_count(dbsession) == 0


def test_reports_without_a_client_id_are_never_merged(admin, dbsession):
    site = new_site(admin)
    assert report(admin, site["id"]).status_int == 201
    assert report(admin, site["id"], clientId=None).status_int == 201
    assert incident_count(dbsession) == 2


# --- notice of serious reports --------------------------------------------------------------


def staff(admin, make_user):
    """Users of every role, plus an inactive safety manager; returns the
    addresses that must get a notice."""
    managers = [make_user("safety_manager"), make_user("safety_manager")]
    second_admin = make_user("admin")
    make_user("supervisor")
    inactive = make_user("safety_manager")
    admin.patch_json(f"/api/users/{inactive.user['id']}", {"active": False}, status=200)
    return {m.user["email"] for m in managers} | {second_admin.user["email"], "admin@acme.test"}


@pytest.mark.parametrize("severity", ["high", "critical"])
def test_a_serious_report_is_mailed_to_safety_managers_and_admins(admin, make_user, inbox, severity):
    site = new_site(admin)
    expected = staff(admin, make_user)
    reporter = make_user("reporter")
    inbox.settle()
    inbox.clear()
    incident = file_report(reporter, site["id"], severity=severity, title="Forklift tipped over")
    inbox.wait(len(expected))
    messages = inbox.settle()
    assert sorted(m["To"] for m in messages) == sorted(expected)
    for message in messages:
        assert incident["reference"] in message["Subject"]
        assert severity in message["Subject"]
        body = mail_text(message)
        assert "Forklift tipped over" in body
        assert "Plant North" in body


def test_a_serious_report_is_mailed_to_the_supervisors_of_its_site_too(admin, make_user, inbox):
    """Issue #36 item 9: a site's supervisors hear of its serious reports;
    a supervisor of another site, or of none chosen, does not."""
    site = new_site(admin)
    other = new_site(admin, "Plant South")
    expected = staff(admin, make_user)
    ours, theirs = make_user("supervisor"), make_user("supervisor")
    admin.patch_json(f"/api/users/{ours.user['id']}", {"siteIds": [site["id"], other["id"]]})
    admin.patch_json(f"/api/users/{theirs.user['id']}", {"siteIds": [other["id"]]})
    inbox.settle()
    inbox.clear()
    file_report(make_user("reporter"), site["id"], severity="high", title="Forklift tipped over")
    inbox.wait(len(expected) + 1)
    assert sorted(m["To"] for m in inbox.settle()) == sorted(expected | {ours.user["email"]})


@pytest.mark.parametrize("severity", ["low", "medium"])
def test_a_minor_report_sends_no_mail(admin, make_user, inbox, severity):
    site = new_site(admin)
    staff(admin, make_user)
    reporter = make_user("reporter")
    inbox.settle()
    inbox.clear()
    file_report(reporter, site["id"], severity=severity)
    assert inbox.settle(0.5) == []


def test_a_replayed_serious_report_is_not_mailed_twice(admin, inbox):
    site = new_site(admin)
    key = str(uuid.uuid4())
    report(admin, site["id"], severity="critical", clientId=key)
    inbox.wait(1)
    report(admin, site["id"], severity="critical", clientId=key, status=200)
    assert len(inbox.settle(0.5)) == 1


# --- the number is taken last -------------------------------------------------


def test_the_answer_to_a_new_report_is_the_numbered_incident_as_stored(admin):
    site = new_site(admin)
    first = report(admin, site["id"]).json
    created = report(admin, site["id"], title="Second").json
    shown = admin.get(f"{INCIDENTS}/{created['number']}").json
    assert (created["number"], created["reference"]) == (first["number"] + 1, "INC-0002")
    assert created == shown


def test_an_incident_cannot_be_committed_without_its_number(admin, dbsession):
    site = new_site(admin)
    before = incident_count(dbsession)
    organization_id = admin.get("/api/auth/me").json["organization"]["id"]
    dbsession.add(Incident(organization_id=organization_id, number=None, title="Unnumbered",
                           type="hazard", severity="low", site_id=site["id"],
                           occurred_at=dt.datetime.fromisoformat(OCCURRED), anonymous=True))
    with pytest.raises(RuntimeError, match="without a number"):
        dbsession.commit()
    dbsession.rollback()
    assert incident_count(dbsession) == before
