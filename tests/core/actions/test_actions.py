"""Corrective actions: creation (who, closed incidents, references), the
assignment email, who may set which fields and statuses, the computed
`overdue` flag, the /api/actions list (scope, filter, order) and the
timeline entries."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.core.workflow.support import (
    add_action,
    add_root_cause,
    body_of,
    bring_to,
    day,
    detail,
    entries,
    new_site,
    report,
    set_action,
)

ACTION_STATUSES = ["open", "in_progress", "done", "verified", "cancelled"]


@pytest.fixture
def site(admin):
    return new_site(admin)


def issue_paths(response):
    assert response.json["error"]
    return {issue["path"] for issue in response.json["issues"]}


def assigned_mails(inbox, address=None):
    found = inbox.settle() if address is None else inbox.to(address)
    return [m for m in found if m["Subject"].startswith("Action assigned")
            and (address is None or m["To"] == address)]


def listing(browser, query="", status=200):
    return browser.get(f"/api/actions{query}", status=status)


def ids(items):
    return [item["id"] for item in items]


def action_in_detail(browser, number, action_id):
    return next(a for a in detail(browser, number)["actions"] if a["id"] == action_id)


# --- creation ------------------------------------------------------------------


def test_a_supervisor_creates_an_action(admin, make_user, site):
    supervisor = make_user("supervisor")
    assignee = make_user("reporter", name="Rita Reporter")
    number = report(admin, site)["number"]
    cause = add_root_cause(admin, number)
    created = add_action(supervisor, number, title="Replace the seal", description="Use type B",
                         kind="corrective", assigneeId=assignee.user["id"], dueDate=day(7),
                         rootCauseId=cause["id"])
    assert created["title"] == "Replace the seal"
    assert created["description"] == "Use type B"
    assert created["kind"] == "corrective"
    assert created["assigneeId"] == assignee.user["id"]
    assert created["assignee"] == {"id": assignee.user["id"], "name": "Rita Reporter"}
    assert created["dueDate"] == day(7)
    assert created["rootCauseId"] == cause["id"]
    assert created["status"] == "open"
    assert created["overdue"] is False
    shown = action_in_detail(admin, number, created["id"])
    assert shown["title"] == "Replace the seal"
    assert shown["status"] == "open"


def test_an_action_needs_only_a_title(admin, site):
    number = report(admin, site)["number"]
    created = add_action(admin, number, title="Sweep the floor")
    assert created["assigneeId"] is None
    assert created["dueDate"] is None
    assert created["rootCauseId"] is None
    assert created["status"] == "open"


@pytest.mark.parametrize("role", ["supervisor", "safety_manager", "admin"])
def test_supervisors_and_above_may_create_actions(admin, make_user, site, role):
    browser = admin if role == "admin" else make_user(role)
    number = report(admin, site)["number"]
    add_action(browser, number)


def test_a_reporter_may_not_create_actions(admin, make_user, site):
    reporter = make_user("reporter")
    own = report(reporter, site)["number"]
    other = report(admin, site)["number"]
    add_action(reporter, own, expect=403)
    add_action(reporter, other, expect=404)
    add_action(admin, 777777, expect=404)
    assert detail(admin, own)["actions"] == []
    assert detail(admin, other)["actions"] == []


def test_a_closed_incident_takes_no_actions(admin, site):
    number = report(admin, site)["number"]
    bring_to(admin, number, "closed")
    before = detail(admin, number)["actions"]
    response = add_action(admin, number, expect=409, title="Late idea")
    assert response["error"]
    assert detail(admin, number)["actions"] == before
    assert detail(admin, number)["can"]["addAction"] is False
    # Reopened, it takes actions again.
    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "investigation"})
    add_action(admin, number, title="Late idea")


def test_the_assignee_must_exist_and_be_active(admin, make_user, site):
    number = report(admin, site)["number"]
    response = admin.post_json(f"/api/incidents/{number}/actions",
                               {"title": "x", "assigneeId": 999999}, status=400)
    assert "assigneeId" in issue_paths(response)

    gone = make_user("reporter")
    admin.patch_json(f"/api/users/{gone.user['id']}", {"active": False})
    response = admin.post_json(f"/api/incidents/{number}/actions",
                               {"title": "x", "assigneeId": gone.user["id"]}, status=400)
    assert "assigneeId" in issue_paths(response)

    action = add_action(admin, number)
    response = admin.patch_json(f"/api/actions/{action['id']}", {"assigneeId": gone.user["id"]},
                                status=400)
    assert "assigneeId" in issue_paths(response)
    assert [a["assigneeId"] for a in detail(admin, number)["actions"]] == [None]


def test_the_root_cause_must_belong_to_the_same_incident(admin, site):
    number = report(admin, site)["number"]
    other = report(admin, site)["number"]
    foreign = add_root_cause(admin, other)
    for root_cause_id in (foreign["id"], 999999):
        response = admin.post_json(f"/api/incidents/{number}/actions",
                                   {"title": "x", "rootCauseId": root_cause_id}, status=400)
        assert "rootCauseId" in issue_paths(response)
    assert detail(admin, number)["actions"] == []

    action = add_action(admin, number)
    response = admin.patch_json(f"/api/actions/{action['id']}", {"rootCauseId": foreign["id"]},
                                status=400)
    assert "rootCauseId" in issue_paths(response)
    own = add_root_cause(admin, number)
    assert set_action(admin, action["id"], rootCauseId=own["id"])["rootCauseId"] == own["id"]


@pytest.mark.parametrize("body", [
    {}, {"title": ""}, {"title": 5}, {"title": "x", "dueDate": "tomorrow"},
    {"title": "x", "dueDate": "2026-02-30"}, {"title": "x", "assigneeId": "1"},
    {"title": "x" * 201},
])
def test_action_fields_are_validated(admin, site, body):
    number = report(admin, site)["number"]
    response = admin.post_json(f"/api/incidents/{number}/actions", body, status=400)
    assert response.json["issues"]
    assert detail(admin, number)["actions"] == []


# --- the assignment email --------------------------------------------------------


def test_the_assignee_is_mailed(admin, make_user, inbox, site):
    assignee = make_user("reporter")
    number = report(admin, site, title="Leaking valve")["number"]
    reference = detail(admin, number)["reference"]
    add_action(admin, number, title="Replace the gasket", assigneeId=assignee.user["id"],
               dueDate=day(5))
    inbox.wait(1)
    inbox.settle()
    [mail] = assigned_mails(inbox, assignee.user["email"])
    assert "Replace the gasket" in mail["Subject"]
    assert reference in mail["Subject"]
    text = body_of(mail)
    assert "Replace the gasket" in text
    due = dt.date.fromisoformat(day(5))
    assert f"Due: {due.day} {due:%b %Y}" in text  # in words, not ISO
    assert f"/incidents/{number}" in text
    action_id = detail(admin, number)["actions"][0]["id"]
    assert f"/actions/{action_id}\r\n" in text  # the page where the assignee acts
    assert [m for m in assigned_mails(inbox) if m["To"] != assignee.user["email"]] == []


def test_the_assignment_mail_says_what_why_and_by_when(admin, make_user, inbox, site):
    """Issue #36 item 13: the mail alone is enough to start: the action's
    description, the root cause it answers and its due date."""
    from tests.core.workflow.support import add_root_cause, bring_to

    assignee = make_user("reporter")
    number = report(admin, site, title="Leaking valve")["number"]
    bring_to(admin, number, "investigation")
    cause = add_root_cause(admin, number, category="Equipment", description="The gasket was brittle")
    add_action(admin, number, title="Replace the gasket", assigneeId=assignee.user["id"], dueDate=day(5),
               description="Use the EPDM gasket from store B.", rootCauseId=cause["id"])
    inbox.wait(1)
    [mail] = assigned_mails(inbox, assignee.user["email"])
    text = body_of(mail)
    assert "Use the EPDM gasket from store B." in text
    assert "Why: Equipment: The gasket was brittle" in text
    assert "Due: " in text


def test_no_mail_without_an_assignee(admin, inbox, site):
    number = report(admin, site)["number"]
    add_action(admin, number, title="Nobody's job")
    assert assigned_mails(inbox) == []


def test_a_new_assignee_is_mailed(admin, make_user, inbox, site):
    first = make_user("reporter")
    second = make_user("reporter")
    number = report(admin, site)["number"]
    action = add_action(admin, number, title="Fix the rail", assigneeId=first.user["id"])
    inbox.wait(1)
    set_action(admin, action["id"], assigneeId=second.user["id"])
    inbox.wait(2)
    inbox.settle()
    assert len(assigned_mails(inbox, first.user["email"])) == 1
    assert len(assigned_mails(inbox, second.user["email"])) == 1


# --- who may set what ------------------------------------------------------------


@pytest.mark.parametrize("status", ["open", "in_progress", "done", "cancelled"])
def test_a_supervisor_sets_any_status_but_verified(admin, make_user, site, status):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    action = add_action(admin, number)
    if status == "open":
        set_action(supervisor, action["id"], status="in_progress")
    assert set_action(supervisor, action["id"], status=status)["status"] == status


def test_a_supervisor_edits_any_field(admin, make_user, site):
    supervisor = make_user("supervisor")
    assignee = make_user("reporter")
    number = report(admin, site)["number"]
    cause = add_root_cause(admin, number)
    action = add_action(admin, number)
    changed = set_action(supervisor, action["id"], title="New title", description="More",
                         kind="preventive", assigneeId=assignee.user["id"], dueDate=day(3),
                         rootCauseId=cause["id"], status="in_progress")
    assert {k: changed[k] for k in ("title", "description", "kind", "assigneeId", "dueDate",
                                    "rootCauseId", "status")} == {
        "title": "New title", "description": "More", "kind": "preventive",
        "assigneeId": assignee.user["id"], "dueDate": day(3), "rootCauseId": cause["id"],
        "status": "in_progress"}
    cleared = set_action(supervisor, action["id"], dueDate=None, assigneeId=None, description=None)
    assert cleared["dueDate"] is None
    assert cleared["assigneeId"] is None
    assert cleared["description"] is None


def test_a_supervisor_may_not_verify(admin, make_user, site):
    supervisor = make_user("supervisor")
    number = report(admin, site)["number"]
    action = add_action(admin, number)
    set_action(admin, action["id"], status="done")
    set_action(supervisor, action["id"], expect=403, status="verified")
    set_action(supervisor, action["id"], expect=403, status="verified", title="Sneaky")
    shown = action_in_detail(admin, number, action["id"])
    assert shown["status"] == "done"
    assert shown["title"] == action["title"]


@pytest.mark.parametrize("role", ["safety_manager", "admin"])
def test_a_safety_manager_may_verify(admin, make_user, site, role):
    browser = admin if role == "admin" else make_user(role)
    number = report(admin, site)["number"]
    action = add_action(admin, number)
    set_action(admin, action["id"], status="done")
    assert set_action(browser, action["id"], status="verified")["status"] == "verified"
    assert action_in_detail(admin, number, action["id"])["status"] == "verified"


def test_the_assignee_sets_only_open_in_progress_or_done(admin, make_user, site):
    assignee = make_user("reporter")
    number = report(admin, site)["number"]
    action = add_action(admin, number, assigneeId=assignee.user["id"])
    # Being assigned makes the incident visible to them.
    assert detail(assignee, number)["number"] == number
    for status in ["in_progress", "done", "open", "done"]:
        assert set_action(assignee, action["id"], status=status)["status"] == status
    for status in ["verified", "cancelled"]:
        set_action(assignee, action["id"], expect=403, status=status)
    assert action_in_detail(admin, number, action["id"])["status"] == "done"


@pytest.mark.parametrize("body", [
    {"title": "Mine now"}, {"description": "x"}, {"kind": "x"}, {"dueDate": "2030-01-01"},
    {"dueDate": None}, {"assigneeId": None}, {"rootCauseId": None},
    {"status": "done", "title": "Mine now"},
])
def test_the_assignee_may_not_change_other_fields(admin, make_user, site, body):
    assignee = make_user("reporter")
    number = report(admin, site)["number"]
    action = add_action(admin, number, assigneeId=assignee.user["id"], dueDate=day(4))
    before = action_in_detail(admin, number, action["id"])
    set_action(assignee, action["id"], expect=403, **body)
    assert action_in_detail(admin, number, action["id"]) == before


def test_a_reporter_who_is_not_the_assignee_may_not_edit(admin, make_user, site):
    assignee = make_user("reporter")
    filer = make_user("reporter")
    stranger = make_user("reporter")
    number = report(filer, site)["number"]
    action = add_action(admin, number, assigneeId=assignee.user["id"])
    set_action(filer, action["id"], expect=403, status="done")  # can see the incident
    set_action(stranger, action["id"], expect=404, status="done")  # cannot
    unassigned = add_action(admin, number)
    set_action(filer, unassigned["id"], expect=403, status="done")
    set_action(stranger, unassigned["id"], expect=404, status="done")
    assert {a["status"] for a in detail(admin, number)["actions"]} == {"open"}


def test_unknown_actions_answer_404(admin):
    set_action(admin, 999999, expect=404, status="done")


def test_actions_need_a_session(admin, client, site):
    number = report(admin, site)["number"]
    action = add_action(admin, number)
    client.get("/api/actions", status=401)
    client.post_json(f"/api/incidents/{number}/actions", {"title": "x"}, status=401)
    # Like every other signed-in endpoint (the incident routes included), a
    # missing session is a 401, whether or not the id exists.
    client.patch_json(f"/api/actions/{action['id']}", {"status": "done"}, status=401)
    assert detail(admin, number)["actions"][0]["status"] == "open"


@pytest.mark.parametrize("body", [{"status": "finished"}, {"status": None}, {"title": ""},
                                  {"dueDate": "31/12/2030"}])
def test_action_updates_are_validated(admin, site, body):
    number = report(admin, site)["number"]
    action = add_action(admin, number)
    response = admin.patch_json(f"/api/actions/{action['id']}", body, status=400)
    assert set(body) <= issue_paths(response)


# --- overdue ---------------------------------------------------------------------


@pytest.mark.parametrize(("status", "due", "overdue"), [
    ("open", -1, True),
    ("in_progress", -1, True),
    ("open", -40, True),
    ("done", -1, False),
    ("verified", -1, False),
    ("cancelled", -1, False),
    ("open", 0, False),
    ("in_progress", 0, False),
    ("open", 1, False),
    ("open", None, False),
])
def test_overdue_is_computed_in_the_server_zone(admin, site, status, due, overdue):
    number = report(admin, site)["number"]
    action = add_action(admin, number, dueDate=None if due is None else day(due))
    if status in ("verified",):
        set_action(admin, action["id"], status="done")
    if status != "open":
        assert set_action(admin, action["id"], status=status)["overdue"] is overdue
    assert action_in_detail(admin, number, action["id"])["overdue"] is overdue
    [listed] = [a for a in listing(admin, "?scope=all").json if a["id"] == action["id"]]
    assert listed["overdue"] is overdue


def test_overdue_follows_status_changes(admin, site):
    number = report(admin, site)["number"]
    action = add_action(admin, number, dueDate=day(-2))
    assert action["overdue"] is True
    assert set_action(admin, action["id"], status="done")["overdue"] is False
    assert set_action(admin, action["id"], status="in_progress")["overdue"] is True
    assert set_action(admin, action["id"], dueDate=day(2))["overdue"] is False


# --- the list --------------------------------------------------------------------


@pytest.fixture
def board(admin, make_user, site):
    """One reporter's actions in every state, plus someone else's."""
    me = make_user("reporter")
    other = make_user("reporter")
    first = report(admin, site, title="First")["number"]
    second = report(admin, site, title="Second")["number"]
    made = {}
    for name, number, status, due in [
        ("open-late", first, "open", -3),
        ("progress-late", second, "in_progress", -1),
        ("open-today", first, "open", 0),
        ("open-later", second, "open", 10),
        ("open-undated", first, "open", None),
        ("done-late", first, "done", -5),
        ("verified", second, "verified", 2),
        ("cancelled-late", first, "cancelled", -2),
    ]:
        action = add_action(admin, number, title=name, assigneeId=me.user["id"],
                            dueDate=None if due is None else day(due))
        if status == "verified":
            set_action(admin, action["id"], status="done")
        if status != "open":
            set_action(admin, action["id"], status=status)
        made[name] = action["id"]
    made["theirs"] = add_action(admin, first, title="theirs", assigneeId=other.user["id"],
                                dueDate=day(-9))["id"]
    made["nobody"] = add_action(admin, second, title="nobody")["id"]
    return me, other, made, (first, second)


def titles(response):
    return [item["title"] for item in response.json]


def test_mine_lists_only_my_actions_by_due_date_nulls_last(admin, board):
    me, _, _, (first, _) = board
    assert titles(listing(me)) == titles(listing(me, "?scope=mine&filter=all"))
    assert titles(listing(me)) == ["done-late", "open-late", "cancelled-late", "progress-late",
                                   "open-today", "verified", "open-later", "open-undated"]
    item = next(i for i in listing(me).json if i["title"] == "open-late")
    assert item["incident"]["number"] == first
    assert item["incident"]["title"] == "First"
    assert item["incident"]["reference"] == detail(admin, first)["reference"]
    assert item["incident"]["status"] == "reported"


@pytest.mark.parametrize(("query", "expected"), [
    ("?filter=open", ["open-late", "progress-late", "open-today", "open-later", "open-undated"]),
    ("?filter=overdue", ["open-late", "progress-late"]),
    ("?filter=done", ["done-late", "verified"]),
])
def test_filters(board, query, expected):
    me = board[0]
    assert titles(listing(me, query)) == expected


def test_all_needs_a_supervisor(admin, make_user, board):
    me, other, made, _ = board
    listing(me, "?scope=all", status=403)
    listing(other, "?scope=all&filter=open", status=403)
    supervisor = make_user("supervisor")
    everything = listing(supervisor, "?scope=all").json
    assert set(ids(everything)) == set(made.values())
    dues = [item["dueDate"] for item in everything]
    dated = [d for d in dues if d is not None]
    assert dated == sorted(dated)
    assert dues == dated + [None] * (len(dues) - len(dated))
    overdue = titles(listing(supervisor, "?scope=all&filter=overdue"))
    assert overdue == ["theirs", "open-late", "progress-late"]
    assert listing(supervisor).json == []  # nothing assigned to the supervisor


def test_a_reporter_sees_their_own_list(board):
    _, other, _, _ = board
    assert titles(listing(other)) == ["theirs"]


@pytest.mark.parametrize("query", ["?scope=everyone", "?filter=late", "?filter=", "?scope=ALL",
                                   "?filter=Open"])
def test_bad_list_parameters_are_a_400(admin, query):
    response = listing(admin, query, status=400)
    assert response.json["issues"]


# --- the timeline --------------------------------------------------------------


def test_action_changes_are_in_the_timeline(admin, make_user, site):
    supervisor = make_user("supervisor")
    assignee = make_user("reporter")
    number = report(admin, site)["number"]
    action = add_action(supervisor, number, title="Guard the belt", assigneeId=assignee.user["id"],
                        dueDate=day(3))
    set_action(assignee, action["id"], status="in_progress")
    set_action(supervisor, action["id"], title="Guard the belt and pulley", dueDate=day(4))

    [created] = entries(admin, number, "action.created")
    assert created["actor"]["id"] == supervisor.user["id"]
    assert created["changes"]["title"] == {"old": None, "new": "Guard the belt"}
    assert created["changes"]["assigneeId"] == {"old": None, "new": assignee.user["id"]}
    assert created["changes"]["dueDate"] == {"old": None, "new": day(3)}
    assert created["changes"]["status"]["new"] == "open"

    first, second = entries(admin, number, "action.updated")
    assert first["actor"]["id"] == assignee.user["id"]
    assert first["changes"]["status"] == {"old": "open", "new": "in_progress"}
    assert "title" not in first["changes"]
    assert second["actor"]["id"] == supervisor.user["id"]
    assert second["changes"]["title"] == {"old": "Guard the belt", "new": "Guard the belt and pulley"}
    assert second["changes"]["dueDate"] == {"old": day(3), "new": day(4)}
    assert "status" not in second["changes"]


def test_refused_action_changes_leave_no_trace(admin, make_user, site):
    assignee = make_user("reporter")
    number = report(admin, site)["number"]
    action = add_action(admin, number, assigneeId=assignee.user["id"])
    set_action(assignee, action["id"], expect=403, title="Nope")
    set_action(assignee, action["id"], expect=403, status="verified")
    assert entries(admin, number, "action.updated") == []


@pytest.mark.parametrize("due", ["0001-01-01", "1969-12-31", "3000-01-01"])
def test_an_action_due_outside_the_service_era_is_refused(admin, due):
    site = new_site(admin)
    incident = report(admin, site)
    response = admin.post_json(f"/api/incidents/{incident['number']}/actions",
                               {"title": "Fix", "dueDate": due}, status=400)
    assert [issue["path"] for issue in response.json["issues"]] == ["dueDate"]
    assert detail(admin, incident["number"])["actions"] == []


def test_evidence_of_an_action_by_the_api_is_for_who_may_change_it(admin, make_user):
    """`POST /api/actions/:id/evidence` (multipart `file`): the assignee or a
    supervisor; anyone else gets the 404 of an action they cannot see."""
    from ehs_core.testing import new_site
    from tests.core.attachments import samples
    from tests.core.workflow.support import add_action, report

    worker, stranger = make_user("reporter"), make_user("reporter")
    number = report(admin, new_site(admin)["id"])["number"]
    action = add_action(admin, number, title="Fix", assigneeId=worker.user["id"])
    path = f"/api/actions/{action['id']}/evidence"
    made = worker.post(path, upload_files=[("file", "done.png", samples.PNG, "image/png")], status=201).json
    assert made["actionId"] == action["id"] and made["filename"] == "done.png"
    stranger.post(path, upload_files=[("file", "x.png", samples.PNG, "image/png")], status=404)
    worker.post(path, upload_files=[("file", "x.html", samples.HTML, "text/html")], status=415)
    worker.post(path, {"note": "no file"}, status=415)  # not multipart: says how to send it
    assert [e["id"] for e in worker.get("/api/actions").json[0]["evidence"]] == [made["id"]]
