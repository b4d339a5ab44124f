"""An injured person named on the incident (the core's people, issue #39
item 4) starts an injury case with their name filled in: through the API
(`personId`) and from their row on the people panel. One case per injured
person (1904.4, a case is one injured or ill person): a second is refused,
and the person cannot be removed or made a witness while the case names
them."""

from __future__ import annotations

from typing import Any

import pytest

from ehs_core.testing import form_with
from tests.plugins.osha import OSHA, add_case, assert_error, cases_of, issue_paths, new_incident


@pytest.fixture
def incident(manager: Any, site: int) -> dict:
    return new_incident(manager, site)


def name_person(browser: Any, number: int, **body: Any) -> dict:
    payload = {"name": "Ivan Injured", "involvement": "injured", "employmentType": "temporary_worker", **body}
    return browser.post_json(f"/api/incidents/{number}/people", payload, status=201).json


def test_a_case_started_from_an_injured_person_takes_their_name_once(manager, incident):
    number = incident["number"]
    person = name_person(manager, number)
    case = add_case(manager, number, name=None, personId=person["id"]).json
    assert case["name"] == "Ivan Injured"
    assert case["personId"] == person["id"]
    assert case["employmentType"] == "temporary_worker"  # the person's answer, kept
    # One case per injured person.
    refused = add_case(manager, number, name="Ivan Again", personId=person["id"], status=409)
    assert_error(refused, 409)
    assert "already has an injury case" in refused.json["error"]
    assert [c["personId"] for c in cases_of(manager, number)] == [person["id"]]


def test_only_an_injured_person_of_the_same_incident_starts_a_case(manager, site, incident):
    number = incident["number"]
    witness = name_person(manager, number, name="Wanda Witness", involvement="witness")
    refused = add_case(manager, number, name=None, personId=witness["id"], status=400)
    assert issue_paths(refused) == {"personId"}
    elsewhere = name_person(manager, new_incident(manager, site)["number"])
    assert issue_paths(add_case(manager, number, personId=elsewhere["id"], status=400)) == {"personId"}
    assert issue_paths(add_case(manager, number, name=None, status=400)) == {"name"}
    assert cases_of(manager, number) == []


def test_the_case_keeps_its_person(manager, incident):
    number = incident["number"]
    person = name_person(manager, number)
    add_case(manager, number, name=None, personId=person["id"])
    refused = manager.delete(f"/api/people/{person['id']}", status=409)
    assert "injury case" in refused.json["error"]
    manager.patch_json(f"/api/people/{person['id']}", {"involvement": "witness"}, status=409)
    manager.patch_json(f"/api/people/{person['id']}", {"contact": "+1 555 0100"}, status=200)
    assert [p["involvement"] for p in manager.get(f"/api/incidents/{number}/people").json] == ["injured"]


def test_the_injured_persons_row_starts_the_case_with_their_name(manager, make_user, incident):
    number = incident["number"]
    person = name_person(manager, number)
    page = manager.get(f"/incidents/{number}")
    form = form_with(page, f"/incidents/{number}/cases")
    assert form["name"].value == "Ivan Injured" and form["personId"].value == str(person["id"])
    started = form.submit(status=302)
    [case] = cases_of(manager, number)
    assert case["personId"] == person["id"] and case["name"] == "Ivan Injured"
    assert started.location.endswith(f"/osha/cases/{case['id']}?notice=saved")
    # Now the row leads to the case; the same form posted again is refused, said on the panel.
    page = manager.get(f"/incidents/{number}")
    assert f"/osha/cases/{case['id']}" in page.text and "Open the injury case" in page.text
    again = form.submit(status=302)
    assert "case_error=person-has-case" in again.location
    assert "already has an injury case" in again.follow().text
    assert len(cases_of(manager, number)) == 1
    # A supervisor sees the person but no way into the injury records.
    supervisor = make_user("supervisor")
    shown = supervisor.get(f"/incidents/{number}")
    assert "Ivan Injured" in shown.text and "Start an injury case" not in shown.text
    supervisor.post(f"/incidents/{number}/cases", {"name": "Ivan Injured", "personId": str(person["id"])},
                    status=403)
    supervisor.post_json(f"{OSHA}/incidents/{number}/cases", {"personId": person["id"]}, status=403)
