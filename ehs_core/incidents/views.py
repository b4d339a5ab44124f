"""The JSON face of incidents: parse, call the operation, render. The
operations live in `filing`, `listing` and `comments`."""

from __future__ import annotations

import json
import logging
from typing import Any

from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config

from ehs_core.followup.services import issue_code
from ehs_core.incidents.comments import add_comment as add_comment_to
from ehs_core.incidents.comments import list_comments as comments_of
from ehs_core.incidents.filing import check_user_replay, file_incident, update_incident
from ehs_core.incidents.listing import COUNT_BOUND, list_page, list_schema
from ehs_core.incidents.models import Comment, Incident
from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.schemas import CommentSchema, IncidentCreateSchema, IncidentUpdateSchema
from ehs_core.incidents.serialize import (
    incident_json,
    incidents_json,
    incidents_json_text,
    iso,
    person,
    user_names,
)
from ehs_core.security import Permission

log = logging.getLogger(__name__)


@view_config(route_name="incidents", request_method="POST", renderer="json",
             permission=Permission.signed_in, body=IncidentCreateSchema,
             responses=(200, 201))
def create(request: Request) -> Any:
    data = request.validated
    user = request.identity.account  # the identity row's columns: no ORM User to build
    incident, created = file_incident(request, data, user.organization_id, user.id)
    if not created:
        return replay(request, incident, data)
    # Numbered by `file_incident`, in this transaction: the answer carries it.
    request.response.status = 201
    answer = incident_json(request, incident, detail=True, fresh=True)
    if incident.anonymous:
        # Shown this once: only its hash is kept (`followup.services`).
        answer["followUpCode"] = issue_code(request, incident)
    return answer


def replay(request: Request, incident: Incident, data: dict[str, Any]) -> dict:
    """The answer to a create sent again: only to the identity that filed
    the report (anyone else learns nothing beyond "used"), and no more than
    that identity may see: the detail if it may open the incident, else the
    report as it was filed (an anonymous reporter cannot open their report,
    and its investigation is not theirs to read)."""
    check_user_replay(request, incident, data)
    request.response.status = 200
    context = IncidentContext(request, incident)
    if request.has_permission(Permission.view_incident, context):
        return incident_json(request, incident, detail=True)
    return incident_json(request, incident, detail=True, fresh=True)


# The list's answer. `totalExact` is additive: absent whenever `total` is exact.
LIST_ANSWER = {"type": "object", "required": ["items", "page", "pageSize", "total"], "properties": {
    "items": {"type": "array", "items": {"type": "object"},
              "description": "the incidents in the order `sort` asks (the newest report first by default)"},
    "page": {"type": "integer", "minimum": 1},
    "pageSize": {"type": "integer", "minimum": 1, "maximum": 100},
    "total": {"type": "integer", "minimum": 0,
              "description": "how many incidents match in all; with `totalExact: false`, more than this"},
    "totalExact": {"const": False, "description": (
        f"present only when more than `total` incidents match: a text search (`q`) counts its matches up "
        f"to {COUNT_BOUND:,}, and with more, every page but the last says `totalExact: false` (at least one "
        "more page follows; the last page has the exact total)")},
}}


@view_config(route_name="incidents", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=list_schema, answer=LIST_ANSWER,
             summary="A page of the incidents the caller may see, the newest first unless `sort` says "
                     "otherwise, and how many match "
                     f"(a text search counts up to {COUNT_BOUND:,}: see `totalExact`)")
def list_incidents(request: Request) -> Response | dict:
    found = list_page(request, request.validated_query)
    rest = {"page": found.page, "pageSize": found.page_size, "total": found.total}
    if not found.exact:  # additive: absent whenever `total` is the exact count
        rest["totalExact"] = False
    try:
        items = incidents_json_text(request, found.items, read=found.sections)
    except TypeError:  # a section's value only the JSON renderer writes (__json__)
        return {"items": incidents_json(request, found.items, read=found.sections), **rest}
    # As json.dumps writes {"items": [...], **rest}, the items' text kept per row.
    response = request.response
    response.content_type = "application/json"
    response.text = '{"items": ' + items + ", " + json.dumps(rest)[1:]
    return response


@view_config(route_name="incident", request_method="GET", renderer="json",
             permission=Permission.view_incident)
def detail(context: IncidentContext, request: Request) -> dict:
    # The context factory read the incident and its sections (`read_incident_page`).
    return incident_json(request, context.incident, detail=True, read=context.page.sections)


@view_config(route_name="incident", request_method="PATCH", renderer="json",
             permission=Permission.update_incident, body=IncidentUpdateSchema)
def update(context: IncidentContext, request: Request) -> dict:
    incident = context.incident
    update_incident(request, incident, request.validated)
    return incident_json(request, incident, detail=True)


def comment_json(comment: Comment, names: dict[int, str]) -> dict[str, Any]:
    return {"id": comment.id, "body": comment.body, "author": person(names, comment.author_id),
            "transitionTo": comment.transition_to, "createdAt": iso(comment.created_at)}


@view_config(route_name="incident.comments", request_method="GET", renderer="json",
             permission=Permission.view_incident)
def list_comments(context: IncidentContext, request: Request) -> list[dict]:
    comments = comments_of(request, context.incident)
    names = user_names(request, {c.author_id for c in comments})
    return [comment_json(c, names) for c in comments]


@view_config(route_name="incident.comments", request_method="POST", renderer="json",
             permission=Permission.comment_incident, body=CommentSchema,
             responses=(200, 201))
def add_comment(context: IncidentContext, request: Request) -> dict:
    comment, created = add_comment_to(request, context.incident, request.validated["body"],
                                      request.validated.get("clientId"))
    request.response.status = 201 if created else 200
    return comment_json(comment, user_names(request, {comment.author_id}))
