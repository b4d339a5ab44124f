"""The JSON face of injury and illness cases (the operations live in
`services`); every endpoint needs safety_manager."""

from __future__ import annotations

from typing import Any

from pyramid.authorization import Allow
from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import ColumnElement, func, select

from ehs_core.incidents.models import Incident
from ehs_core.security import Role, role_principal
from ehs_plugins.osha import services
from ehs_plugins.osha.cases import case_json, form_301_json
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.schemas import case_create_schema, case_update_schema

MANAGE = "osha.manage"
# What a case answer holds beyond the fields sent (for the OpenAPI document).
CASE_ANSWER = (
    "A case answer adds to its fields: recordable, outcome, caseType and privacyCase as computed; "
    "severeReport ({withinHours, reasons, dueBy, enteredAt, pastDueWhenEntered}, times on the "
    "establishment's clock, counted from learnedAt when the employer learned later, 1904.39(b)(7)-(8)) "
    "when a direct report to OSHA is owed; recordBy, the 7-day recording deadline of 1904.29(b)(3) "
    "while recordability is undecided (else null); dateWarnings [{field, message}], dates possible "
    "but unusual; periods as sent, with daysAway and daysRestricted counted from them by 1904.7(b)(3)-(4) "
    "(an open period counts to today); missingFields; and reasoning "
    "({recordable, outcome, caseType: [{rule, paragraph, text}], missing, wouldChange: "
    "[{fields, paragraph, text}]}), the rules of 29 CFR 1904 behind the decision.")


class OshaRoot:
    __acl__ = [(Allow, role_principal(Role.safety_manager), MANAGE)]

    def __init__(self, request: Request) -> None:
        self.request = request


@view_config(route_name="osha.incident_cases", request_method="GET", renderer="json", permission=MANAGE,
             summary="The incident's cases. " + CASE_ANSWER)
def list_cases(request: Request) -> list[dict[str, Any]]:
    incident = services.load_incident(request, int(request.matchdict["number"]))
    zone = services.zone_of(request, incident)
    return [case_json(case, incident, zone) for case in services.list_cases(request, incident)]


@view_config(route_name="osha.incident_cases", request_method="POST", renderer="json", permission=MANAGE,
             body=case_create_schema, responses=(201,), summary="Add a case. " + CASE_ANSWER)
def create_case(request: Request) -> dict[str, Any]:
    case, incident = services.create_case(request, int(request.matchdict["number"]), request.validated)
    request.response.status = 201
    return case_json(case, incident, services.zone_of(request, incident))


@view_config(route_name="osha.case", request_method="PATCH", renderer="json", permission=MANAGE,
             body=case_update_schema, summary="Change a case; the decision is recalculated. " + CASE_ANSWER)
def update_case(request: Request) -> dict[str, Any]:
    case, incident = services.load_case(request, int(request.matchdict["id"]))
    services.update_case(request, case, incident, request.validated)
    return case_json(case, incident, services.zone_of(request, incident))


@view_config(route_name="osha.case", request_method="DELETE", permission=MANAGE,
             responses=(204,))
def delete_case(request: Request) -> HTTPNoContent:
    services.delete_case(request, *services.load_case(request, int(request.matchdict["id"])))
    return HTTPNoContent()


@view_config(route_name="osha.case_301", request_method="GET", renderer="json", permission=MANAGE)
def form_301(request: Request) -> dict[str, Any]:
    """The data of OSHA Form 301 (Injury and Illness Incident Report)."""
    case, incident = services.load_case(request, int(request.matchdict["id"]))
    return form_301_json(case, incident, services.zone_of(request, incident))


def injured_count_column() -> ColumnElement[int]:
    """How many cases the incident has, read with the incident (a column section)."""
    return select(func.count()).where(InjuryCase.incident_id == Incident.id).scalar_subquery()


def injured_count(request: Request, incident: Incident, value: int | None) -> int:
    """The only case figure shown to everyone who may see the incident;
    kept for the incident page's panel (`services.counts_of`)."""
    request.osha_case_counts[incident.id] = value or 0
    return value or 0


