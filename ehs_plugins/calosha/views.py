"""The JSON face of the California plugin; the operations live in
`serious`, `violence` and `requests`."""

from __future__ import annotations

from typing import Any

from pyramid.authorization import Allow
from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.incidents.resources import IncidentContext
from ehs_core.security import Permission, Role, role_principal
from ehs_core.sites.models import Site
from ehs_core.sites.zones import site_zone
from ehs_plugins.calosha import requests, serious, violence
from ehs_plugins.calosha.models import ViolentIncident
from ehs_plugins.calosha.schemas import LogRequestSchema, SeriousSchema, ViolenceSchema, log_query_schema

ROOT_FACTORY = "ehs_plugins.calosha.views.CaloshaRoot"
VIEW_LOG = "calosha.view_log"
ASK_FOR_LOG = "calosha.ask_for_log"
LOG_ANSWER = {"type": "object", "required": ["items"], "properties": {"items": {
    "type": "array", "description": (
        "the violent incident log (Labor Code §6401.9(d)), oldest first: entryId, incidentNumber, reference, "
        "date and time on the site's clock, siteId, siteName, area, where, violenceType (1-4), "
        "violenceTypeLabel, incidentKinds, perpetratorRelation, description, circumstances, consequences, "
        "securityCalled, policeCalled, actionsTaken, completedBy {name, title}, completedOn; no name, "
        "address, phone, e-mail or number of any person involved"),
    "items": {"type": "object"}}}}


class CaloshaRoot:
    """Supervisors and above read the log; every signed-in employee may
    ask for a copy."""

    __acl__ = [(Allow, role_principal(Role.supervisor), VIEW_LOG),
               (Allow, role_principal(Role.reporter), ASK_FOR_LOG)]

    def __init__(self, request: Request) -> None:
        self.request = request


def zone_of(request: Request, site_id: int) -> Any:
    return site_zone(request.dbsession.get(Site, site_id).timezone, request.registry)


@view_config(route_name="calosha.violence", request_method="PUT", renderer="json",
             permission=Permission.manage_investigation, body=ViolenceSchema,
             summary="Record or correct the incident's entry in the violent incident log (California sites)")
def put_violence(context: IncidentContext, request: Request) -> dict[str, Any]:
    return violence.entry_json(violence.save_entry(request, context.incident, request.validated))


@view_config(route_name="calosha.serious", request_method="PUT", renderer="json",
             permission=Permission.manage_investigation, body=SeriousSchema,
             summary="The facts of a serious injury (T8 CCR §342(a)); `report` says when Cal/OSHA is owed "
                     "the 8-hour report")
def put_serious(context: IncidentContext, request: Request) -> dict[str, Any]:
    incident = context.incident
    facts = serious.put_facts(request, incident, request.validated)
    return serious.facts_json(request, incident, facts, zone_of(request, incident.site_id))


def _log(request: Request) -> list[dict[str, Any]]:
    query = request.validated_query
    return violence.log_entries(request, query["siteId"], query["from"], query["to"])


@view_config(route_name="calosha.log", request_method="GET", renderer="json", permission=VIEW_LOG,
             query=log_query_schema, answer=LOG_ANSWER,
             summary="The violent incident log, without anything that identifies a person involved")
def violent_incident_log(request: Request) -> dict[str, Any]:
    return {"items": _log(request)}


@view_config(route_name="calosha.log_csv", request_method="GET", permission=VIEW_LOG,
             query=log_query_schema, media="text/csv", summary="The violent incident log as CSV")
def violent_incident_log_csv(request: Request) -> Response:
    return Response(violence.log_csv(_log(request)), content_type="text/csv", charset="utf-8",
                    content_disposition='attachment; filename="violent-incident-log.csv"')


@view_config(route_name="calosha.log_requests", request_method="POST", renderer="json",
             permission=ASK_FOR_LOG, body=LogRequestSchema, responses=(201,),
             summary="An employee asks for a copy of the violent incident log: owed within 15 calendar days")
def ask_for_log(request: Request) -> dict[str, Any]:
    entry, owed = requests.request_copy(request, request.validated)
    request.response.status = 201
    return {"id": entry.id, "requester": entry.requester, "requestedAt": entry.requested_at.isoformat(),
            "dueBy": owed.due_at.isoformat(), "obligationId": owed.id}


def violence_section(request: Request, incidents: list[Any]) -> dict[int, Any]:
    found = {entry.incident_id: violence.entry_json(entry) for entry in request.dbsession.execute(
        select(ViolentIncident).where(ViolentIncident.incident_id.in_([i.id for i in incidents]))).scalars()}
    return {incident.id: found.get(incident.id) for incident in incidents}


def serious_section(request: Request, incidents: list[Any]) -> dict[int, Any]:
    answers = {}
    for incident in incidents:
        facts = serious.facts_of(request, incident.id)
        answers[incident.id] = None if facts is None else serious.facts_json(
            request, incident, facts, zone_of(request, incident.site_id))
    return answers
