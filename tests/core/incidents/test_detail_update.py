"""An incident's detail view and its update by supervisors: visibility (404
exactly as for a number that does not exist), what the update may change, and
the site/area rules."""

from __future__ import annotations

import pytest

from tests.core.incidents import (
    INCIDENTS,
    add_action,
    file_report,
    issue_paths,
    new_area,
    new_site,
)

DETAIL_SECTIONS = {"investigation", "rootCauses", "actions", "attachments", "transitions", "can"}


def detail(browser, number, status=200):
    return browser.get(f"{INCIDENTS}/{number}", status=status)


def patch(browser, number, body, status=200):
    return browser.patch_json(f"{INCIDENTS}/{number}", body, status=status)


def same_refusal(first, second):
    assert first.status_int == second.status_int
    assert first.content_type == second.content_type
    assert first.body == second.body


# --- visibility ---------------------------------------------------------------


def test_a_reporter_gets_404_for_someone_elses_incident_exactly_as_for_a_missing_one(admin, make_user):
    site = new_site(admin)
    alice = make_user("reporter")
    bob = make_user("reporter")
    file_report(bob, site["id"], title="Bob's secret")
    hidden = detail(alice, 1, status=404)
    missing = detail(alice, 999, status=404)
    same_refusal(hidden, missing)
    assert "Bob" not in hidden.text
    assert hidden.json == {"error": "Not found"}


@pytest.mark.parametrize("suffix", ["/comments", "/timeline"])
def test_related_reads_of_an_invisible_incident_are_404_too(admin, make_user, suffix):
    site = new_site(admin)
    alice = make_user("reporter")
    file_report(admin, site["id"])
    same_refusal(alice.get(f"{INCIDENTS}/1{suffix}", status=404),
                 alice.get(f"{INCIDENTS}/999{suffix}", status=404))


def test_a_reporter_sees_own_incident_and_one_with_an_action_assigned(admin, make_user):
    site = new_site(admin)
    alice = make_user("reporter")
    file_report(alice, site["id"], title="Mine")
    file_report(admin, site["id"], title="Assigned")
    detail(alice, 2, status=404)
    add_action(admin, 2, alice.user["id"])
    assert detail(alice, 1).json["title"] == "Mine"
    assert detail(alice, 2).json["title"] == "Assigned"


def test_a_section_shown_with_a_permission_is_checked_on_the_incident(admin, make_user, registry,
                                                                       monkeypatch):
    """A plugin's column section shown only with a permission: the detail
    asks it on the incident (its ACL), as for every other check of the
    detail, though the incident and its other sections are read before the
    incident's context exists."""
    from sqlalchemy import func, select

    from ehs_core.actions.models import CorrectiveAction
    from ehs_core.incidents.extensions import IncidentSection
    from ehs_core.incidents.models import Incident
    from ehs_core.security import Permission

    def count_column():
        return select(func.count()).where(CorrectiveAction.incident_id == Incident.id).scalar_subquery()

    section = IncidentSection("actionCount", None, permission=Permission.update_incident, detail_only=True,
                              column=count_column)
    monkeypatch.setitem(registry, "incident_sections", [*registry["incident_sections"], section])
    site = new_site(admin)
    alice = make_user("reporter")
    file_report(alice, site["id"], title="Mine")
    add_action(admin, 1, alice.user["id"])
    assert detail(admin, 1).json["actionCount"] == 1
    assert "actionCount" not in detail(alice, 1).json
    assert "actionCount" not in admin.get(INCIDENTS).json["items"][0]  # detail only
    assert admin.get("/incidents/1").status_int == 200


def test_the_detail_needs_a_session(admin, client):
    site = new_site(admin)
    file_report(admin, site["id"])
    assert list(detail(client, 1, status=401).json) == ["error"]


def test_detail_has_every_section(admin, make_user):
    site = new_site(admin)
    file_report(admin, site["id"])
    add_action(admin, 1, None, title="Dry the floor")
    body = detail(admin, 1).json
    assert DETAIL_SECTIONS <= set(body)
    assert body["investigation"] is None
    assert body["rootCauses"] == []
    assert [a["title"] for a in body["actions"]] == ["Dry the floor"]
    assert body["attachments"] == []
    assert body["reference"] == "INC-0001"


def test_can_and_transitions_differ_for_a_reporter_and_a_supervisor(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    file_report(reporter, site["id"])
    mine = detail(reporter, 1).json
    theirs = detail(supervisor, 1).json
    assert mine["transitions"] == []
    assert theirs["transitions"] == [{"to": "triage", "blockedReason": None}]
    assert mine["can"] == {"update": False, "transition": False, "comment": True, "upload": True,
                           "investigate": False, "addRootCause": False, "addAction": False}
    assert theirs["can"] == {"update": True, "transition": True, "comment": True, "upload": True,
                             "investigate": True, "addRootCause": True, "addAction": True}


def test_the_detail_of_a_closed_incident_offers_no_new_action(admin):
    site = new_site(admin)
    file_report(admin, site["id"], severity="low")
    for to in ("triage", "closed"):
        admin.post_json(f"{INCIDENTS}/1/transitions", {"to": to}, status=200)
    body = detail(admin, 1).json
    assert body["status"] == "closed" and body["closedAt"]
    assert body["can"]["addAction"] is False
    assert body["transitions"] == [{"to": "investigation", "blockedReason": None}]


# --- who may update -----------------------------------------------------------------


def test_a_reporter_cannot_update_own_incident(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    file_report(reporter, site["id"], title="Original")
    response = patch(reporter, 1, {"title": "Changed"}, status=403)
    assert list(response.json) == ["error"]
    assert detail(admin, 1).json["title"] == "Original"


def test_a_reporter_gets_404_when_updating_an_incident_they_cannot_see(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    file_report(admin, site["id"], title="Original")
    same_refusal(patch(reporter, 1, {"title": "Changed"}, status=404),
                 patch(reporter, 999, {"title": "Changed"}, status=404))
    assert detail(admin, 1).json["title"] == "Original"


def test_updating_needs_a_session(admin, client):
    site = new_site(admin)
    file_report(admin, site["id"], title="Original")
    patch(client, 1, {"title": "Changed"}, status=401)
    assert detail(admin, 1).json["title"] == "Original"


@pytest.mark.parametrize("role", ["supervisor", "safety_manager", "admin"])
def test_supervisors_and_above_may_update(admin, make_user, role):
    site = new_site(admin)
    file_report(admin, site["id"], title="Original")
    browser = admin if role == "admin" else make_user(role)
    assert patch(browser, 1, {"title": f"Changed by {role}"}).json["title"] == f"Changed by {role}"


# --- what an update changes -----------------------------------------------------------


def test_a_supervisor_updates_the_report_fields(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    file_report(reporter, site["id"])
    changes = {"title": "Hydraulic leak", "type": "environmental", "severity": "high",
               "occurredAt": "2025-12-31T23:30:00-05:00", "locationDetail": "Bay 4",
               "description": "Hose burst", "immediateAction": "Valve closed"}
    body = patch(supervisor, 1, changes).json
    assert {key: body[key] for key in changes} == changes
    assert DETAIL_SECTIONS <= set(body)
    again = detail(reporter, 1).json
    assert {key: again[key] for key in changes} == changes
    assert again["reporter"]["id"] == reporter.user["id"]
    timeline = admin.get(f"{INCIDENTS}/1/timeline").json
    assert timeline[-1]["action"] == "incident.updated"
    assert timeline[-1]["actor"]["id"] == supervisor.user["id"]
    assert timeline[-1]["changes"]["title"] == {"old": "Oil on the floor", "new": "Hydraulic leak"}


def test_an_update_leaves_fields_it_does_not_name(admin):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    file_report(admin, site["id"], areaId=area["id"], description="Keep me", severity="medium")
    body = patch(admin, 1, {"title": "Only the title"}).json
    assert (body["description"], body["severity"], body["areaId"]) == ("Keep me", "medium", area["id"])


def test_optional_text_can_be_cleared_with_null(admin):
    site = new_site(admin)
    file_report(admin, site["id"], description="Old", locationDetail="Bay 1")
    body = patch(admin, 1, {"description": None, "locationDetail": None}).json
    assert (body["description"], body["locationDetail"]) == (None, None)


def test_status_in_an_update_is_refused_naming_the_transitions_endpoint(admin, make_user):
    site = new_site(admin)
    supervisor = make_user("supervisor")
    file_report(admin, site["id"])
    response = patch(supervisor, 1, {"status": "closed", "title": "Renamed"}, status=400)
    [issue] = response.json["issues"]
    assert issue["path"] == "status"
    assert "/transitions" in issue["message"]
    stored = detail(admin, 1).json
    assert (stored["status"], stored["title"]) == ("reported", "Oil on the floor")


def test_anonymous_in_an_update_is_refused_and_changes_nothing(admin, make_user):
    site = new_site(admin)
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    file_report(reporter, site["id"], title="Named")
    response = patch(supervisor, 1, {"anonymous": True, "title": "Renamed"}, status=400)
    assert response.json["issues"] == [
        {"path": "anonymous", "message": "Whether a report is anonymous is fixed when it is filed"}]
    body = detail(reporter, 1).json
    assert (body["anonymous"], body["title"]) == (False, "Named")
    # Nor can an anonymous report be claimed afterwards.
    file_report(reporter, site["id"], anonymous=True)
    response = patch(supervisor, 2, {"anonymous": False, "reporterId": reporter.user["id"]}, status=400)
    assert issue_paths(response) == {"anonymous", "reporterId"}
    detail(reporter, 2, status=404)


def test_a_misspelled_field_is_refused_naming_the_fields_the_call_takes(admin, make_user):
    site = new_site(admin)
    file_report(admin, site["id"])
    response = patch(admin, 1, {"titel": "Renamed"}, status=400)
    [issue] = response.json["issues"]
    assert issue["path"] == "titel"
    assert issue["message"].startswith("Unknown field; the fields this call takes are: title, type")
    assert detail(admin, 1).json["title"] == "Oil on the floor"


@pytest.mark.parametrize(("field", "value"), [
    ("title", ""),
    ("title", None),
    ("type", "fire"),
    ("severity", None),
    ("occurredAt", "2026-01-01T08:00:00"),
    ("occurredAt", "2999-01-01T08:00:00+00:00"),
    ("siteId", None),
    ("siteId", "2"),
    ("areaId", "3"),
])
def test_update_values_are_checked(admin, field, value):
    site = new_site(admin)
    file_report(admin, site["id"], title="Original")
    assert issue_paths(patch(admin, 1, {field: value}, status=400)) == {field}
    assert detail(admin, 1).json["title"] == "Original"


def test_an_empty_update_changes_nothing(admin):
    site = new_site(admin)
    before = file_report(admin, site["id"])
    body = patch(admin, 1, {}).json
    assert body["updatedAt"] == before["updatedAt"]
    assert [e["action"] for e in admin.get(f"{INCIDENTS}/1/timeline").json] == ["incident.created"]


# --- site and area on update ----------------------------------------------------------------


def two_sites(admin):
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    north_area = new_area(admin, north["id"], "Assembly")
    south_area = new_area(admin, south["id"], "Paint shop")
    file_report(admin, north["id"], areaId=north_area["id"])
    return north, south, north_area, south_area


def test_moving_to_another_site_clears_the_area(admin):
    _, south, _, _ = two_sites(admin)
    body = patch(admin, 1, {"siteId": south["id"]}).json
    assert (body["siteId"], body["siteName"], body["areaId"], body["areaName"]) == \
        (south["id"], "Plant South", None, None)
    assert detail(admin, 1).json["areaId"] is None


def test_moving_with_a_new_area_keeps_that_area(admin):
    _, south, _, south_area = two_sites(admin)
    body = patch(admin, 1, {"siteId": south["id"], "areaId": south_area["id"]}).json
    assert (body["siteId"], body["areaId"], body["areaName"]) == (south["id"], south_area["id"], "Paint shop")


def test_naming_the_same_site_keeps_the_area(admin):
    north, _, north_area, _ = two_sites(admin)
    body = patch(admin, 1, {"siteId": north["id"], "title": "Renamed"}).json
    assert (body["siteId"], body["areaId"]) == (north["id"], north_area["id"])


def test_moving_with_an_area_of_the_old_site_is_refused(admin):
    north, south, north_area, _ = two_sites(admin)
    response = patch(admin, 1, {"siteId": south["id"], "areaId": north_area["id"]}, status=400)
    assert issue_paths(response) == {"areaId"}
    body = detail(admin, 1).json
    assert (body["siteId"], body["areaId"]) == (north["id"], north_area["id"])


def test_an_area_of_another_site_is_refused_on_update(admin):
    north, _, north_area, south_area = two_sites(admin)
    assert issue_paths(patch(admin, 1, {"areaId": south_area["id"]}, status=400)) == {"areaId"}
    assert issue_paths(patch(admin, 1, {"areaId": 999_999}, status=400)) == {"areaId"}
    body = detail(admin, 1).json
    assert (body["siteId"], body["areaId"]) == (north["id"], north_area["id"])


def test_the_area_can_be_changed_or_cleared_within_the_site(admin):
    north, _, _, _ = two_sites(admin)
    other = new_area(admin, north["id"], "Warehouse")
    assert patch(admin, 1, {"areaId": other["id"]}).json["areaName"] == "Warehouse"
    assert patch(admin, 1, {"areaId": None}).json["areaId"] is None


def test_moving_to_an_unknown_site_is_refused(admin):
    north, _, north_area, _ = two_sites(admin)
    assert issue_paths(patch(admin, 1, {"siteId": 999_999}, status=400)) == {"siteId"}
    body = detail(admin, 1).json
    assert (body["siteId"], body["areaId"]) == (north["id"], north_area["id"])
