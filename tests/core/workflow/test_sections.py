"""The workflow's part of an incident's detail: `transitions` and `can` come
from sections the workflow registers, and the moves (with their conditions'
queries) are worked out once per request, however many parts read them."""

from __future__ import annotations

import ehs_core.workflow.sections as sections
from tests.core.incidents import file_report, move, new_site


def test_the_moves_are_worked_out_once_for_transitions_and_can(admin, monkeypatch):
    site = new_site(admin)["id"]
    number = file_report(admin, site, severity="high")["number"]
    move(admin, number, "triage")
    calls = []
    real = sections.transitions_for

    def counted(request, incident):
        calls.append(incident.id)
        return real(request, incident)

    monkeypatch.setattr(sections, "transitions_for", counted)
    detail = admin.get(f"/api/incidents/{number}").json
    assert len(calls) == 1
    blocked = {t["to"]: t["blockedReason"] for t in detail["transitions"]}
    assert blocked["closed"] == "Only low or medium severity incidents can be closed from triage"
    assert blocked["investigation"] is None
    assert detail["can"]["transition"] is True


def test_a_reporter_sees_no_moves_and_may_not_transition(admin, make_user):
    site = new_site(admin)["id"]
    reporter = make_user("reporter")
    number = file_report(reporter, site)["number"]
    detail = reporter.get(f"/api/incidents/{number}").json
    assert detail["transitions"] == []
    assert detail["can"] == {"update": False, "transition": False, "comment": True, "upload": True,
                             "investigate": False, "addRootCause": False, "addAction": False}
