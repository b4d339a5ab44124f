"""The people involved in an incident (issue #39 item 4): every route
(`GET|POST /api/incidents/:number/people`, `PATCH|DELETE /api/people/:id`),
who may see what (a reporter only their own entries and statements, a
supervisor everyone), the refusals, and the audit entries."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.core.attachments.samples import PNG
from tests.core.workflow.support import add_action, bring_to, entries, new_site, report, timeline


@pytest.fixture
def site(admin):
    return new_site(admin)


def people_url(number):
    return f"/api/incidents/{number}/people"


def add(browser, number, status=201, **body):
    payload = {"name": "Wanda Witness", "involvement": "witness", **body}
    return browser.post_json(people_url(number), payload, status=status).json


def listed(browser, number, status=200):
    return browser.get(people_url(number), status=status).json


def issue_paths(response):
    assert response["error"]
    return {issue["path"] for issue in response["issues"]}


def upload(browser, number, data=PNG):
    return browser.post(f"/api/incidents/{number}/attachments",
                        upload_files=[("file", "statement.png", data, "image/png")], status=201).json


def test_a_supervisor_names_a_witness_with_a_typed_statement(admin, supervisor, site):
    number = report(admin, site)["number"]
    created = add(supervisor, number, employmentType="contractor", role="Forklift driver",
                  contact="+1 555 0100", statement={"text": "I saw the pallet fall.", "date": "2026-01-05"})
    assert created["name"] == "Wanda Witness"
    assert created["involvement"] == "witness"
    assert created["employmentType"] == "contractor"
    assert created["role"] == "Forklift driver"
    assert created["contact"] == "+1 555 0100"
    assert created["statement"] == {"text": "I saw the pallet fall.", "date": "2026-01-05",
                                    "attachmentId": None}
    assert created["createdBy"]["id"] == supervisor.user["id"]
    assert listed(admin, number) == [created]


def test_a_statement_without_a_date_is_dated_today(admin, site):
    number = report(admin, site)["number"]
    created = add(admin, number, statement={"text": "It was wet."})
    # The test site has no zone: the server's (UTC in the tests).
    today = dt.datetime.now(dt.UTC).date()
    assert created["statement"]["date"] in {today.isoformat(), (today - dt.timedelta(days=1)).isoformat()}


def test_a_statement_can_be_the_photo_of_a_paper_statement(admin, site):
    number = report(admin, site)["number"]
    photo = upload(admin, number)
    created = add(admin, number, statement={"attachmentId": photo["id"], "date": "2026-02-01"})
    assert created["statement"] == {"text": None, "date": "2026-02-01", "attachmentId": photo["id"]}
    # Removing the file leaves the entry without a photo, not pointing at nothing.
    admin.delete(f"/api/attachments/{photo['id']}", status=204)
    [shown] = listed(admin, number)
    assert shown["statement"]["attachmentId"] is None


def test_a_statement_photo_must_be_a_file_of_the_same_incident(admin, site):
    number = report(admin, site)["number"]
    other = report(admin, site)["number"]
    photo = upload(admin, other)
    refused = add(admin, number, status=400, statement={"attachmentId": photo["id"]})
    assert issue_paths(refused) == {"statement.attachmentId"}
    refused = add(admin, number, status=400, statement={"attachmentId": 999999})
    assert issue_paths(refused) == {"statement.attachmentId"}
    assert listed(admin, number) == []


def test_bad_bodies_are_refused_with_their_issues(admin, site):
    number = report(admin, site)["number"]
    refused = admin.post_json(people_url(number), {"name": "", "involvement": "bystander",
                                                   "employmentType": "intern"}, status=400).json
    assert issue_paths(refused) == {"name", "involvement", "employmentType"}
    refused = admin.post_json(people_url(number), {"involvement": "witness", "age": 40}, status=400).json
    assert issue_paths(refused) == {"name", "age"}
    refused = add(admin, number, status=400, statement={})
    assert issue_paths(refused) == {"statement"}
    refused = add(admin, number, status=400, statement={"text": "x", "date": "2999-01-01"})
    assert issue_paths(refused) == {"statement.date"}
    refused = add(admin, number, status=400, statement={"text": "x", "signed": True})
    assert issue_paths(refused) == {"statement.signed"}
    assert listed(admin, number) == []


def test_an_unknown_or_invisible_incident_is_404(admin, reporter, site):
    add(admin, 999999, status=404)
    listed(admin, 999999, status=404)
    number = report(admin, site)["number"]
    # Not the reporter's incident: as if it did not exist.
    add(reporter, number, status=404)
    listed(reporter, number, status=404)


def test_not_signed_in_is_401(client, admin, site):
    number = report(admin, site)["number"]
    client.get(people_url(number), status=401)
    client.post_json(people_url(number), {"name": "X", "involvement": "other"}, status=401)
    person = add(admin, number)
    client.patch_json(f"/api/people/{person['id']}", {"name": "Y"}, status=401)
    client.delete(f"/api/people/{person['id']}", status=401)


def test_a_reporter_sees_only_the_people_they_named_and_their_statements(admin, make_user, site):
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    number = report(reporter, site)["number"]
    mine = add(reporter, number, name="Ivan Injured", involvement="injured", employmentType="employee")
    theirs = add(supervisor, number, name="Sam Seen", statement={"text": "Ivan ran, nobody stopped him."})
    # The reporter: their own entry only; the supervisor's witness and statement are not listed.
    assert [p["id"] for p in listed(reporter, number)] == [mine["id"]]
    assert "nobody stopped him" not in str(listed(reporter, number))
    # A supervisor and an admin: everyone, with the statement.
    for browser in (supervisor, admin):
        shown = {p["id"]: p for p in listed(browser, number)}
        assert set(shown) == {mine["id"], theirs["id"]}
        assert shown[theirs["id"]]["statement"]["text"] == "Ivan ran, nobody stopped him."
    # Someone else's entry is not the reporter's to change or even find.
    reporter.patch_json(f"/api/people/{theirs['id']}", {"name": "Changed"}, status=404)
    reporter.delete(f"/api/people/{theirs['id']}", status=404)


def test_an_assignee_sees_the_incident_but_not_the_people_others_named(admin, make_user, site):
    assignee = make_user("reporter")
    number = report(admin, site)["number"]
    add(admin, number, statement={"text": "Private words"})
    add_action(admin, number, assigneeId=assignee.user["id"])
    assert listed(assignee, number) == []
    own = add(assignee, number, name="Otto Other", involvement="other")
    assert [p["id"] for p in listed(assignee, number)] == [own["id"]]


def test_a_reporter_corrects_their_own_entry_but_a_supervisor_removes_it(admin, make_user, site):
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    number = report(reporter, site)["number"]
    mine = add(reporter, number, statement={"text": "Frist draft"})
    changed = reporter.patch_json(f"/api/people/{mine['id']}",
                                  {"contact": "wanda@example.com", "statement": {"text": "First draft"}}).json
    assert changed["contact"] == "wanda@example.com"
    assert changed["statement"]["text"] == "First draft"
    assert changed["statement"]["date"] == mine["statement"]["date"]  # kept when not sent
    # Removing is for supervisors and above: the reporter's role is too low.
    refused = reporter.delete(f"/api/people/{mine['id']}", status=403)
    assert refused.json["error"]
    assert len(listed(reporter, number)) == 1
    supervisor.delete(f"/api/people/{mine['id']}", status=204)
    assert listed(reporter, number) == []
    supervisor.delete(f"/api/people/{mine['id']}", status=404)


def test_patch_validates_and_null_removes_the_statement(admin, site):
    number = report(admin, site)["number"]
    person = add(admin, number, statement={"text": "Said something", "date": "2026-03-01"})
    url = f"/api/people/{person['id']}"
    refused = admin.patch_json(url, {"involvement": "victim", "name": None}, status=400).json
    assert issue_paths(refused) == {"involvement", "name"}
    cleared = admin.patch_json(url, {"statement": None, "employmentType": "public"}).json
    assert cleared["statement"] is None
    assert cleared["employmentType"] == "public"
    admin.patch_json("/api/people/999999", {"name": "X"}, status=404)


def test_each_change_is_audited_for_supervisors_only(admin, make_user, site):
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    number = report(reporter, site)["number"]
    person = add(reporter, number, name="Ivan Injured", involvement="injured",
                 statement={"text": "I slipped", "date": "2026-03-02"})
    supervisor.patch_json(f"/api/people/{person['id']}", {"role": "Packer"})
    supervisor.delete(f"/api/people/{person['id']}", status=204)

    [created] = entries(supervisor, number, "person.created")
    assert created["actor"]["id"] == reporter.user["id"]
    assert created["changes"]["name"] == {"old": None, "new": "Ivan Injured"}
    assert created["changes"]["involvement"] == {"old": None, "new": "injured"}
    assert created["changes"]["statement.text"] == {"old": None, "new": "I slipped"}
    assert created["changes"]["id"] == {"old": None, "new": person["id"]}
    [updated] = entries(supervisor, number, "person.updated")
    assert updated["actor"]["id"] == supervisor.user["id"]
    assert updated["changes"] == {"role": {"old": None, "new": "Packer"},
                                  "id": {"old": person["id"], "new": person["id"]}}
    [deleted] = entries(supervisor, number, "person.deleted")
    assert deleted["changes"]["id"] == {"old": person["id"], "new": None}
    assert deleted["changes"]["name"] == {"old": "Ivan Injured", "new": None}
    # The trail names people and statements: not on the reporter's timeline.
    assert not [e for e in timeline(reporter, number) if e["action"].startswith("person.")]


def test_a_statement_photo_is_hidden_from_whoever_may_not_read_the_statement(admin, make_user, site):
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    number = report(reporter, site)["number"]
    own_photo = upload(reporter, number)
    their_photo = upload(supervisor, number)
    add(reporter, number, name="Ivan Injured", involvement="injured",
        statement={"attachmentId": own_photo["id"]})
    add(supervisor, number, statement={"attachmentId": their_photo["id"]})
    plain = upload(supervisor, number)  # a file that is no statement's photo

    def files(browser):
        return {f["id"] for f in browser.get(f"/api/incidents/{number}").json["attachments"]}

    # The reporter: their own statement's photo and the plain file, not the witness's statement.
    assert files(reporter) == {own_photo["id"], plain["id"]}
    reporter.get(f"/api/attachments/{their_photo['id']}", status=404)
    reporter.get(f"/api/attachments/{their_photo['id']}/preview", status=404)
    reporter.get(f"/api/attachments/{own_photo['id']}", status=200)
    page = reporter.get(f"/incidents/{number}")
    assert f"/api/attachments/{their_photo['id']}" not in page.text
    assert f'value="{their_photo["id"]}"' not in page.text  # nor offered as a photo of theirs
    # A supervisor sees every file.
    assert files(supervisor) == {own_photo["id"], their_photo["id"], plain["id"]}
    supervisor.get(f"/api/attachments/{their_photo['id']}", status=200)


def test_a_closed_incidents_people_stay_as_they_were_closed(admin, site):
    number = report(admin, site)["number"]
    person = add(admin, number)
    bring_to(admin, number, "closed")
    refused = add(admin, number, status=409)
    assert "reopen" in refused["error"]
    admin.patch_json(f"/api/people/{person['id']}", {"name": "Changed"}, status=409)
    admin.delete(f"/api/people/{person['id']}", status=409)
    assert [p["name"] for p in listed(admin, number)] == ["Wanda Witness"]
    # The page shows them, with no form.
    page = admin.get(f"/incidents/{number}")
    assert "Wanda Witness" in page.text and f"/incidents/{number}/people" not in page.text
