"""The investigation workspace on the incident page, per role: supervisors
set the lead, method, summary and completion, record root causes and grow
each cause's "why?" chain one answer at a time; a reporter who sees the
incident reads it but gets no form and is refused as by the API; the
fishbone groups causes by category; an action can be added for a cause."""

from __future__ import annotations

import re
from html import unescape

import pytest

from ehs_core.investigation.models import RootCause
from ehs_core.investigation.pages import fishbone
from ehs_core.testing import form_with
from tests.core.workflow.support import add_root_cause, detail, new_site, report


@pytest.fixture
def team(admin, make_user):
    return {"admin": admin, "reporter": make_user("reporter", name="Rita Reporter"),
            "supervisor": make_user("supervisor", name="Sam Supervisor"),
            "manager": make_user("safety_manager", name="Sue Safety")}


@pytest.fixture
def number(team):
    site = new_site(team["admin"])
    return report(team["reporter"], site, title="Oil on the floor")["number"]


def test_a_supervisor_saves_the_investigation_and_lands_back_on_it(team, number):
    boss = team["supervisor"]
    page = boss.get(f"/incidents/{number}")
    form = form_with(page, f"/incidents/{number}/investigation")
    form["leadId"] = str(boss.user["id"])
    form["method"] = "5 whys"
    form["summary"] = "The hose burst under pressure."
    form["completed"] = True
    saved = form.submit(status=302)
    assert saved.location.endswith(f"/incidents/{number}?notice=saved#investigation")
    investigation = detail(boss, number)["investigation"]
    assert investigation["leadId"] == boss.user["id"] and investigation["method"] == "5 whys"
    assert investigation["completed"] is True
    # A reporter reads it (with the lead's name) and has no form.
    shown = team["reporter"].get(f"/incidents/{number}")
    assert "Sam Supervisor" in shown.text and "The hose burst under pressure." in shown.text
    assert f"/incidents/{number}/investigation" not in shown.text
    team["reporter"].post(f"/incidents/{number}/investigation", {"method": "guess"}, status=403)
    assert detail(boss, number)["investigation"]["method"] == "5 whys"


def test_a_lead_who_does_not_exist_is_refused_next_to_the_field(team, number):
    refused = team["supervisor"].post(f"/incidents/{number}/investigation", {"leadId": "9999"}, status=400)
    assert 'id="leadId-error"' in refused.text and "Unknown or inactive user" in refused.text
    assert detail(team["supervisor"], number)["investigation"] is None


def test_a_cause_and_its_why_chain_grow_one_answer_at_a_time(team, number):
    boss = team["supervisor"]
    form = form_with(boss.get(f"/incidents/{number}"), f"/incidents/{number}/root-causes")
    form["category"] = "equipment"
    form["description"] = "The hydraulic hose burst"
    form["why"] = "It was worn through"
    added = form.submit(status=302)
    cause = detail(boss, number)["rootCauses"][0]
    assert added.location.endswith(f"#cause-{cause['id']}")
    assert cause["whys"] == ["It was worn through"]
    for answer in ("Nobody checked it", "Inspections are not on the schedule"):
        page = boss.get(f"/incidents/{number}")
        why = form_with(page, f"/incidents/{number}/root-causes/{cause['id']}/whys")
        why["answer"] = answer
        why.submit(status=302)
    assert detail(boss, number)["rootCauses"][0]["whys"] == [
        "It was worn through", "Nobody checked it", "Inspections are not on the schedule"]
    page = boss.get(f"/incidents/{number}")
    assert "Why? (answer 4)" in page.text
    # An empty answer is refused in words, next to that cause's field.
    empty = boss.post(f"/incidents/{number}/root-causes/{cause['id']}/whys", {"answer": " "}, status=400)
    assert f'id="why-{cause["id"]}-error"' in empty.text and "Write the answer" in empty.text
    assert len(detail(boss, number)["rootCauses"][0]["whys"]) == 3


@pytest.mark.parametrize("bad", ["\x00", "\x01", "\x1b[31m", "\x7f"], ids=["nul", "soh", "esc", "del"])
def test_control_characters_in_a_why_or_a_cause_are_refused_as_by_the_api(team, number, bad):
    """A NUL was stored in a root cause's "why" (the page skipped the API's
    text rules); now the page refuses it next to the field, as the API does."""
    boss = team["supervisor"]
    cause = add_root_cause(boss, number, description="The hose burst")
    before = detail(boss, number)["rootCauses"]
    refused = boss.post(f"/incidents/{number}/root-causes/{cause['id']}/whys",
                        {"answer": f"It was{bad}worn"}, status=400)
    assert f'id="why-{cause["id"]}-error"' in refused.text and "control characters" in refused.text
    boss.post(f"/incidents/{number}/root-causes", {"category": "equipment", "description": f"Hose{bad}",
                                                  "why": "Worn"}, status=400)
    assert detail(boss, number)["rootCauses"] == before
    boss.patch_json(f"/api/root-causes/{cause['id']}", {"whys": [f"a{bad}b"]}, status=400)


def test_htmx_swaps_only_the_workspace_and_keeps_the_place(team, number):
    boss = team["supervisor"]
    cause = add_root_cause(boss, number, whys=[])
    fragment = boss.post(f"/incidents/{number}/root-causes/{cause['id']}/whys", {"answer": "Worn out"},
                         headers={"HX-Request": "true"})
    assert fragment.text.lstrip().startswith('<section class="card" id="investigation"')
    assert "<html" not in fragment.text and "Worn out" in fragment.text
    # Focus goes to the next "why?" of the same cause, and the change is announced.
    assert re.search(rf'id="why-{cause["id"]}"[^>]*data-focus', fragment.text)
    assert "data-announce=" in fragment.text
    refused = boss.post(f"/incidents/{number}/root-causes", {"category": "", "description": ""},
                        headers={"HX-Request": "true"})
    assert 'id="category-error"' in refused.text and 'id="description-error"' in refused.text


def test_a_cause_of_another_incident_is_not_found(team, number):
    other = report(team["admin"], new_site(team["admin"], "Plant South"))["number"]
    cause = add_root_cause(team["supervisor"], other)
    there = f"/incidents/{number}/root-causes/{cause['id']}"
    team["supervisor"].post(there + "/whys", {"answer": "x"}, status=404)
    team["supervisor"].post(there + "/remove", status=404)
    assert detail(team["supervisor"], other)["rootCauses"][0]["whys"] == ["The seal was old"]


def test_a_reporter_who_cannot_see_the_incident_gets_404(team, make_user, number):
    stranger = make_user("reporter")
    stranger.post(f"/incidents/{number}/root-causes", {"category": "x", "description": "y"}, status=404)


def test_removing_a_cause(team, number):
    boss = team["supervisor"]
    cause = add_root_cause(boss, number)
    remove = f"/incidents/{number}/root-causes/{cause['id']}/remove"
    form = form_with(boss.get(f"/incidents/{number}"), remove)
    form.submit(status=302)
    assert detail(boss, number)["rootCauses"] == []


def test_the_fishbone_groups_causes_by_category(team, number):
    boss = team["supervisor"]
    add_root_cause(boss, number, category="equipment", description="Hose burst")
    add_root_cause(boss, number, category="training", description="New operator")
    add_root_cause(boss, number, category="Equipment ", description="No pressure relief")
    page = boss.get(f"/incidents/{number}")
    bones = re.findall(r'<li class="bone">\s*<h4>(.*?) <span class="muted">\((\d+)\)', page.text)
    assert bones == [("equipment", "2"), ("training", "1")]


def test_fishbone_ignores_case_and_spacing_and_keeps_first_order():
    causes = [RootCause(id=1, category="People", description="a"),
              RootCause(id=2, category="machine", description="b"),
              RootCause(id=3, category=" people", description="c")]
    assert [(name, [c.id for c in items]) for name, items in fishbone(causes)] == [
        ("People", [1, 3]), ("machine", [2])]


def test_add_a_corrective_action_for_a_cause(team, number):
    boss = team["supervisor"]
    cause = add_root_cause(boss, number)
    page = boss.get(f"/incidents/{number}")
    link = f'href="/incidents/{number}?cause={cause["id"]}#new-action"'
    assert link in page.text and "Add a corrective action for this cause" in page.text
    page = boss.get(f"/incidents/{number}", {"cause": cause["id"]})
    form = form_with(page, f"/incidents/{number}/actions")
    assert form["rootCauseId"].value == str(cause["id"])
    form["title"] = "Replace the hose"
    form["assigneeId"] = str(team["reporter"].user["id"])
    form["dueDate"] = "2030-05-01"
    added = form.submit(status=302)
    action = detail(boss, number)["actions"][0]
    assert added.location.endswith(f"#action-{action['id']}")
    assert action["rootCauseId"] == cause["id"] and action["assigneeId"] == team["reporter"].user["id"]
    assert action["dueDate"] == "2030-05-01"
    shown = boss.get(f"/incidents/{number}")
    assert "1 May 2030" in shown.text and f'href="/actions/{action["id"]}"' in shown.text
    # Refusals as the API's, next to the field; a reporter may not add one.
    refused = boss.post(f"/incidents/{number}/actions", {"title": "", "dueDate": "someday"}, status=400)
    assert 'id="title-error"' in refused.text and 'id="dueDate-error"' in refused.text
    team["reporter"].post(f"/incidents/{number}/actions", {"title": "Mine"}, status=403)
    assert len(detail(boss, number)["actions"]) == 1


def picker(page, select_id: str) -> list[tuple[str, str, bool]]:
    """(value, label, selected) of a select's options, as a browser reads them."""
    found = re.search(rf'<select id="{select_id}"[^>]*>(.*?)</select>', page.text, re.S)
    return [(value, unescape(label), bool(chosen)) for value, chosen, label in
            re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', found.group(1))]


def test_the_people_pickers_list_everyone_active_with_the_lead_chosen(team, number, make_user):
    boss = team["supervisor"]
    odd = make_user("reporter", name="Zoë <b>O'Hara</b> & Co")
    boss.put_json(f"/api/incidents/{number}/investigation", {"leadId": team["manager"].user["id"]})
    lead = picker(boss.get(f"/incidents/{number}"), "inv-lead")
    assert lead[0] == ("", "Nobody yet", False)
    assert [label for _, label, chosen in lead if chosen] == ["Sue Safety (Safety manager)"]
    assert (str(odd.user["id"]), "Zoë <b>O'Hara</b> & Co (Reporter)", False) in lead
    assignees = picker(boss.get(f"/incidents/{number}"), "action-assignee")
    assert [value for value, *_ in assignees] == [value for value, *_ in lead]
    assert not any(chosen for *_, chosen in assignees)
    # The lists follow people's changes on the next page.
    team["admin"].patch_json(f"/api/users/{odd.user['id']}", {"name": "Zoe Hara"})
    team["admin"].patch_json(f"/api/users/{team['reporter'].user['id']}", {"active": False})
    lead = picker(boss.get(f"/incidents/{number}"), "inv-lead")
    assert (str(odd.user["id"]), "Zoe Hara (Reporter)", False) in lead
    assert str(team["reporter"].user["id"]) not in [value for value, *_ in lead]
    assert [label for _, label, chosen in lead if chosen] == ["Sue Safety (Safety manager)"]
