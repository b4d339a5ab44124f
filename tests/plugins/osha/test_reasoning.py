"""Decisions that explain themselves: every case answer carries the rules of
29 CFR 1904 behind recordable, outcome and caseType, what is still missing
and what would change the decision; each change of the decision is kept in
the incident's audit trail with the reasoning of that moment, which only
safety managers read."""

from __future__ import annotations

from typing import Any

from tests.plugins.osha import INCIDENTS, WORK, new_case, new_incident, patch_case


def texts(items: list[dict[str, Any]]) -> list[str]:
    return [item["text"] for item in items]


def decisions(browser: Any, number: int) -> list[dict[str, Any]]:
    timeline = browser.get(f"{INCIDENTS}/{number}/timeline", status=200).json
    return [entry for entry in timeline if entry["action"] == "osha.case_decision"]


def test_a_case_answer_explains_recordable_outcome_and_case_type(manager: Any, site: int) -> None:
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, daysAwayFromWork=True, daysAway=4, medicalTreatment=True)
    reasoning = case["reasoning"]
    assert texts(reasoning["recordable"]) == [
        "Recordable: days away from work \u2014 1904.7(b)(3)",
        "Recordable: medical treatment beyond first aid \u2014 1904.7(b)(5)"]
    assert [(r["rule"], r["paragraph"]) for r in reasoning["outcome"]] == \
        [("outcome_days_away", "1904.7(b)(3)")]
    assert [r["rule"] for r in reasoning["caseType"]] == ["type_answered"]  # injury, from the incident's type
    assert reasoning["missing"] == []
    assert {tuple(hint["fields"]) for hint in reasoning["wouldChange"]} == {("workRelated",), ("newCase",),
                                                                           ("died",)}


def test_an_undecided_case_says_what_is_missing(manager: Any, site: int) -> None:
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, daysAway=2)
    assert case["recordable"] is False
    assert [r["rule"] for r in case["reasoning"]["recordable"]] == ["work_related_undecided",
                                                                    "new_case_undecided"]
    assert [hint["fields"] for hint in case["reasoning"]["missing"]] == [["workRelated"], ["newCase"]]
    assert all(hint["text"].endswith(hint["paragraph"]) for hint in case["reasoning"]["missing"])


def test_each_change_of_the_decision_is_in_the_audit_trail_with_its_reasoning(manager: Any,
                                                                             site: int) -> None:
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK)  # first aid only: not recordable
    patch_case(manager, case["id"], jobTitle="Welder")  # the decision does not change: no entry
    patch_case(manager, case["id"], medicalTreatment=True)  # recordable, column J
    patch_case(manager, case["id"], daysAway=3)  # column H
    patch_case(manager, case["id"], workRelated=False)  # not recordable again
    entries = decisions(manager, number)
    assert [(e["changes"]["recordable"]["new"], e["changes"]["outcome"]["new"]) for e in entries] == [
        (False, None), (True, "other_recordable"), (True, "days_away"), (False, None)]
    assert [e["changes"]["case"]["new"] for e in entries] == [{"id": case["id"],
                                                             "caseNumber": case["caseNumber"]}] * 4
    assert all(e["actor"] is not None for e in entries)
    reasons = [[r["rule"] for r in e["changes"]["reasoning"]["new"]["recordable"]] for e in entries]
    assert reasons == [["no_criterion"], ["medical_treatment"], ["days_away", "medical_treatment"],
                       ["not_work_related"]]
    # Each entry also keeps the reasoning it replaced.
    assert entries[2]["changes"]["reasoning"]["old"] == entries[1]["changes"]["reasoning"]["new"]
    assert entries[0]["changes"]["reasoning"]["old"] is None
    assert (entries[2]["changes"]["outcome"]["old"], entries[2]["changes"]["outcome"]["new"]) == \
        ("other_recordable", "days_away")


def test_case_decisions_on_the_timeline_are_for_safety_managers_only(manager: Any, make_user: Any,
                                                                    site: int) -> None:
    reporter = make_user("reporter")
    supervisor = make_user("supervisor")
    number = new_incident(reporter, site)["number"]
    new_case(manager, number, "Zed Quill", **WORK, daysAway=3)
    assert len(decisions(manager, number)) == 1
    for browser in (reporter, supervisor):
        timeline = browser.get(f"{INCIDENTS}/{number}/timeline", status=200).json
        assert timeline, "the incident's own entries are still there"
        assert decisions(browser, number) == []
    # No name in the trail either.
    assert "Quill" not in str(decisions(manager, number))


def test_the_openapi_document_describes_the_added_fields(client: Any) -> None:
    paths = client.get("/api/openapi.json", status=200).json["paths"]
    for method, path in (("get", "/api/osha/incidents/{number}/cases"),
                         ("post", "/api/osha/incidents/{number}/cases"), ("patch", "/api/osha/cases/{id}")):
        summary = paths[path][method]["summary"]
        assert "reasoning" in summary and "pastDueWhenEntered" in summary
    assert "caseNumber" in paths["/api/osha/log"]["get"]["summary"]
