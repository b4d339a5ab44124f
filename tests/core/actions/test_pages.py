"""The action pages per role: /actions lists the caller's own (everyone's for
supervisors and above) by open, overdue, awaiting verification and done,
soonest due first; the assignee changes the status in place; the action
page takes a note and "mark as done"; a safety manager verifies several at
once; overdue is written out, not only coloured."""

from __future__ import annotations

import re

import pytest

from ehs_core.testing import form_with
from tests.core.workflow.support import add_action, add_root_cause, day, new_site, report, set_action


@pytest.fixture
def team(admin, make_user):
    return {"admin": admin, "reporter": make_user("reporter", name="Rita Reporter"),
            "other": make_user("reporter", name="Otto Other"),
            "supervisor": make_user("supervisor", name="Sam Supervisor"),
            "manager": make_user("safety_manager", name="Sue Safety")}


@pytest.fixture
def number(team):
    return report(team["admin"], new_site(team["admin"]), title="Oil on the floor")["number"]


def titles(page) -> list[str]:
    return re.findall(r'<a href="/actions/\d+">([^<]+)</a>', page.text)


def test_the_list_shows_mine_sorted_by_due_date_and_everyones_to_supervisors(team, number):
    rita = team["reporter"].user["id"]
    add_action(team["supervisor"], number, title="Later", assigneeId=rita, dueDate=day(20))
    add_action(team["supervisor"], number, title="Sooner", assigneeId=rita, dueDate=day(2))
    add_action(team["supervisor"], number, title="Not mine", assigneeId=team["other"].user["id"])
    assert titles(team["reporter"].get("/actions")) == ["Sooner", "Later"]
    # A reporter asking for everyone's still sees only their own, as the API allows.
    assert titles(team["reporter"].get("/actions", {"scope": "all"})) == ["Sooner", "Later"]
    team["reporter"].get("/api/actions", {"scope": "all"}, status=403)
    assert titles(team["supervisor"].get("/actions", {"scope": "all"})) == ["Sooner", "Later", "Not mine"]
    assert "Oil on the floor" in team["supervisor"].get("/actions", {"scope": "all"}).text


def test_overdue_is_written_out_and_has_its_own_tab(team, number):
    rita = team["reporter"].user["id"]
    add_action(team["supervisor"], number, title="Late one", assigneeId=rita, dueDate=day(-3))
    add_action(team["supervisor"], number, title="In time", assigneeId=rita, dueDate=day(3))
    page = team["reporter"].get("/actions")
    late_row = re.search(r'<tr id="action-row-\d+" class="is-overdue".*?</tr>', page.text, re.S)[0]
    assert "Late one" in late_row and "Overdue" in late_row
    assert titles(team["reporter"].get("/actions", {"filter": "overdue"})) == ["Late one"]


def test_the_menu_counts_my_open_actions(team, number):
    rita = team["reporter"].user["id"]
    for title in ("One", "Two"):
        add_action(team["supervisor"], number, title=title, assigneeId=rita)
    page = team["reporter"].get("/actions")
    menu = r'href="/actions" aria-current="page">Actions <span class="badge"[^>]*>2</span>'
    assert re.search(menu, page.text)


def test_the_assignee_changes_the_status_in_place(team, number):
    action = add_action(team["supervisor"], number, assigneeId=team["reporter"].user["id"])
    page = team["reporter"].get("/actions")
    assert [o[0] for o in form_with(page, f"/actions/{action['id']}/status")["status"].options] == [
        "open", "in_progress", "done"]
    row = team["reporter"].post(f"/actions/{action['id']}/status", {"status": "in_progress", "from": "list"},
                                headers={"HX-Request": "true"})
    assert row.text.lstrip().startswith(f'<tr id="action-row-{action["id"]}"')
    assert "Status changed to In progress." in row.text
    assert team["reporter"].get("/api/actions").json[0]["status"] == "in_progress"
    # What the API refuses the assignee is refused in the row, in words.
    refused = team["reporter"].post(f"/actions/{action['id']}/status", {"status": "verified", "from": "list"},
                                    headers={"HX-Request": "true"})
    assert "role=\"alert\"" in refused.text and "only open, in_progress or done" in refused.text
    assert team["reporter"].get("/api/actions").json[0]["status"] == "in_progress"
    # Someone else's action: the reporter cannot see it.
    theirs = add_action(team["supervisor"], number, assigneeId=team["other"].user["id"])
    other_incident = report(team["admin"], new_site(team["admin"], "Plant South"))["number"]
    hidden = add_action(team["supervisor"], other_incident, assigneeId=team["other"].user["id"])
    team["reporter"].post(f"/actions/{theirs['id']}/status", {"status": "done"}, status=403)
    team["reporter"].post(f"/actions/{hidden['id']}/status", {"status": "done"}, status=404)


@pytest.mark.parametrize("bad", ["\x00", "\x01", "\x7f"], ids=["nul", "soh", "del"])
def test_control_characters_in_an_action_note_are_refused_as_by_the_api(team, number, bad):
    """A NUL in an action's note was a 500 on PostgreSQL."""
    action = add_action(team["supervisor"], number, title="Replace the hose",
                        assigneeId=team["reporter"].user["id"])
    refused = team["reporter"].post(f"/actions/{action['id']}/note", {"body": f"Ordered{bad}"}, status=400)
    assert "control characters" in refused.text
    assert team["supervisor"].get(f"/api/incidents/{number}/comments").json == []


def test_the_action_page_takes_a_note_and_marks_it_done(team, number):
    cause = add_root_cause(team["supervisor"], number, description="The hose was worn")
    action = add_action(team["supervisor"], number, title="Replace the hose", rootCauseId=cause["id"],
                        assigneeId=team["reporter"].user["id"], dueDate="2030-01-15")
    page = team["reporter"].get(f"/actions/{action['id']}")
    assert "Replace the hose" in page.text and "The hose was worn" in page.text and "15 Jan 2030" in page.text
    note = form_with(page, f"/actions/{action['id']}/note")
    note["body"] = "New hose ordered"
    assert "New hose ordered" in note.submit(status=302).follow().text
    comments = team["supervisor"].get(f"/api/incidents/{number}/comments").json
    assert comments[-1]["body"] == "Note on action “Replace the hose”: New hose ordered"
    empty = team["reporter"].post(f"/actions/{action['id']}/note", {"body": ""}, status=400)
    assert "Write the note first" in empty.text
    done = form_with(team["reporter"].get(f"/actions/{action['id']}"), f"/actions/{action['id']}/status")
    assert done["status"].value == "done"
    assert "Status: Done" in done.submit(status=302).follow().text
    assert team["reporter"].get("/api/actions").json[0]["status"] == "done"
    # Done: the assignee may reopen, not verify.
    assert "Verify" not in team["reporter"].get(f"/actions/{action['id']}").text


def test_the_action_page_answers_404_to_whom_cannot_see_it(team, number):
    action = add_action(team["supervisor"], number, assigneeId=team["reporter"].user["id"])
    team["other"].get(f"/actions/{action['id']}", status=404)
    team["other"].get("/actions/99999", status=404)
    assert team["supervisor"].get(f"/actions/{action['id']}").status_code == 200


def test_a_safety_manager_verifies_several_at_once(team, number):
    done = [add_action(team["supervisor"], number, title=f"Fix {n}") for n in range(3)]
    for item in done[:2]:
        set_action(team["supervisor"], item["id"], status="done")
    page = team["manager"].get("/actions", {"scope": "all", "filter": "awaiting_verification"})
    assert titles(page) == ["Fix 0", "Fix 1"]
    api = team["manager"].get("/api/actions", {"scope": "all", "filter": "awaiting_verification"}).json
    assert [a["title"] for a in api] == ["Fix 0", "Fix 1"]
    form = form_with(page, "/actions/verify")
    fields = [("id", str(item["id"])) for item in done[:2]]
    verified = team["manager"].post(form.action, fields, status=302).follow()
    assert "The actions were verified." in verified.text
    statuses = {a["title"]: a["status"] for a in team["manager"].get("/api/actions", {"scope": "all"}).json}
    assert statuses == {"Fix 0": "verified", "Fix 1": "verified", "Fix 2": "open"}
    # One not done is named and left alone; a supervisor may not verify in bulk.
    refused = team["manager"].post("/actions/verify", [("id", str(done[2]["id"]))], status=409)
    assert "Fix 2" in refused.text
    team["supervisor"].post("/actions/verify", [("id", str(done[2]["id"]))], status=403)
    assert "/actions/verify" not in team["supervisor"].get("/actions", {"scope": "all"}).text


def test_the_list_pages_fifty_at_a_time_in_due_date_order(team, number, dbsession):
    """Every list pages: an organization's "All" tab of twelve thousand
    actions was one 13 MB page that a browser never finished."""
    import datetime as dt

    from ehs_core.actions.models import ActionStatus, CorrectiveAction
    from ehs_core.incidents.models import Incident

    incident_id = dbsession.query(Incident.id).filter(Incident.number == number).scalar()
    start = dt.date.today() + dt.timedelta(days=1)
    dbsession.add_all([CorrectiveAction(incident_id=incident_id, title=f"Step {n:02d}",
                                        status=ActionStatus.open, due_date=start + dt.timedelta(days=n))
                       for n in range(55)])
    dbsession.flush()
    first = team["supervisor"].get("/actions", {"scope": "all", "filter": "open"})
    assert titles(first) == [f"Step {n:02d}" for n in range(50)]
    assert "55 actions" in first.text and "Page 1 of 2" in first.text
    following = re.search(r'href="([^"]+)" rel="next"', first.text)[1].replace("&amp;", "&")
    second = team["supervisor"].get(following)
    assert titles(second) == [f"Step {n:02d}" for n in range(50, 55)]
    assert "Page 2 of 2" in second.text and 'rel="next"' not in second.text
    # A page past the end shows the last one; a nonsense page the first.
    assert titles(team["supervisor"].get("/actions", {"scope": "all", "filter": "open", "page": "9"})) == \
        titles(second)
    assert titles(team["supervisor"].get("/actions", {"scope": "all", "filter": "open", "page": "x"})) == \
        titles(first)


def test_each_tabs_total_is_the_count_of_its_actions(team, number, dbsession):
    """The heading's total, read with the page's rows (issue #34), is the
    plain count of the tab's actions, on every page and for each tab."""
    import datetime as dt

    from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
    from ehs_core.incidents.models import Incident

    incident_id = dbsession.query(Incident.id).filter(Incident.number == number).scalar()
    today = dt.date.today()
    statuses = [ActionStatus.open, ActionStatus.in_progress, ActionStatus.done, ActionStatus.verified,
                ActionStatus.cancelled]
    made = [CorrectiveAction(incident_id=incident_id, title=f"Step {n:02d}", status=statuses[n % 5],
                             due_date=today + dt.timedelta(days=n - 40) if n % 7 else None)
            for n in range(130)]
    dbsession.add_all(made)
    dbsession.flush()
    expected = {
        "open": sum(a.status in PENDING for a in made),
        "overdue": sum(a.status in PENDING and a.due_date is not None and a.due_date < today for a in made),
        "awaiting_verification": sum(a.status == ActionStatus.done for a in made),
        "done": sum(a.status in (ActionStatus.done, ActionStatus.verified) for a in made),
        "all": len(made),
    }
    for tab, count in expected.items():
        pages = -(-count // 50)
        for page in range(1, pages + 1):
            shown = team["supervisor"].get("/actions", {"scope": "all", "filter": tab, "page": page})
            assert f"{count} actions" in shown.text
            assert len(titles(shown)) == min(50, count - (page - 1) * 50)


def test_the_assignee_marks_it_done_with_a_photo_and_a_note_that_the_verifier_sees(team, number):
    """Issue #36 item 13: evidence sent with "Mark as done" is kept as the
    action's, shown on its page and in the verification list."""
    from ehs_core.testing import submit_with_files
    from tests.core.attachments import samples

    action = add_action(team["supervisor"], number, title="Guard the belt",
                        assigneeId=team["reporter"].user["id"])
    done = form_with(team["reporter"].get(f"/actions/{action['id']}"), f"/actions/{action['id']}/status")
    done["note"] = "Guard bolted on"
    submit_with_files(team["reporter"], done, [("evidence", "guard.png", samples.PNG, "image/png"),
                                               ("evidence", "invoice.pdf", samples.PDF, "application/pdf")],
                      status=302)
    item = team["manager"].get("/api/actions", {"scope": "all"}).json[0]
    assert item["status"] == "done"
    assert [(e["filename"], e["actionId"]) for e in item["evidence"]] == [("guard.png", action["id"]),
                                                                         ("invoice.pdf", action["id"])]
    page = team["manager"].get(f"/actions/{action['id']}")
    assert "Evidence photo guard.png" in page.text and "invoice.pdf" in page.text
    listed = team["manager"].get("/actions", {"scope": "all", "filter": "awaiting_verification"})
    assert "Evidence:" in listed.text and "guard.png" in listed.text
    notes = team["manager"].get(f"/api/incidents/{number}/comments").json
    assert notes[-1]["body"] == "Note on action “Guard the belt”: Guard bolted on"


def test_a_refused_evidence_file_keeps_nothing_and_leaves_the_action_open(team, number):
    from ehs_core.testing import submit_with_files
    from tests.core.attachments import samples

    action = add_action(team["supervisor"], number, title="Guard the belt",
                        assigneeId=team["reporter"].user["id"])
    done = form_with(team["reporter"].get(f"/actions/{action['id']}"), f"/actions/{action['id']}/status")
    done["note"] = "Guard bolted on"
    files = [("evidence", "guard.png", samples.PNG, "image/png"),
             ("evidence", "page.html", samples.HTML, "text/html")]
    refused = submit_with_files(team["reporter"], done, files, status=400)
    assert "page.html: Only photos" in refused.text
    item = team["manager"].get("/api/actions", {"scope": "all"}).json[0]
    assert item["status"] == "open" and item["evidence"] == []
    assert team["manager"].get(f"/api/incidents/{number}").json["attachments"] == []
    assert team["manager"].get(f"/api/incidents/{number}/comments").json == []
