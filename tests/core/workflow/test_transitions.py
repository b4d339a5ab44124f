"""The incident workflow: every row of the table allowed for its role once its
condition holds, refused for lower roles (403), refused while its condition
is unmet (409, with `blockedReason` in the detail), moves outside the table
refused (409), refusals that change nothing, closedAt, notes, the detail's
`transitions` list, visibility, and a property test over random sequences."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.workflow.support import (
    STATUSES,
    TABLE,
    add_action,
    add_root_cause,
    bring_to,
    comments,
    detail,
    entries,
    move,
    new_site,
    rank,
    report,
    set_action,
    timeline,
)

ROWS = sorted(TABLE, key=lambda row: (STATUSES.index(row[0]), STATUSES.index(row[1])))
ROW_IDS = [f"{source}->{target}" for source, target in ROWS]
NOT_IN_TABLE = [(s, t) for s in STATUSES for t in STATUSES if (s, t) not in TABLE]


def as_role(role, admin, make_user):
    return admin if role == "admin" else make_user(role)


def meet_condition(admin, number, source, target):
    """Make the row's condition true on an incident standing at `source`."""
    if (source, target) == ("investigation", "actions"):
        add_root_cause(admin, number)
    elif (source, target) == ("actions", "verification"):
        action = add_action(admin, number)
        set_action(admin, action["id"], status="done")
    elif (source, target) == ("verification", "closed"):
        for action in detail(admin, number)["actions"]:
            set_action(admin, action["id"], status="verified")


def snapshot(admin, number):
    incident = detail(admin, number)
    return {"status": incident["status"], "closedAt": incident["closedAt"],
            "updatedAt": incident["updatedAt"], "comments": comments(admin, number),
            "timeline": timeline(admin, number)}


def blocked(browser, number):
    return {t["to"]: t["blockedReason"] for t in detail(browser, number)["transitions"]}


@pytest.fixture
def site(admin):
    return new_site(admin)


# --- every row, allowed --------------------------------------------------------


@pytest.mark.parametrize("who", ["minimum", "admin"])
@pytest.mark.parametrize(("source", "target"), ROWS, ids=ROW_IDS)
def test_every_row_is_allowed_for_its_role_once_its_condition_holds(admin, make_user, site, source,
                                                                   target, who):
    number = report(admin, site)["number"]
    bring_to(admin, number, source)
    meet_condition(admin, number, source, target)
    role = TABLE[(source, target)] if who == "minimum" else "admin"
    browser = as_role(role, admin, make_user)
    assert blocked(browser, number)[target] is None

    moved = move(browser, number, target).json
    assert moved["status"] == target
    assert moved["number"] == number
    assert detail(admin, number)["status"] == target
    last = timeline(admin, number)[-1]
    assert last["action"] == "incident.transitioned"
    assert last["changes"]["status"] == {"old": source, "new": target}
    me = browser.get("/api/auth/me").json["user"]
    assert last["actor"]["id"] == me["id"]


# --- refused by role ---------------------------------------------------------


@pytest.mark.parametrize(("source", "target"), ROWS, ids=ROW_IDS)
def test_a_reporter_cannot_make_any_move(admin, make_user, site, source, target):
    reporter = make_user("reporter")
    number = report(reporter, site)["number"]  # their own report, so they can see it
    bring_to(admin, number, source)
    meet_condition(admin, number, source, target)
    before = snapshot(admin, number)

    response = move(reporter, number, target, note="let me through", status=403)
    assert response.json["error"]
    assert snapshot(admin, number) == before
    assert detail(reporter, number)["transitions"] == []


@pytest.mark.parametrize(("source", "target"),
                         [row for row in ROWS if TABLE[row] == "safety_manager"],
                         ids=[f"{s}->{t}" for s, t in ROWS if TABLE[(s, t)] == "safety_manager"])
def test_a_supervisor_cannot_make_the_safety_manager_moves(admin, make_user, site, source, target):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    bring_to(admin, number, source)
    meet_condition(admin, number, source, target)
    before = snapshot(admin, number)

    move(supervisor, number, target, note="closing it", status=403)
    assert snapshot(admin, number) == before
    assert target not in blocked(supervisor, number)
    # The same move is open to a safety manager.
    move(make_user("safety_manager"), number, target)


# --- refused by condition ----------------------------------------------------


@pytest.mark.parametrize(("severity", "allowed"), [
    ("low", True), ("medium", True), ("high", False), ("critical", False)])
def test_triage_to_closed_needs_low_or_medium_severity(admin, make_user, site, severity, allowed):
    supervisor = make_user("supervisor")
    number = report(admin, site, severity=severity)["number"]
    bring_to(admin, number, "triage")
    reason = blocked(supervisor, number)["closed"]
    before = snapshot(admin, number)
    if allowed:
        assert reason is None
        assert move(supervisor, number, "closed").json["status"] == "closed"
        return
    assert isinstance(reason, str) and reason
    response = move(supervisor, number, "closed", note="nothing to see", status=409)
    assert response.json["error"]
    assert snapshot(admin, number) == before
    # The other moves from triage stay open.
    assert blocked(supervisor, number)["investigation"] is None
    assert blocked(supervisor, number)["actions"] is None


def test_investigation_to_actions_needs_a_root_cause(admin, make_user, site):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    bring_to(admin, number, "investigation")
    reason = blocked(supervisor, number)["actions"]
    assert isinstance(reason, str) and reason
    before = snapshot(admin, number)
    move(supervisor, number, "actions", note="skip it", status=409)
    assert snapshot(admin, number) == before

    cause = add_root_cause(supervisor, number)
    assert blocked(supervisor, number)["actions"] is None
    supervisor.delete(f"/api/root-causes/{cause['id']}", status=204)
    assert isinstance(blocked(supervisor, number)["actions"], str)
    move(supervisor, number, "actions", status=409)

    add_root_cause(supervisor, number)
    assert move(supervisor, number, "actions").json["status"] == "actions"


@pytest.mark.parametrize(("statuses", "allowed"), [
    ([], False),
    (["open"], False),
    (["in_progress"], False),
    (["done", "open"], False),
    (["done", "in_progress"], False),
    (["done"], True),
    (["done", "cancelled"], True),
    (["cancelled"], True),
    (["verified", "done"], True),
])
def test_actions_to_verification_needs_actions_none_open_or_in_progress(admin, make_user, site,
                                                                        statuses, allowed):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    bring_to(admin, number, "actions")
    for status in statuses:
        action = add_action(admin, number, title=f"Action {status}")
        if status != "open":
            set_action(admin, action["id"], status=status)
    reason = blocked(supervisor, number)["verification"]
    if allowed:
        assert reason is None
        assert move(supervisor, number, "verification").json["status"] == "verification"
    else:
        assert isinstance(reason, str) and reason
        before = snapshot(admin, number)
        move(supervisor, number, "verification", note="done enough", status=409)
        assert snapshot(admin, number) == before


@pytest.mark.parametrize(("statuses", "allowed"), [
    (["done"], False),
    (["verified", "done"], False),
    (["verified"], True),
    (["verified", "cancelled"], True),
])
def test_verification_to_closed_needs_every_live_action_verified(admin, make_user, site, statuses,
                                                                 allowed):
    manager = make_user("safety_manager")
    number = report(admin, site)["number"]
    bring_to(admin, number, "actions")
    ids = []
    for index, _ in enumerate(statuses):
        action = add_action(admin, number, title=f"Action {index}")
        set_action(admin, action["id"], status="done")
        ids.append(action["id"])
    move(admin, number, "verification")
    for action_id, status in zip(ids, statuses, strict=True):
        if status != "done":
            set_action(admin, action_id, status=status)
    reason = blocked(manager, number)["closed"]
    if allowed:
        assert reason is None
        assert move(manager, number, "closed").json["status"] == "closed"
    else:
        assert isinstance(reason, str) and reason
        before = snapshot(admin, number)
        move(manager, number, "closed", note="close anyway", status=409)
        assert snapshot(admin, number) == before
        assert blocked(manager, number)["actions"] is None


# --- moves outside the table ----------------------------------------------


@pytest.mark.parametrize(("source", "target"), NOT_IN_TABLE,
                         ids=[f"{s}->{t}" for s, t in NOT_IN_TABLE])
def test_moves_not_in_the_table_are_refused(admin, site, source, target):
    number = report(admin, site, severity="low")["number"]
    bring_to(admin, number, source)
    add_root_cause(admin, number)  # no condition stands in the way
    before = snapshot(admin, number)
    response = move(admin, number, target, note="jump", status=409)
    assert response.json["error"]
    assert snapshot(admin, number) == before


@pytest.mark.parametrize("body", [{}, {"to": "archived"}, {"to": None}, {"to": 3},
                                  {"to": "triage", "note": 5}])
def test_a_malformed_transition_request_is_a_400(admin, site, body):
    number = report(admin, site)["number"]
    before = snapshot(admin, number)
    response = admin.post_json(f"/api/incidents/{number}/transitions", body, status=400)
    assert response.json["issues"]
    assert snapshot(admin, number) == before


def test_the_update_endpoint_does_not_change_status(admin, site):
    number = report(admin, site)["number"]
    admin.patch_json(f"/api/incidents/{number}", {"status": "closed", "title": "Renamed"},
                     status="*")
    incident = detail(admin, number)
    assert incident["status"] == "reported"
    assert incident["closedAt"] is None


# --- effects ----------------------------------------------------------------------


def test_closed_at_is_set_on_closing_and_cleared_on_reopening(admin, make_user, site):
    manager = make_user("safety_manager")
    number = report(admin, site)["number"]
    assert detail(admin, number)["closedAt"] is None
    move(admin, number, "triage")
    start = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
    closed = move(admin, number, "closed").json
    closed_at = dt.datetime.fromisoformat(closed["closedAt"].replace("Z", "+00:00"))
    assert start <= closed_at <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
    assert detail(admin, number)["closedAt"] == closed["closedAt"]
    last = timeline(admin, number)[-1]
    assert last["changes"]["closedAt"]["old"] is None
    assert last["changes"]["closedAt"]["new"]

    reopened = move(manager, number, "investigation").json
    assert reopened["status"] == "investigation"
    assert reopened["closedAt"] is None
    assert detail(admin, number)["closedAt"] is None
    last = timeline(admin, number)[-1]
    assert last["changes"]["status"] == {"old": "closed", "new": "investigation"}
    assert last["changes"]["closedAt"]["new"] is None
    assert last["changes"]["closedAt"]["old"]

    # Closing again after the reopening sets a new closedAt.
    add_root_cause(admin, number)
    move(admin, number, "actions")
    action = add_action(admin, number)
    set_action(admin, action["id"], status="done")
    move(admin, number, "verification")
    set_action(admin, action["id"], status="verified")
    assert move(manager, number, "closed").json["closedAt"]


def test_closed_at_is_untouched_by_other_moves(admin, site):
    number = report(admin, site)["number"]
    for target in ["triage", "actions", "investigation"]:
        assert move(admin, number, target).json["closedAt"] is None
    assert all("closedAt" not in entry["changes"]
               for entry in entries(admin, number, "incident.transitioned"))


def test_a_note_is_stored_as_a_comment_and_in_the_timeline(admin, make_user, site):
    supervisor = make_user("supervisor")
    reporter = make_user("reporter")
    number = report(reporter, site)["number"]
    move(supervisor, number, "triage", note="Looking into it today")
    move(supervisor, number, "investigation")  # no note, no comment

    found = comments(reporter, number)
    assert len(found) == 1
    assert found[0]["body"] == "Looking into it today"
    assert found[0]["transitionTo"] == "triage"
    assert found[0]["author"]["id"] == supervisor.user["id"]

    moves = entries(reporter, number, "incident.transitioned")
    assert [entry["changes"]["status"] for entry in moves] == [
        {"old": "reported", "new": "triage"}, {"old": "triage", "new": "investigation"}]
    assert moves[0]["changes"]["note"] == {"old": None, "new": "Looking into it today"}
    assert "note" not in moves[1]["changes"]
    assert moves[0]["actor"]["id"] == supervisor.user["id"]


# --- the detail's transitions list --------------------------------------------

# Whether each move is blocked right after `bring_to` (low severity, no root
# cause, one unverified done action once past the actions stage).
BLOCKED_AFTER_BRING_TO = {
    ("reported", "triage"): False,
    ("triage", "investigation"): False,
    ("triage", "actions"): False,
    ("triage", "closed"): False,
    ("investigation", "actions"): True,
    ("actions", "investigation"): False,
    ("actions", "verification"): True,
    ("verification", "actions"): False,
    ("verification", "closed"): True,
    ("closed", "investigation"): False,
}


@pytest.mark.parametrize("role", ["reporter", "supervisor", "safety_manager", "admin"])
@pytest.mark.parametrize("status", STATUSES)
def test_detail_lists_only_the_moves_the_callers_role_allows(admin, make_user, site, status, role):
    browser = as_role(role, admin, make_user)
    number = report(browser, site)["number"]
    bring_to(admin, number, status)
    listed = detail(browser, number)["transitions"]
    expected = {target for (source, target), minimum in TABLE.items()
                if source == status and rank(role) >= rank(minimum)}
    assert sorted(t["to"] for t in listed) == sorted(expected)
    for item in listed:
        assert set(item) >= {"to", "blockedReason"}
        if BLOCKED_AFTER_BRING_TO[(status, item["to"])]:
            assert isinstance(item["blockedReason"], str) and item["blockedReason"]
        else:
            assert item["blockedReason"] is None


# --- visibility -----------------------------------------------------------


def test_an_incident_the_caller_cannot_see_answers_404(admin, make_user, site):
    reporter = make_user("reporter")
    other = make_user("reporter")
    number = report(other, site)["number"]
    before = snapshot(admin, number)
    move(reporter, number, "triage", status=404)
    detail(reporter, number, status=404)
    assert snapshot(admin, number) == before
    move(admin, 99999, "triage", status=404)


def test_transitions_need_a_session(admin, client, site):
    number = report(admin, site)["number"]
    client.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"}, status=401)
    assert detail(admin, number)["status"] == "reported"


# --- property: the status only ever follows table rows ---------------------------

ACTION_STATUSES = ["open", "in_progress", "done", "verified", "cancelled"]
ALL_ROLES = ["reporter", "supervisor", "safety_manager", "admin"]


# A step is drawn before the run starts; "row" moves pick (by index) one of
# the table's rows out of whatever the status is by then, so runs get deep
# into the workflow, while "any" moves ask for any status at all.
STEP = st.one_of(
    st.tuples(st.just("row"), st.sampled_from(ALL_ROLES), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("row"), st.sampled_from(ALL_ROLES[1:]), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("any"), st.sampled_from(ALL_ROLES), st.sampled_from(STATUSES), st.booleans()),
    st.tuples(st.just("cause")),
    st.tuples(st.just("action"), st.sampled_from(ACTION_STATUSES)),
    st.tuples(st.just("finish"), st.sampled_from(["done", "verified"])),
)


def target_of(item, status):
    if item[0] == "any":
        return item[2]
    rows = sorted(target for source, target in TABLE if source == status)
    return rows[item[2] % len(rows)]


def expected_outcome(status, severity, has_cause, actions, role, target):
    """(HTTP status, new incident status) according to the spec's table."""
    if (status, target) not in TABLE:
        return 409, status
    if rank(role) < rank(TABLE[(status, target)]):
        return 403, status
    met = True
    if (status, target) == ("triage", "closed"):
        met = severity in ("low", "medium")
    elif (status, target) == ("investigation", "actions"):
        met = has_cause
    elif (status, target) == ("actions", "verification"):
        met = bool(actions) and not any(a in ("open", "in_progress") for a in actions)
    elif (status, target) == ("verification", "closed"):
        met = all(a in ("verified", "cancelled") for a in actions)
    return (200, target) if met else (409, status)


def test_random_sequences_only_ever_follow_table_rows(admin, make_user, site, inbox):
    clients = {"reporter": make_user("reporter"), "supervisor": make_user("supervisor"),
               "safety_manager": make_user("safety_manager"), "admin": admin}

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(severity=st.sampled_from(["low", "medium", "high", "critical"]),
           steps=st.lists(STEP, max_size=14))
    def run(severity, steps):
        inbox.clear()
        number = report(clients["reporter"], site, severity=severity)["number"]
        status, has_cause, actions, noted = "reported", False, [], []
        for item in steps:
            if item[0] == "cause":
                add_root_cause(admin, number)
                has_cause = True
            elif item[0] == "action":
                if status == "closed":
                    add_action(admin, number, expect=409)
                    continue
                action = add_action(admin, number)
                if item[1] != "open":
                    set_action(admin, action["id"], status=item[1])
                actions.append([action["id"], item[1]])
            elif item[0] == "finish":  # every live action done (or verified)
                for pair in actions:
                    if pair[1] != "cancelled":
                        set_action(admin, pair[0], status=item[1])
                        pair[1] = item[1]
            else:
                role, with_note = item[1], item[3]
                target = target_of(item, status)
                code, after = expected_outcome(status, severity, has_cause, [a for _, a in actions], role,
                                               target)
                move(clients[role], number, target, note="note" if with_note else None, status=code)
                if code == 200 and with_note:
                    noted.append(target)
                status = after
                current = detail(admin, number)
                assert current["status"] == status
                assert (current["closedAt"] is not None) == (status == "closed")
        path = [entry["changes"]["status"] for entry in entries(admin, number, "incident.transitioned")]
        previous = "reported"
        for change in path:
            assert change["old"] == previous
            assert (change["old"], change["new"]) in TABLE
            previous = change["new"]
        assert previous == status
        # Only moves that happened left their notes behind.
        assert [c["transitionTo"] for c in comments(admin, number)] == noted
        if severity in ("high", "critical"):
            # Let the notices to the safety manager and the admin go out before
            # the next example is drawn (the mail thread uses `random`).
            inbox.wait(2)

    run()
