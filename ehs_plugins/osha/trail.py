"""Case decisions in the incident's audit trail.

A recordkeeper must be able to show an inspector why a case was, or was not,
on the log at any time: every recalculation that changes `recordable`,
`outcome` or `caseType` is kept with the reasoning of that moment (the
rules and paragraphs of 29 CFR 1904 that applied). The entries hold no
name, and only safety managers read them on the timeline (they are case
records, like the rest of the plugin's data).
"""

from __future__ import annotations

from typing import Any

from pyramid.request import Request

from ehs_core.audit import record
from ehs_core.incidents.models import Incident
from ehs_core.security import Role, role_at_least
from ehs_plugins.osha.cases import answers, case_number
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.recordability import classify

DECISION_ACTION = "osha.case_decision"


def decision(case: InjuryCase) -> dict[str, Any]:
    """What was decided, and why, as the audit trail keeps it."""
    return {"recordable": case.recordable, "outcome": case.outcome, "caseType": case.effective_case_type,
            "reasoning": classify(answers(case)).explanation.json()}


def may_see_decisions(request: Request) -> bool:
    identity = request.identity
    return bool(identity and identity.is_user and role_at_least(identity.role, Role.safety_manager))


def record_decision(request: Request, case: InjuryCase, incident: Incident,
                    before: dict[str, Any] | None, actor_id: int | None) -> None:
    """Keep the decision in the audit trail when it changed (or the case is
    new: `before` is None). The plugin's only write to the trail, made by
    the listener on CaseChanged (listeners.py)."""
    after = decision(case)
    keys = ("recordable", "outcome", "caseType")
    if before is not None and all(before[key] == after[key] for key in keys):
        return
    old = before or dict.fromkeys(after)
    changes = {key: {"old": old[key], "new": after[key]} for key in (*keys, "reasoning")}
    changes["case"] = {"old": None, "new": {"id": case.id, "caseNumber": case_number(incident, case)}}
    record(request.dbsession, incident.id, DECISION_ACTION, changes, actor_id)
