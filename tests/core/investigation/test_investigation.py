"""The investigation of an incident (created on first write, then updated)
and its root causes: who may write them, validation, what the detail shows,
and the audit entries in the timeline."""

from __future__ import annotations

import pytest

from tests.core.workflow.support import add_action, add_root_cause, detail, entries, new_site, report


@pytest.fixture
def site(admin):
    return new_site(admin)


def put(browser, number, body, status=200):
    return browser.put_json(f"/api/incidents/{number}/investigation", body, status=status)


def issue_paths(response):
    assert response.json["error"]
    return {issue["path"] for issue in response.json["issues"]}


# --- investigation --------------------------------------------------------------


def test_put_creates_then_updates_the_investigation(admin, make_user, site):
    supervisor = make_user("supervisor")
    lead = make_user("supervisor")
    number = report(admin, site)["number"]
    assert detail(admin, number)["investigation"] is None

    created = put(supervisor, number, {"leadId": lead.user["id"], "method": "5 whys",
                                       "summary": "Seal failed"}, status=201).json
    assert created["leadId"] == lead.user["id"]
    assert created["method"] == "5 whys"
    assert created["summary"] == "Seal failed"
    assert created["completed"] is False

    updated = put(supervisor, number, {"summary": "Seal failed after 2 years", "completed": True}).json
    assert updated["id"] == created["id"]
    assert updated["leadId"] == lead.user["id"]  # untouched fields stay
    assert updated["method"] == "5 whys"
    assert updated["summary"] == "Seal failed after 2 years"
    assert updated["completed"] is True

    shown = detail(admin, number)["investigation"]
    assert {k: shown[k] for k in ("leadId", "method", "summary", "completed")} == {
        "leadId": lead.user["id"], "method": "5 whys", "summary": "Seal failed after 2 years",
        "completed": True}

    cleared = put(supervisor, number, {"leadId": None, "method": None}).json
    assert cleared["leadId"] is None
    assert cleared["method"] is None


def test_an_empty_put_creates_a_blank_investigation(admin, site):
    number = report(admin, site)["number"]
    created = put(admin, number, {}, status=201).json
    assert created["completed"] is False
    assert created["leadId"] is None
    put(admin, number, {}, status=200)


def test_investigation_timeline_entries_carry_old_and_new(admin, make_user, site):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    put(supervisor, number, {"method": "fishbone", "summary": "First look"}, status=201)
    put(supervisor, number, {"summary": "Second look", "method": "fishbone"})

    [created] = entries(admin, number, "investigation.created")
    assert created["actor"]["id"] == supervisor.user["id"]
    assert created["changes"]["method"] == {"old": None, "new": "fishbone"}
    assert created["changes"]["summary"] == {"old": None, "new": "First look"}

    [updated] = entries(admin, number, "investigation.updated")
    assert updated["actor"]["id"] == supervisor.user["id"]
    assert updated["changes"] == {"summary": {"old": "First look", "new": "Second look"}}


@pytest.mark.parametrize("role", ["supervisor", "safety_manager", "admin"])
def test_supervisors_and_above_may_write_the_investigation(admin, make_user, site, role):
    browser = admin if role == "admin" else make_user(role)
    number = report(admin, site)["number"]
    put(browser, number, {"summary": "ok"}, status=201)


def test_a_reporter_may_not_write_the_investigation(admin, make_user, site):
    reporter = make_user("reporter")
    own = report(reporter, site)["number"]
    other = report(admin, site)["number"]
    put(reporter, own, {"summary": "mine"}, status=403)
    put(reporter, other, {"summary": "theirs"}, status=404)
    assert detail(admin, own)["investigation"] is None
    assert entries(admin, own, "investigation.created") == []


def test_an_unknown_incident_answers_404(admin):
    put(admin, 424242, {"summary": "x"}, status=404)


def test_the_lead_must_exist(admin, site):
    number = report(admin, site)["number"]
    response = put(admin, number, {"leadId": 987654}, status=400)
    assert "leadId" in issue_paths(response)
    assert detail(admin, number)["investigation"] is None


def test_an_inactive_person_cannot_be_made_lead_but_a_lead_deactivated_since_stays(admin, make_user, site):
    number = report(admin, site)["number"]
    gone = make_user("supervisor")
    admin.patch_json(f"/api/users/{gone.user['id']}", {"active": False}, status=200)
    response = put(admin, number, {"leadId": gone.user["id"]}, status=400)
    assert issue_paths(response) == {"leadId"}
    assert detail(admin, number)["investigation"] is None
    lead = make_user("supervisor")
    put(admin, number, {"leadId": lead.user["id"]}, status=201)
    admin.patch_json(f"/api/users/{lead.user['id']}", {"active": False}, status=200)
    # Editing the investigation does not need a new lead first.
    put(admin, number, {"leadId": lead.user["id"], "summary": "Wet floor"})
    assert detail(admin, number)["investigation"]["summary"] == "Wet floor"


@pytest.mark.parametrize("body", [
    {"leadId": "3"}, {"completed": "yes"}, {"completed": None}, {"method": 5}, {"summary": ["x"]},
    {"method": "m" * 101},
])
def test_investigation_fields_are_validated(admin, site, body):
    number = report(admin, site)["number"]
    response = put(admin, number, body, status=400)
    assert set(body) <= issue_paths(response)


# --- root causes -----------------------------------------------------------------


def test_root_causes_are_created_updated_and_deleted(admin, make_user, site):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    cause = add_root_cause(supervisor, number, category="people", description="No training",
                           whys=["Nobody planned it", "No budget"])
    assert cause["category"] == "people"
    assert cause["description"] == "No training"
    assert cause["whys"] == ["Nobody planned it", "No budget"]
    assert [c["id"] for c in detail(admin, number)["rootCauses"]] == [cause["id"]]

    changed = supervisor.patch_json(f"/api/root-causes/{cause['id']}",
                                    {"description": "No induction training", "whys": ["One"]}).json
    assert changed["id"] == cause["id"]
    assert changed["category"] == "people"
    assert changed["description"] == "No induction training"
    assert changed["whys"] == ["One"]
    assert detail(admin, number)["rootCauses"][0]["whys"] == ["One"]

    supervisor.delete(f"/api/root-causes/{cause['id']}", status=204)
    assert detail(admin, number)["rootCauses"] == []
    supervisor.patch_json(f"/api/root-causes/{cause['id']}", {"category": "x"}, status=404)
    supervisor.delete(f"/api/root-causes/{cause['id']}", status=404)


def test_a_root_cause_without_whys_has_an_empty_list(admin, site):
    number = report(admin, site)["number"]
    response = admin.post_json(f"/api/incidents/{number}/root-causes",
                               {"category": "equipment", "description": "Worn seal"}, status="*")
    assert response.status_int == 201, response.text[:300]
    assert response.json["whys"] == []


@pytest.mark.parametrize("whys", ["because", 3, {"a": "b"}, [1, 2], ["ok", None], None])
def test_whys_must_be_a_list_of_strings(admin, site, whys):
    number = report(admin, site)["number"]
    response = add_root_cause(admin, number, expect=400, whys=whys)
    assert "whys" in {issue["path"] for issue in response["issues"]}
    assert detail(admin, number)["rootCauses"] == []


@pytest.mark.parametrize("body", [{"category": ""}, {"description": ""}, {"category": 1},
                                  {"category": None}])
def test_root_cause_fields_are_validated(admin, site, body):
    number = report(admin, site)["number"]
    response = add_root_cause(admin, number, expect=400, **body)
    assert set(body) <= {issue["path"] for issue in response["issues"]}


def test_root_cause_requires_category_and_description(admin, site):
    number = report(admin, site)["number"]
    response = admin.post_json(f"/api/incidents/{number}/root-causes", {"whys": []}, status=400)
    assert {"category", "description"} <= issue_paths(response)


def test_root_cause_update_is_validated(admin, site):
    number = report(admin, site)["number"]
    cause = add_root_cause(admin, number)
    response = admin.patch_json(f"/api/root-causes/{cause['id']}", {"whys": "not a list"}, status=400)
    assert "whys" in issue_paths(response)
    assert detail(admin, number)["rootCauses"][0]["whys"] == cause["whys"]


def test_root_causes_are_for_supervisors_only(admin, make_user, site):
    reporter = make_user("reporter")
    own = report(reporter, site)["number"]
    other = report(admin, site)["number"]
    own_cause = add_root_cause(admin, own)
    other_cause = add_root_cause(admin, other)

    add_root_cause(reporter, own, expect=403)
    add_root_cause(reporter, other, expect=404)
    reporter.patch_json(f"/api/root-causes/{own_cause['id']}", {"category": "x"}, status=403)
    reporter.delete(f"/api/root-causes/{own_cause['id']}", status=403)
    reporter.patch_json(f"/api/root-causes/{other_cause['id']}", {"category": "x"}, status=404)
    reporter.delete(f"/api/root-causes/{other_cause['id']}", status=404)
    assert [c["category"] for c in detail(admin, own)["rootCauses"]] == ["equipment"]
    assert len(detail(admin, other)["rootCauses"]) == 1


def test_root_cause_unknown_ids_answer_404(admin):
    add_root_cause(admin, 515151, expect=404)
    admin.patch_json("/api/root-causes/999999", {"category": "x"}, status=404)
    admin.delete("/api/root-causes/999999", status=404)


def test_root_cause_changes_are_in_the_timeline(admin, make_user, site):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    cause = add_root_cause(supervisor, number, category="equipment", description="Worn seal",
                           whys=["Old"])
    supervisor.patch_json(f"/api/root-causes/{cause['id']}", {"category": "maintenance"})
    supervisor.delete(f"/api/root-causes/{cause['id']}", status=204)

    [created] = entries(admin, number, "root_cause.created")
    assert created["actor"]["id"] == supervisor.user["id"]
    assert created["changes"]["category"] == {"old": None, "new": "equipment"}
    assert created["changes"]["description"] == {"old": None, "new": "Worn seal"}
    assert created["changes"]["whys"] == {"old": None, "new": ["Old"]}

    [updated] = entries(admin, number, "root_cause.updated")
    assert updated["changes"]["category"] == {"old": "equipment", "new": "maintenance"}
    assert "description" not in updated["changes"]

    [deleted] = entries(admin, number, "root_cause.deleted")
    assert deleted["actor"]["id"] == supervisor.user["id"]
    assert deleted["changes"]["category"]["old"] == "maintenance"


def test_deleting_a_root_cause_unlinks_its_actions(admin, site):
    number = report(admin, site)["number"]
    cause = add_root_cause(admin, number)
    action = add_action(admin, number, rootCauseId=cause["id"])
    assert action["rootCauseId"] == cause["id"]
    admin.delete(f"/api/root-causes/{cause['id']}", status=204)
    [shown] = detail(admin, number)["actions"]
    assert shown["id"] == action["id"]
    assert shown["rootCauseId"] is None


def test_root_cause_edits_need_a_session(admin, client, site):
    number = report(admin, site)["number"]
    cause = add_root_cause(admin, number)
    client.post_json(f"/api/incidents/{number}/root-causes",
                     {"category": "x", "description": "y"}, status=401)
    client.put_json(f"/api/incidents/{number}/investigation", {"summary": "x"}, status=401)
    # Like the incident routes, a missing session is a 401, not a 404.
    client.patch_json(f"/api/root-causes/{cause['id']}", {"category": "x"}, status=401)
    client.delete(f"/api/root-causes/{cause['id']}", status=401)
    assert len(detail(admin, number)["rootCauses"]) == 1
