"""The audit trail read back as the incident's timeline: entries
`{id, at, actor, action, changes}` for every create and update on the
incident, its investigation, root causes, actions and files; `changes` lists
only the fields that changed as `{field: {old, new}}`; anonymous reports
record no actor; the timeline is seen only by who sees the incident.

Spec: Timeline entry, Events ("Audit trail"), Incidents visibility; security
reference item 26."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.core.attachments import samples
from tests.core.audit.support import actions_of, assign_action, new_site, report, report_body, timeline


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
def manager(make_user):
    return make_user("safety_manager")


@pytest.fixture
def number(reporter, site) -> int:
    return report(reporter, site)


def me(browser) -> dict:
    return {"id": browser.user["id"], "name": browser.user["name"]}


def assert_changes_shape(changes: dict) -> None:
    assert isinstance(changes, dict)
    for field, change in changes.items():
        assert isinstance(field, str)
        assert set(change) == {"old", "new"}, (field, change)


def parse_at(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert moment.tzinfo is not None and moment.utcoffset() is not None, text
    return moment


# --- creation ------------------------------------------------------------------


def test_creation_is_recorded_with_the_reporter_as_actor(reporter, number):
    (entry,) = timeline(reporter, number)
    assert set(entry) == {"id", "at", "actor", "action", "changes"}
    assert entry["action"] == "incident.created"
    assert entry["actor"] == me(reporter)
    assert_changes_shape(entry["changes"])
    assert entry["changes"]["title"] == {"old": None, "new": "Oil on the floor"}
    assert entry["changes"]["severity"] == {"old": None, "new": "low"}
    assert entry["changes"]["type"] == {"old": None, "new": "hazard"}
    assert all(change["old"] is None for change in entry["changes"].values())
    at = parse_at(entry["at"])
    assert abs(dt.datetime.now(dt.UTC) - at) < dt.timedelta(minutes=5)


def test_anonymous_report_records_no_actor(reporter, admin, site):
    number = reporter.post_json("/api/incidents", report_body(site, anonymous=True),
                                status=201).json["number"]
    entries = timeline(admin, number)
    assert actions_of(entries) == ["incident.created"]
    assert entries[0]["actor"] is None
    # Nothing in the trail points back at the person who filed it.
    assert reporter.user["name"] not in json.dumps(entries)
    assert reporter.user["email"] not in json.dumps(entries)


def test_anonymous_report_by_a_supervisor_records_no_actor_either(supervisor, site):
    number = supervisor.post_json("/api/incidents", report_body(site, anonymous=True),
                                  status=201).json["number"]
    assert timeline(supervisor, number)[0]["actor"] is None


def test_a_replayed_client_id_adds_no_entry(reporter, site):
    body = report_body(site, clientId="7f0c9a4e-3c1b-4a55-9a7e-2d1f0b6c8e11")
    number = reporter.post_json("/api/incidents", body, status=201).json["number"]
    reporter.post_json("/api/incidents", body, status=200)
    assert actions_of(timeline(reporter, number)) == ["incident.created"]


# --- updates -------------------------------------------------------------------


def test_update_lists_only_the_changed_fields(supervisor, reporter, number):
    supervisor.patch_json(f"/api/incidents/{number}", {
        "title": "Oil and water on the floor", "severity": "low", "type": "hazard",
        "description": None}, status=200)
    entries = timeline(reporter, number)
    assert actions_of(entries) == ["incident.created", "incident.updated"]
    updated = entries[-1]
    assert updated["actor"] == me(supervisor)
    assert updated["changes"] == {"title": {"old": "Oil on the floor", "new": "Oil and water on the floor"}}


def test_update_of_several_fields(supervisor, number):
    supervisor.patch_json(f"/api/incidents/{number}", {
        "severity": "high", "description": "Near the press", "title": "Oil on the floor"}, status=200)
    changes = timeline(supervisor, number)[-1]["changes"]
    assert changes == {"severity": {"old": "low", "new": "high"},
                       "description": {"old": None, "new": "Near the press"}}


def test_moving_site_records_the_site_change(admin, supervisor, number, site):
    other = new_site(admin, "Plant South")
    supervisor.patch_json(f"/api/incidents/{number}", {"siteId": other}, status=200)
    changes = timeline(supervisor, number)[-1]["changes"]
    assert changes["siteId"] == {"old": site, "new": other}
    assert "title" not in changes
    assert "areaId" not in changes  # there was no area, so nothing changed there


def test_update_without_changes_adds_no_entry(supervisor, number):
    supervisor.patch_json(f"/api/incidents/{number}", {"title": "Oil on the floor", "severity": "low"},
                          status=200)
    supervisor.patch_json(f"/api/incidents/{number}", {}, status=200)
    assert actions_of(timeline(supervisor, number)) == ["incident.created"]


def test_refused_requests_add_no_entry(supervisor, reporter, number):
    reporter.patch_json(f"/api/incidents/{number}", {"title": "Mine now"}, status=403)
    supervisor.patch_json(f"/api/incidents/{number}", {"severity": "enormous"}, status=400)
    supervisor.post_json(f"/api/incidents/{number}/transitions", {"to": "closed"}, status=409)
    assert actions_of(timeline(supervisor, number)) == ["incident.created"]


# --- transitions -----------------------------------------------------------------


def test_transition_is_recorded_with_status_and_note(supervisor, reporter, number):
    supervisor.post_json(f"/api/incidents/{number}/transitions", {"to": "triage", "note": "Looking"},
                         status=200)
    entry = timeline(reporter, number)[-1]
    assert entry["action"] == "incident.transitioned"
    assert entry["actor"] == me(supervisor)
    assert entry["changes"]["status"] == {"old": "reported", "new": "triage"}
    assert entry["changes"]["note"] == {"old": None, "new": "Looking"}


def test_closing_and_reopening_record_closed_at(supervisor, manager, number):
    supervisor.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"}, status=200)
    supervisor.post_json(f"/api/incidents/{number}/transitions", {"to": "closed"}, status=200)
    closed = timeline(supervisor, number)[-1]
    assert closed["changes"]["status"] == {"old": "triage", "new": "closed"}
    assert closed["changes"]["closedAt"]["old"] is None
    closed_at = closed["changes"]["closedAt"]["new"]
    assert closed_at is not None
    parse_at(closed_at)
    manager.post_json(f"/api/incidents/{number}/transitions", {"to": "investigation"}, status=200)
    reopened = timeline(manager, number)[-1]
    assert reopened["actor"] == me(manager)
    assert reopened["changes"]["status"] == {"old": "closed", "new": "investigation"}
    assert reopened["changes"]["closedAt"]["new"] is None
    assert reopened["changes"]["closedAt"]["old"] is not None


# --- the whole trail, in order -------------------------------------------------------


def test_every_change_on_the_incident_appears_in_order(reporter, supervisor, make_user, number):
    assignee = make_user("reporter")
    base = f"/api/incidents/{number}"
    supervisor.patch_json(base, {"severity": "medium"}, status=200)
    supervisor.post_json(f"{base}/transitions", {"to": "triage"}, status=200)
    supervisor.post_json(f"{base}/transitions", {"to": "investigation"}, status=200)
    supervisor.put_json(f"{base}/investigation", {"method": "5 whys"}, status=201)
    supervisor.put_json(f"{base}/investigation", {"summary": "Leaking seal"}, status=200)
    cause = supervisor.post_json(f"{base}/root-causes", {
        "category": "equipment", "description": "Worn seal", "whys": ["Seal worn"]}, status=201).json
    supervisor.patch_json(f"/api/root-causes/{cause['id']}", {"description": "Worn pump seal",
                                                              "category": "equipment"}, status=200)
    action = assign_action(supervisor, number, assignee.user["id"], "Replace the seal")
    assignee.patch_json(f"/api/actions/{action['id']}", {"status": "in_progress"}, status=200)
    attachment = reporter.post(f"{base}/attachments", upload_files=[("file", "leak.png", samples.PNG,
                                                                     "image/png")], status=201).json
    reporter.delete(f"/api/attachments/{attachment['id']}", status=204)
    supervisor.delete(f"/api/root-causes/{cause['id']}", status=204)

    entries = timeline(reporter, number)
    assert actions_of(entries) == [
        "incident.created", "incident.updated", "incident.transitioned", "incident.transitioned",
        "investigation.created", "investigation.updated", "root_cause.created", "root_cause.updated",
        "action.created", "action.updated", "attachment.created", "attachment.deleted",
        "root_cause.deleted",
    ]
    for entry in entries:
        assert set(entry) == {"id", "at", "actor", "action", "changes"}
        assert_changes_shape(entry["changes"])
    times = [parse_at(entry["at"]) for entry in entries]
    assert times == sorted(times)
    ids = [entry["id"] for entry in entries]
    assert len(set(ids)) == len(ids)

    by_action = {}
    for entry in entries:
        by_action.setdefault(entry["action"], []).append(entry)

    assert entries[1]["changes"] == {"severity": {"old": "low", "new": "medium"}}
    assert by_action["investigation.updated"][0]["changes"] == {
        "summary": {"old": None, "new": "Leaking seal"}}

    created_cause = by_action["root_cause.created"][0]
    assert created_cause["actor"] == me(supervisor)
    assert created_cause["changes"]["category"] == {"old": None, "new": "equipment"}
    assert created_cause["changes"]["description"] == {"old": None, "new": "Worn seal"}
    updated_cause = by_action["root_cause.updated"][0]
    assert updated_cause["changes"]["description"] == {"old": "Worn seal", "new": "Worn pump seal"}
    assert "category" not in updated_cause["changes"]
    assert "whys" not in updated_cause["changes"]
    deleted_cause = by_action["root_cause.deleted"][0]
    assert deleted_cause["changes"]["description"]["old"] == "Worn pump seal"
    assert deleted_cause["changes"]["description"]["new"] is None

    created_action = by_action["action.created"][0]
    assert created_action["actor"] == me(supervisor)
    assert created_action["changes"]["title"] == {"old": None, "new": "Replace the seal"}
    assert created_action["changes"]["assigneeId"] == {"old": None, "new": assignee.user["id"]}
    assert created_action["changes"]["status"] == {"old": None, "new": "open"}
    updated_action = by_action["action.updated"][0]
    assert updated_action["actor"] == me(assignee)
    assert updated_action["changes"]["status"] == {"old": "open", "new": "in_progress"}
    assert "title" not in updated_action["changes"]

    created_file = by_action["attachment.created"][0]
    assert created_file["actor"] == me(reporter)
    assert created_file["changes"]["filename"] == {"old": None, "new": "leak.png"}
    deleted_file = by_action["attachment.deleted"][0]
    assert deleted_file["actor"] == me(reporter)
    assert deleted_file["changes"]["filename"] == {"old": "leak.png", "new": None}


def test_entries_are_only_ever_added(reporter, supervisor, number):
    before = timeline(reporter, number)
    supervisor.patch_json(f"/api/incidents/{number}", {"title": "Renamed"}, status=200)
    after = timeline(reporter, number)
    assert after[:len(before)] == before  # entries are only ever added


# --- who may read it -------------------------------------------------------------


def test_outsider_gets_404_like_a_missing_number(make_user, number):
    outsider = make_user("reporter")
    hidden = outsider.get(f"/api/incidents/{number}/timeline", status=404)
    missing = outsider.get(f"/api/incidents/{number + 1000}/timeline", status=404)
    assert hidden.json == missing.json
    assert set(hidden.json) == {"error"}


def test_assignee_and_supervisors_can_read_it(make_user, supervisor, manager, admin, number):
    assignee = make_user("reporter")
    assignee.get(f"/api/incidents/{number}/timeline", status=404)
    assign_action(supervisor, number, assignee.user["id"])
    for browser in (assignee, supervisor, manager, admin):
        assert actions_of(timeline(browser, number))[:2] == ["incident.created", "action.created"]


def test_timeline_needs_a_session(client, number):
    response = client.get(f"/api/incidents/{number}/timeline", status=401)
    assert set(response.json) == {"error"}
