"""The organization's queues version moves with every change of what the
menu counts, whoever makes it (migration 0016_queues_version), and the
menu's counts follow every change."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select, update

from ehs_core.actions.models import CorrectiveAction
from ehs_core.incidents.models import Incident, QueueVersion

WAITING = re.compile(r'<span class="badge" aria-label="(\d+) waiting">')


@pytest.fixture
def site(admin):
    return admin.post_json("/api/sites", {"name": "Plant"}).json["id"]


def report(browser, site, title="Slip"):
    return browser.post_json("/api/incidents", {
        "title": title, "type": "hazard", "severity": "low", "occurredAt": "2026-01-05T08:00:00Z",
        "siteId": site}).json["number"]


def version(dbsession):
    dbsession.expire_all()
    return dbsession.execute(select(QueueVersion.version)).scalar_one()


def waiting(browser, path="/incidents"):
    found = WAITING.search(browser.get(path).text)
    return int(found[1]) if found else 0


def test_the_version_moves_with_what_the_queues_count_and_nothing_else(admin, make_user, site, dbsession):
    supervisor = make_user("supervisor")
    start = version(dbsession)
    number = report(admin, site)
    filed = version(dbsession)
    assert filed > start  # a new report waits for triage

    admin.patch_json(f"/api/incidents/{number}", {"title": "Slip by the press"})
    admin.post_json(f"/api/incidents/{number}/comments", {"body": "Seen at 8."})
    assert version(dbsession) == filed  # nothing any queue counts

    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    triaged = version(dbsession)
    assert triaged > filed
    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "investigation"})
    investigating = version(dbsession)
    assert investigating > triaged
    admin.put_json(f"/api/incidents/{number}/investigation", {"leadId": supervisor.user["id"]})
    moved = version(dbsession)
    assert moved > investigating  # no longer waiting for any supervisor: for its lead

    action = admin.post_json(f"/api/incidents/{number}/actions", {
        "title": "Fit a guard", "assigneeId": supervisor.user["id"], "dueDate": "2026-02-01"}).json
    added = version(dbsession)
    assert added > moved

    supervisor.patch_json(f"/api/actions/{action['id']}", {"status": "in_progress"})
    assert version(dbsession) > added


def test_a_change_made_outside_the_app_moves_the_menus_count(admin, site, dbsession):
    """The version is moved by the database, so a change the application
    did not make (a script's SQL, another worker) is counted too."""
    first = report(admin, site)
    report(admin, site, "Trip")
    assert waiting(admin) == 2
    assert waiting(admin) == 2  # kept
    dbsession.execute(update(Incident).where(Incident.number == first).values(status="closed"))
    dbsession.commit()
    assert waiting(admin) == 1
    assert waiting(admin, "/") == 1


def test_an_action_given_to_someone_else_leaves_their_menu(admin, make_user, site, dbsession):
    reporter = make_user("reporter")
    number = report(admin, site)
    for status in ("triage", "investigation"):
        admin.post_json(f"/api/incidents/{number}/transitions", {"to": status})
    admin.post_json(f"/api/incidents/{number}/actions", {
        "title": "Fit a guard", "assigneeId": reporter.user["id"], "dueDate": "2026-02-01"})
    actions = re.compile(r'href="/actions"[^>]*>[^<]*<span class="badge"[^>]*>(\d+)</span>')
    assert actions.search(reporter.get("/incidents").text)[1] == "1"
    dbsession.execute(update(CorrectiveAction).values(assignee_id=admin.get("/api/auth/me").json["user"]["id"]))
    dbsession.commit()
    assert actions.search(reporter.get("/incidents").text) is None


def test_the_menu_is_the_pages_own_and_follows_the_queues(admin, site):
    """Each page marks its own entry as the current one however the person
    moves between them, and after a change every page's menu shows the new
    count."""
    current = re.compile(r'<a href="([^"]*)" aria-current="page">')
    report(admin, site)
    for _ in range(2):
        for path in ("/", "/incidents", "/actions", f"/incidents/{1}"):
            page = admin.get(path).text
            menu = page.split('class="mainnav"', 1)[1].split("</nav>", 1)[0]
            assert current.findall(menu) == {"/": ["/"], "/incidents": ["/incidents"],
                                             "/actions": ["/actions"]}.get(path, [])
            assert WAITING.search(page)[1] == "1"
    report(admin, site, "Trip")
    assert [waiting(admin, path) for path in ("/incidents", f"/incidents/{1}", "/actions")] == [2, 2, 2]
