"""The JSON face of the follow-up: the reporter's two endpoints (by code, no
sign-in) and the team's (on the incident, supervisor and above). The rules
live in `services`."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config

from ehs_core.errors import DomainError, error_response
from ehs_core.followup import services
from ehs_core.followup.schemas import MessageSchema
from ehs_core.incidents.resources import IncidentContext
from ehs_core.security import Permission

REPORTER_MESSAGE = {"type": "object", "required": ["id", "from", "body", "createdAt"], "properties": {
    "id": {"type": "integer"},
    "from": {"enum": ["team", "you"], "description": "the safety team's message, or the reporter's own"},
    "body": {"type": "string"}, "createdAt": {"type": "string", "format": "date-time"}}}
REPORTER_VIEW = {"type": "object", "required": ["reference", "title", "status", "closedAt", "messages"],
                 "properties": {
                     "reference": {"type": "string"}, "title": {"type": "string"},
                     "status": {"enum": ["reported", "triage", "investigation", "actions", "verification",
                                         "closed"]},
                     "closedAt": {"type": ["string", "null"], "format": "date-time"},
                     "messages": {"type": "array", "items": REPORTER_MESSAGE}}}
TEAM_MESSAGE = {"type": "object", "required": ["id", "direction", "body", "createdAt", "author"],
                "properties": {
    "id": {"type": "integer"},
    "direction": {"enum": ["toReporter", "fromReporter"]},
    "body": {"type": "string"}, "createdAt": {"type": "string", "format": "date-time"},
    "author": {"type": ["object", "null"],
               "description": "the team member who wrote; null for the reporter"}}}
TEAM_THREAD = {"type": "object", "required": ["ended", "messages"], "properties": {
    "ended": {"type": "boolean", "description": "the incident has been closed for more than 90 days: the "
                                                "code no longer works and no message can be added"},
    "messages": {"type": "array", "items": TEAM_MESSAGE}}}


def _refused(request: Request, exc: DomainError) -> Response:
    # Answered, not raised: a wrong code's count must commit.
    return error_response(request, exc.status, exc.message, exc.issues, exc.headers)


@view_config(route_name="follow_up", request_method="GET", renderer="json",
             permission=NO_PERMISSION_REQUIRED, answer=REPORTER_VIEW,
             summary="With a report's follow-up code: its status and the thread with the safety team "
                     "(wrong codes are limited per client address: 429)")
def reporter_view(request: Request) -> Any:
    try:
        incident = services.incident_for_code(request, request.matchdict["code"])
    except DomainError as exc:
        return _refused(request, exc)
    return services.reporter_json(request, incident)


@view_config(route_name="follow_up.messages", request_method="POST", renderer="json",
             permission=NO_PERMISSION_REQUIRED, body=MessageSchema, answer=REPORTER_MESSAGE,
             responses=(201,),
             summary="The reporter answers the safety team, with the report's follow-up code")
def reporter_answer(request: Request) -> Any:
    try:
        incident = services.incident_for_code(request, request.matchdict["code"])
    except DomainError as exc:
        return _refused(request, exc)
    message = services.answer_team(request, incident, request.validated["body"])
    request.response.status = 201
    return services.reporter_message_json(message)


@view_config(route_name="incident.follow_up_messages", request_method="GET", renderer="json",
             permission=Permission.follow_up, answer=TEAM_THREAD,
             summary="The follow-up thread of a report filed without a name (supervisor and above); 409 "
                     "for a report that has none")
def team_thread(context: IncidentContext, request: Request) -> dict[str, Any]:
    return services.team_json(request, context.incident)


@view_config(route_name="incident.follow_up_messages", request_method="POST", renderer="json",
             permission=Permission.follow_up, body=MessageSchema, answer=TEAM_MESSAGE, responses=(201,),
             summary="Write to the reporter of a report filed without a name (supervisor and above); "
                     "409 when the report has no follow-up or it has ended")
def team_write(context: IncidentContext, request: Request) -> dict[str, Any]:
    message = services.write_to_reporter(request, context.incident, request.validated["body"])
    request.response.status = 201
    names = services.user_names(request, {message.author_id})
    return services.team_message_json(message, names)
