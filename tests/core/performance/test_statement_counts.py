"""Query discipline: list, detail, actions and timeline endpoints send the
same number of SQL statements whatever the number of rows involved (no N+1)."""

from __future__ import annotations

import json

import pytest

from ehs_core import caches
from tests.core.attachments.samples import PNG  # a photo that decodes: unreadable ones are refused


@pytest.fixture
def site(admin):
    site = admin.post_json("/api/sites", {"name": "Plant"}).json
    site["areaId"] = admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "Line 1"}).json["id"]
    return site


def report(browser, site, n):
    return browser.post_json("/api/incidents", {
        "title": f"Incident {n}", "type": "injury", "severity": "low",
        "occurredAt": "2026-01-05T08:00:00+01:00", "siteId": site["id"], "areaId": site["areaId"],
    }).json["number"]


def grow_incident(admin, number, assignee_id, n):
    """Give an incident n root causes, actions, comments, files and cases."""
    for i in range(n):
        cause = admin.post_json(f"/api/incidents/{number}/root-causes",
                                {"category": f"cat {i}", "description": "d", "whys": ["a", "b"]}).json
        admin.post_json(f"/api/incidents/{number}/actions",
                        {"title": f"Fix {i}", "assigneeId": assignee_id, "dueDate": "2026-02-01",
                         "rootCauseId": cause["id"]})
        admin.post_json(f"/api/incidents/{number}/comments", {"body": f"note {i}"})
        admin.post(f"/api/incidents/{number}/attachments", upload_files=[("file", f"p{i}.png", PNG)])
        admin.post_json(f"/api/osha/incidents/{number}/cases", {"name": f"Person {i}"})


def statements(count_statements, call):
    with count_statements() as counted:
        call()
    return counted.count


def test_incident_list_costs_the_same_for_2_or_12_incidents(admin, make_user, site, count_statements):
    reporters = [make_user("reporter") for _ in range(3)]
    for n in range(2):
        report(reporters[n % 3], site, n)
    few = statements(count_statements, lambda: admin.get("/api/incidents"))
    for n in range(10):
        report(reporters[n % 3], site, n)
    many = statements(count_statements, lambda: admin.get("/api/incidents"))
    assert admin.get("/api/incidents").json["total"] == 12
    assert many == few


def test_a_search_costs_the_same_for_2_or_12_matches(admin, make_user, site, count_statements):
    reporters = [make_user("reporter") for _ in range(3)]
    for n in range(2):
        report(reporters[n % 3], site, n)
    few = statements(count_statements, lambda: admin.get("/api/incidents?q=incident"))
    for n in range(10):
        report(reporters[n % 3], site, n)
    many = statements(count_statements, lambda: admin.get("/api/incidents?q=incident"))
    assert admin.get("/api/incidents?q=incident").json["total"] == 12
    assert many == few


def test_a_search_known_to_match_more_than_it_counts_does_not_count(admin, site, count_statements,
                                                                     dbsession, monkeypatch):
    """A search with more matches than it counts (here 5) counts up to the
    bound, then walks the numbers for its page: one statement more than a
    search within the bound. On PostgreSQL the word counts already say
    that there are more, so it sends the walk instead of the count."""
    from ehs_core.incidents import listing
    monkeypatch.setattr(listing, "COUNT_BOUND", 5)
    for n in range(4):
        report(admin, site, n)
    counting = statements(count_statements, lambda: admin.get("/api/incidents?q=incident&pageSize=3"))
    for n in range(4, 12):
        report(admin, site, n)
    beyond = statements(count_statements, lambda: admin.get("/api/incidents?q=incident&pageSize=3"))
    assert admin.get("/api/incidents?q=incident&pageSize=3").json["totalExact"] is False
    assert beyond == counting + (dbsession.get_bind().dialect.name != "postgresql")


def test_a_one_word_search_sends_the_lists_statements(admin, site, count_statements, dbsession, monkeypatch):
    """On PostgreSQL a search for one word by a caller who sees every
    incident, with no filter, is one statement after the identity, as the
    list is: the words' look-up, the count and the page are in it
    (`search.newest`), within the bound, beyond it, and for a word no
    incident has. SQLite reads the page and the count in one statement, and
    counts again for an empty page or walks for a page beyond the bound."""
    from ehs_core.incidents import listing
    monkeypatch.setattr(listing, "COUNT_BOUND", 5)
    for n in range(4):
        report(admin, site, n)
    listed = statements(count_statements, lambda: admin.get("/api/incidents?pageSize=3"))
    within = statements(count_statements, lambda: admin.get("/api/incidents?q=Incident&pageSize=3"))
    nothing = statements(count_statements, lambda: admin.get("/api/incidents?q=Scaffold&pageSize=3"))
    assert admin.get("/api/incidents?q=Scaffold&pageSize=3").json == {
        "items": [], "page": 1, "pageSize": 3, "total": 0}
    for n in range(4, 12):
        report(admin, site, n)
    beyond = statements(count_statements, lambda: admin.get("/api/incidents?q=Incident&pageSize=3"))
    assert admin.get("/api/incidents?q=Incident&pageSize=3").json["totalExact"] is False
    sqlite = dbsession.get_bind().dialect.name != "postgresql"
    assert (within, nothing, beyond) == (listed, listed + sqlite, listed + sqlite)


def test_incident_detail_costs_the_same_however_much_hangs_off_it(admin, make_user, site,
                                                                    count_statements):
    worker = make_user("reporter")
    small, large = report(admin, site, 1), report(admin, site, 2)
    grow_incident(admin, small, worker.user["id"], 1)
    grow_incident(admin, large, worker.user["id"], 6)
    assert len(admin.get(f"/api/incidents/{large}").json["actions"]) == 6
    few = statements(count_statements, lambda: admin.get(f"/api/incidents/{small}"))
    many = statements(count_statements, lambda: admin.get(f"/api/incidents/{large}"))
    assert many == few
    # The session, then the incident with everything that hangs off it (the
    # core's sections and the plugins': investigation, causes, actions,
    # files, injured count, channel) in one statement; a reported incident's
    # moves have no condition to read.
    with count_statements() as counted:
        admin.get(f"/api/incidents/{small}")
    reads = [s for s in counted.statements if s.lstrip().upper().startswith("SELECT")]
    assert len(reads) == 2, reads
    assert "FROM investigations" in reads[1] and "FROM corrective_actions" in reads[1]
    # and for a reporter who sees it through an assigned action
    few = statements(count_statements, lambda: worker.get(f"/api/incidents/{small}"))
    many = statements(count_statements, lambda: worker.get(f"/api/incidents/{large}"))
    assert many == few


def test_the_incident_acl_is_read_only_when_a_check_needs_it(admin, make_user, site, count_statements):
    """Supervisors and above may open every incident (the ACL's first
    entry), so they send no query for the incident's assignees; on a route
    that loads the incident alone, a reporter who sees it through an
    assigned action needs them, once. The detail's statement applies the
    visibility rule itself, so the detail needs none."""
    worker = make_user("reporter")
    number = report(admin, site, 1)
    grow_incident(admin, number, worker.user["id"], 2)

    def assignee_queries(client, path):
        with count_statements() as counted:
            client.get(path)
        return sum("DISTINCT corrective_actions.assignee_id" in s for s in counted.statements)

    for path in (f"/api/incidents/{number}/comments", f"/api/incidents/{number}"):
        assert assignee_queries(admin, path) == 0
    assert assignee_queries(worker, f"/api/incidents/{number}/comments") == 1
    assert assignee_queries(worker, f"/api/incidents/{number}") == 0


def test_a_reporters_detail_is_one_statement_after_the_session(admin, make_user, site, count_statements):
    """The incident a reporter filed, one they see through an action
    assigned to them, and one they may not see (404, as a number that does
    not exist): each is the session's statement and one more, and what the
    reporter may do follows from how they see it."""
    worker, stranger = make_user("reporter"), make_user("reporter")
    theirs = report(worker, site, 1)
    assigned = report(admin, site, 2)
    grow_incident(admin, assigned, worker.user["id"], 1)

    def selects(client, path, status=200):
        with count_statements() as counted:
            shown = client.get(path, status=status)
        return shown, sum(1 for s in counted.statements if s.lstrip().upper().startswith("SELECT"))

    for number in (theirs, assigned):
        shown, sent = selects(worker, f"/api/incidents/{number}")
        assert sent == 2
        assert shown.json["can"] == {"update": False, "transition": False, "comment": True, "upload": True,
                                     "investigate": False, "addRootCause": False, "addAction": False}
    for number in (theirs, assigned, 9999):
        assert selects(stranger, f"/api/incidents/{number}", status=404)[1] == 2


def test_actions_list_costs_the_same_for_few_or_many_actions(admin, make_user, site, count_statements):
    worker = make_user("reporter")
    number = report(admin, site, 1)
    grow_incident(admin, number, worker.user["id"], 1)
    few_all = statements(count_statements, lambda: admin.get("/api/actions?scope=all"))
    few_mine = statements(count_statements, lambda: worker.get("/api/actions"))
    for n in range(4):
        grow_incident(admin, report(admin, site, n), worker.user["id"], 2)
    assert len(worker.get("/api/actions").json) == 9
    assert statements(count_statements, lambda: admin.get("/api/actions?scope=all")) == few_all
    assert statements(count_statements, lambda: worker.get("/api/actions")) == few_mine


def test_timeline_costs_the_same_for_short_or_long_histories(admin, make_user, site, count_statements):
    worker = make_user("reporter")
    short, long = report(admin, site, 1), report(admin, site, 2)
    grow_incident(admin, long, worker.user["id"], 5)
    for n in range(5):
        admin.patch_json(f"/api/incidents/{long}", {"title": f"Renamed {n}"})
    assert len(admin.get(f"/api/incidents/{long}/timeline").json) > 15
    few = statements(count_statements, lambda: admin.get(f"/api/incidents/{short}/timeline"))
    many = statements(count_statements, lambda: admin.get(f"/api/incidents/{long}/timeline"))
    assert many == few


def test_filing_a_report_reads_no_sections_of_the_new_incident(admin, site, count_statements):
    """The answer to a new report is built from what is known: nothing can
    hang off an incident filed in the same request, and its site, area and
    reporter are in the reference data the worker keeps. Once a first report
    has loaded those, filing sends the session lookup, the insert (in the
    test's own savepoint), the audit entry and the number (one statement on
    PostgreSQL, two on SQLite): no statement for the site and area, none per
    section (investigation, root causes, actions, attachments, cases,
    kiosk), none for the incident's ACL and none for names; then, at
    commit, the analytics plugin's two (the incident's counted state and
    the tallies it adds to)."""
    body = {"title": "Spill", "type": "injury", "severity": "low",
            "clientId": "3f1c1b8e-0000-4000-8000-000000000001", "occurredAt": "2026-01-05T08:00:00+01:00",
            "siteId": site["id"], "areaId": site["areaId"]}
    admin.post_json("/api/incidents", body, status=201)
    body["clientId"] = "3f1c1b8e-0000-4000-8000-000000000002"
    with count_statements() as counted:
        created = admin.post_json("/api/incidents", body, status=201).json
    assert counted.count <= 9, counted.statements
    reads = [s for s in counted.statements
             if s.lstrip().upper().startswith("SELECT") and "user_sessions" not in s]
    assert not reads, reads
    shown = admin.get(f"/api/incidents/{created['number']}").json
    assert created == shown


def test_the_list_reads_its_page_sections_and_total_in_one_statement(admin, make_user, site,
                                                                    count_statements):
    """A page of the list is one statement after the session's: its rows,
    the sections the list shows (the OSHA plugin's injured count, the kiosk
    plugin's channel) and, unless the first row's number is the total, its
    count; for a filter, past the first page, and for a reporter alike. A
    page with no rows counts on its own."""
    worker = make_user("reporter")
    for n in range(3):
        report(admin, site, n)
    report(worker, site, 3)
    for browser, url in [(admin, "/api/incidents"), (admin, "/api/incidents?type=injury"),
                         (admin, "/api/incidents?page=2&pageSize=2"), (worker, "/api/incidents"),
                         (worker, f"/api/incidents?siteId={site['id']}")]:
        with count_statements() as counted:
            browser.get(url)
        reads = [s for s in counted.statements if s.lstrip().upper().startswith("SELECT")]
        assert len(reads) == 2, (url, reads)
    with count_statements() as counted:
        assert admin.get("/api/incidents?page=9").json["total"] == 4
    assert len([s for s in counted.statements if s.lstrip().upper().startswith("SELECT")]) == 3


def test_the_lists_statement_is_made_once_per_kind_of_caller_page_and_filters(
        admin, make_user, site, registry, monkeypatch):
    """The list's statement is kept, compiled, per kind of caller, first
    page or not, and filters with how many values each binds
    (`listing.kept_page`), only the values bound: other values, another
    reporter or another page past the first reuse it, and each answers for
    its own values."""
    from ehs_core.incidents import listing

    made = []
    make = listing._kept_statement
    monkeypatch.setattr(listing, "_kept_statement", lambda *args: made.append(args[1:3]) or make(*args))
    caches.forget(registry, listing.KEPT)
    alice, bob = make_user("reporter"), make_user("reporter")
    report(alice, site, 1)
    report(bob, site, 2)
    admin.post_json("/api/incidents", {"title": "Spill", "type": "hazard", "severity": "low",
                                       "occurredAt": "2026-01-05T08:00:00+01:00", "siteId": site["id"]})

    def numbers(browser, query=""):
        body = browser.get(f"/api/incidents{query}").json
        return [item["number"] for item in body["items"]], body["total"]

    assert numbers(admin, "?type=injury") == ([2, 1], 2)
    assert numbers(admin, "?type=hazard") == ([3], 1)
    assert numbers(alice) == ([1], 1)
    assert numbers(bob) == ([2], 1)
    assert numbers(admin, "?page=2&pageSize=1") == ([2], 3)
    assert numbers(admin, "?page=3&pageSize=1") == ([1], 3)
    assert len(made) == 3, made
    assert numbers(admin, "?type=injury&type=hazard&pageSize=2") == ([3, 2], 3)  # two values: another
    assert len(made) == 4, made
    # One type's page has its size in the SQL (`listing.IN_NUMBER_ORDER`): another size, another statement.
    assert numbers(admin, "?type=injury&pageSize=1") == ([2], 2)
    assert len(made) == 5, made
    assert numbers(admin, "?type=hazard&pageSize=1") == ([3], 1)
    assert len(made) == 5, made


def test_a_list_read_in_an_indexs_order_has_its_size_in_its_sql(admin, make_user, site, registry,
                                                               database_url, monkeypatch):
    """A list of everything, of one type, one severity, one status, or one
    type at one site is read along an index in number order, whatever the values: its
    kept statement has the page's size in its SQL, so that PostgreSQL keeps
    one (generic) plan for it once psycopg prepares it instead of planning
    it again for each request. Other lists (a reporter's; status and type
    together, where the values choose the index) keep a bound LIMIT and a
    plan for their values. Each page answers for its own values."""
    from ehs_core.incidents import listing

    caches.forget(registry, listing.KEPT)
    worker = make_user("reporter")
    for n in range(3):
        report(admin, site, n)
    report(worker, site, 3)
    admin.post_json("/api/incidents", {"title": "Spill", "type": "hazard", "severity": "low",
                                       "occurredAt": "2026-01-05T08:00:00+01:00", "siteId": site["id"]})

    def numbers(browser, query=""):
        return [item["number"] for item in browser.get(f"/api/incidents{query}").json["items"]]

    assert numbers(admin, "?type=injury&pageSize=3") == [4, 3, 2]
    assert numbers(admin, "?severity=low&pageSize=2") == [5, 4]
    assert numbers(admin, f"?type=hazard&siteId={site['id']}") == [5]
    assert numbers(admin, "?status=reported&type=injury") == [4, 3, 2, 1]
    assert numbers(worker) == [4]
    assert numbers(worker, "?status=reported") == [4]
    engine = registry["db.engine"]
    kept = {(key[0], tuple(name for name, _ in key[3])): value.read.statement
            for key, value in caches.named(registry, listing.KEPT, listing.MOST_KEPT).items()}
    sql = {key: str(statement.compile(dialect=engine.dialect)) for key, statement in kept.items()}
    assert "LIMIT 3" in sql["all", ("type",)]
    assert "LIMIT 2" in sql["all", ("severity",)]
    assert "LIMIT 25" in sql["all", ("type", "siteId")]
    assert "LIMIT 25" not in sql["all", ("type", "status")] and "LIMIT" in sql["all", ("type", "status")]
    assert "LIMIT 25" not in sql["own", ()] and "LIMIT" in sql["own", ()]


def test_the_list_page_sends_its_jsons_statements_plus_one_for_its_chrome(
        admin, make_user, site, count_statements):
    """The table shows none of the incidents' sections, so the page's one
    statement reads the rows without them (the JSON reads them as columns
    of the same statement). The menu's counts (what waits for this person, their
    open actions) are one statement; the site and area pickers and the saved
    views are the worker's reference data (`ehs_core.refdata`), read again
    only after they change; nothing else of the page's chrome goes to the
    database."""
    worker = make_user("reporter")
    number = report(admin, site, 1)
    me = admin.get("/api/auth/me").json["user"]["id"]
    admin.post_json(f"/api/incidents/{number}/actions", {"title": "Fix", "assigneeId": me})
    report(worker, site, 2)
    page = admin.get("/incidents")
    assert page.html.select_one('nav a[href="/"] .badge').get_text(strip=True) == "3"
    json_cost = statements(count_statements, lambda: admin.get("/api/incidents"))
    with count_statements() as counted:
        admin.get("/incidents")
    # Plus one for the sites the person works at, which the menu's plain
    # /incidents opens on (issue #36 item 9).
    assert counted.count == json_cost + 2
    assert [s for s in counted.statements if "FROM user_sites" in s]
    assert not [s for s in counted.statements if "FROM sites" in s or "FROM analytics_saved_views" in s
                or "osha_cases" in s or "kiosk_reports" in s]


def test_the_incident_page_reads_the_investigation_once(admin, make_user, site, count_statements):
    """The detail's sections and the investigation workspace show the same
    investigation and root causes: read once."""
    number = report(admin, site, 1)
    grow_incident(admin, number, make_user("reporter").user["id"], 2)
    with count_statements() as counted:
        admin.get(f"/incidents/{number}")
    reads = [s for s in counted.statements if s.lstrip().upper().startswith("SELECT")]
    assert sum(1 for s in reads if "FROM investigations" in s and "lead_id IS NOT NULL" not in s) == 1
    assert sum(1 for s in reads if "FROM root_causes" in s) == 1


def test_the_incident_page_sends_no_more_statements_than_its_json(admin, make_user, site, count_statements):
    """Comments and history and the OSHA panel's cases are read with the
    detail's sections, the pickers are the worker's reference data: the
    page costs its JSON's statements and one for its menu's counts, and its
    menu counts what the other pages' menus count."""
    number = report(admin, site, 1)
    admin.post_json(f"/api/incidents/{number}/comments", {"body": "Seen on the night shift."})
    admin.post_json(f"/api/osha/incidents/{number}/cases", {"name": "Jane Roe"})
    admin.get(f"/incidents/{number}")

    def selects(path):
        with count_statements() as counted:
            shown = admin.get(path)
        return shown, sum(1 for s in counted.statements if s.lstrip().upper().startswith("SELECT"))

    page, on_page = selects(f"/incidents/{number}")
    _, in_json = selects(f"/api/incidents/{number}")
    assert "Seen on the night shift." in page.text and "Reported" in page.text
    assert "Jane Roe" in page.text  # the panel's case, for a safety manager
    assert on_page == in_json + 1  # the menu's counts: a statement of their own
    waiting = '<span class="badge" aria-label="1 waiting">1</span>'  # the new report waits for triage
    assert waiting in page.text and waiting in admin.get("/incidents").text
    report(admin, site, 2)
    waiting = '<span class="badge" aria-label="2 waiting">2</span>'
    assert waiting in admin.get(f"/incidents/{number}").text and waiting in admin.get("/incidents").text


def test_the_menus_counts_write_their_statuses_and_limits_into_the_statement(admin, count_statements):
    """psycopg prepares a statement on its fifth run and PostgreSQL then
    weighs a generic plan, made without the parameters' values: with the
    status a parameter, it cannot use the partial index of investigations
    and read every incident (38 ms at 100,000), so PostgreSQL planned the
    menu's counts again on every page. Written as constants of the text
    (`ehs_core.db.constant`), the generic plan is the good one."""
    with count_statements() as counted:
        admin.get("/incidents")
    menu = [s for s in counted.statements if "investigation_lead_id" in s and "count(*)" in s]
    assert len(menu) == 1
    for constant in ("'reported'", "'triage'", "'investigation'", "'verification'", "'open'",
                     "'in_progress'", "LIMIT 100"):
        assert constant in menu[0]


def test_the_moves_conditions_are_read_with_the_detail(admin, site, count_statements):
    """What the moves' conditions need (a root cause; the actions' state)
    is read in the detail's statement: under investigation, in actions or
    in verification, the detail sends the session's statement and one
    more, with the same reasons the move itself gives."""
    number = report(admin, site, 1)
    moves = f"/api/incidents/{number}/transitions"

    def shown():
        with count_statements() as counted:
            body = admin.get(f"/api/incidents/{number}").json
        assert sum(1 for s in counted.statements if s.lstrip().upper().startswith("SELECT")) == 2
        return {t["to"]: t["blockedReason"] for t in body["transitions"]}

    for status in ("triage", "investigation"):
        admin.post_json(moves, {"to": status})
    assert shown()["actions"] == "Record at least one root cause first"
    admin.post_json(moves, {"to": "actions"}, status=409)
    admin.post_json(f"/api/incidents/{number}/root-causes", {"category": "c", "description": "d"})
    assert shown()["actions"] is None
    admin.post_json(moves, {"to": "actions"})
    assert shown()["verification"] == "Add at least one corrective action first"
    action = admin.post_json(f"/api/incidents/{number}/actions", {"title": "Fix"}).json
    assert shown()["verification"] == (
        "Every action must be done or cancelled first (some are open or in progress)")
    admin.patch_json(f"/api/actions/{action['id']}", {"status": "done"})
    assert shown()["verification"] is None
    admin.post_json(moves, {"to": "verification"})
    assert shown()["closed"] == "Every action that is not cancelled must be verified first"
    admin.patch_json(f"/api/actions/{action['id']}", {"status": "verified"})
    assert shown()["closed"] is None
    admin.post_json(moves, {"to": "closed"})


def test_a_serious_report_queues_its_notices_in_one_statement_for_2_or_12_people(
        admin, make_user, site, count_statements, dbsession):
    """The notice of a serious report is one delivery job per person told
    (each their own mail), written by one statement however many they are;
    the filing request sends as many statements for 12 people as for 2."""
    from sqlalchemy import select

    from ehs_core.jobs.models import OutboxJob

    def serious(n):
        body = {"title": f"Fall {n}", "type": "injury", "severity": "high",
                "occurredAt": "2026-01-05T08:00:00+01:00", "siteId": site["id"], "areaId": site["areaId"]}
        with count_statements() as counted:
            admin.post_json("/api/incidents", body, status=201)
        # The test's job runner delivers the mails after the commit: not the request's.
        sent = counted.statements
        request = sent[:next(i for i, s in enumerate(sent) if s.lstrip().startswith("UPDATE outbox_jobs"))]
        return len(request), [s for s in request if s.lstrip().startswith("INSERT INTO outbox_jobs")]

    def told():
        rows = dbsession.execute(select(OutboxJob.payload).where(OutboxJob.job == "mail.deliver")).scalars()
        return sorted(json.loads(p)[0]["to"] for p in rows)

    make_user("safety_manager")
    serious(0)
    before = told()
    few, written = serious(1)
    assert len(told()) - len(before) == 2 and len(written) == 1  # the admin and the safety manager
    for _ in range(10):
        make_user("safety_manager")
    serious(2)
    marked = told()
    many, written = serious(3)
    added = told()
    assert len(added) - len(marked) == 12 and len(set(added) - set(before)) == 10 and len(written) == 1
    assert many == few
