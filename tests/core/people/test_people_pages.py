"""The people panel on the incident page: it lists whom the caller may see
(a reporter their own entries, a supervisor everyone), its add form works
without JavaScript (a plain post, back at the person) and with htmx (the
panel alone), refusals come back next to their fields, an entry is edited
on its own page and removed by a supervisor."""

from __future__ import annotations

import pytest

from ehs_core.testing import form_with
from tests.core.workflow.support import new_site, report


@pytest.fixture
def team(admin, make_user):
    return {"admin": admin, "reporter": make_user("reporter", name="Rita Reporter"),
            "supervisor": make_user("supervisor", name="Sam Supervisor")}


@pytest.fixture
def number(team):
    site = new_site(team["admin"])
    return report(team["reporter"], site, title="Oil on the floor")["number"]


def people(browser, number):
    return browser.get(f"/api/incidents/{number}/people").json


def test_the_panel_adds_a_witness_without_javascript(team, number):
    boss = team["supervisor"]
    page = boss.get(f"/incidents/{number}")
    assert 'id="people-title"' in page.text and "Nobody named yet." in page.text
    form = form_with(page, f"/incidents/{number}/people")
    form["name"] = "Wanda Witness"
    form["involvement"] = "witness"
    form["employmentType"] = "contractor"
    form["role"] = "Forklift driver"
    form["statementText"] = "I saw the pallet tip over."
    form["statementDate"] = "2026-01-05"
    saved = form.submit(status=302)
    [person] = people(boss, number)
    assert saved.location.endswith(f"/incidents/{number}?notice=saved#person-{person['id']}")
    assert person["statement"] == {"text": "I saw the pallet tip over.", "date": "2026-01-05",
                                   "attachmentId": None}
    shown = saved.follow()
    assert f'id="person-{person["id"]}"' in shown.text
    assert "Wanda Witness" in shown.text and "I saw the pallet tip over." in shown.text
    assert "Contractor" in shown.text and "Forklift driver" in shown.text


def test_with_htmx_the_panel_alone_comes_back(team, number):
    boss = team["supervisor"]
    answer = boss.post(f"/incidents/{number}/people", {"name": "Ivan Injured", "involvement": "injured"},
                       headers={"HX-Request": "true"}, status=200)
    assert answer.text.lstrip().startswith('<section class="card" id="people"')
    assert "<html" not in answer.text
    assert "Ivan Injured" in answer.text and 'data-announce="Ivan Injured was added."' in answer.text


def test_a_refused_form_shows_its_errors_and_keeps_nothing(team, number):
    boss = team["supervisor"]
    refused = boss.post(f"/incidents/{number}/people", {"name": "", "involvement": "bystander",
                                                        "statementDate": "2026-01-05"}, status=400)
    assert 'id="new-person-name-error"' in refused.text
    assert 'id="new-person-involvement-error"' in refused.text
    # Only a date is no statement: said next to the form.
    assert "A statement needs its text" in boss.post(
        f"/incidents/{number}/people", {"name": "Wanda", "involvement": "witness",
                                        "statementDate": "2026-01-05"}, status=400).text
    assert people(boss, number) == []


def test_a_reporter_sees_only_their_own_entries_on_the_panel(team, number):
    boss, reporter = team["supervisor"], team["reporter"]
    boss.post_json(f"/api/incidents/{number}/people",
                   {"name": "Sam Seen", "involvement": "witness", "statement": {"text": "Secret words"}})
    page = reporter.get(f"/incidents/{number}")
    assert "Sam Seen" not in page.text and "Secret words" not in page.text
    form = form_with(page, f"/incidents/{number}/people")
    form["name"] = "Ivan Injured"
    form["involvement"] = "injured"
    form.submit(status=302)
    page = reporter.get(f"/incidents/{number}")
    assert "Ivan Injured" in page.text and "Sam Seen" not in page.text
    # A reporter gets no remove button, and the route refuses them.
    [mine] = people(reporter, number)
    assert f"/incidents/{number}/people/{mine['id']}/remove" not in page.text
    reporter.post(f"/incidents/{number}/people/{mine['id']}/remove", status=403)
    # The supervisor's entry is not theirs to open.
    [theirs] = [p for p in people(boss, number) if p["name"] == "Sam Seen"]
    reporter.get(f"/incidents/{number}/people/{theirs['id']}", status=404)


def test_an_entry_is_edited_on_its_own_page_and_removed_by_a_supervisor(team, number):
    boss = team["supervisor"]
    person = boss.post_json(f"/api/incidents/{number}/people",
                            {"name": "Wanda Witness", "involvement": "witness",
                             "statement": {"text": "First words", "date": "2026-01-05"}}).json
    page = boss.get(f"/incidents/{number}/people/{person['id']}")
    form = form_with(page, f"/incidents/{number}/people/{person['id']}")
    assert form["statementText"].value == "First words"
    form["contact"] = "wanda@example.com"
    form["statementText"] = ""
    refused = form.submit(status=400)  # only a date left: no statement
    assert "A statement needs its text" in refused.text
    form = form_with(refused, f"/incidents/{number}/people/{person['id']}")
    form["statementDate"] = ""
    saved = form.submit(status=302)
    assert saved.location.endswith(f"#person-{person['id']}")
    [changed] = people(boss, number)
    assert changed["contact"] == "wanda@example.com" and changed["statement"] is None

    page = boss.get(f"/incidents/{number}")
    removed = form_with(page, f"/incidents/{number}/people/{person['id']}/remove").submit(status=302)
    assert removed.location.endswith("#people")
    assert people(boss, number) == []
