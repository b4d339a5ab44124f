from __future__ import annotations

import logging
from typing import Any

import colander
from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import Select, func, or_, select
from sqlalchemy.exc import IntegrityError

from ehs_core import audit
from ehs_core.db import utcnow
from ehs_core.errors import APIError, invalid
from ehs_core.events import IncidentCreated, IncidentUpdated, publish
from ehs_core.incidents import extensions
from ehs_core.incidents.models import Comment, Incident
from ehs_core.incidents.numbering import take_number
from ehs_core.incidents.resources import IncidentContext, sees_everything, visible_incidents
from ehs_core.incidents.schemas import (
    CommentSchema,
    IncidentCreateSchema,
    IncidentQuerySchema,
    IncidentUpdateSchema,
)
from ehs_core.incidents.serialize import incident_json, incidents_json, iso, person, user_names
from ehs_core.security import Permission
from ehs_core.sites.models import Area, Site
from ehs_core.workflow import transitions_for

log = logging.getLogger(__name__)

# JSON field -> column, for the fields a report is created and updated with.
FIELDS = {
    "title": "title", "type": "type", "severity": "severity", "siteId": "site_id",
    "areaId": "area_id", "locationDetail": "location_detail", "description": "description",
    "immediateAction": "immediate_action",
}


def check_location(request: Request, site_id: int, area_id: int | None, new: bool) -> None:
    site = request.dbsession.get(Site, site_id)
    if site is None:
        raise invalid("siteId", "Unknown site")
    if new and site.archived:
        raise invalid("siteId", "This site is archived; it takes no new reports")
    area = None
    if area_id is not None:
        area = request.dbsession.get(Area, area_id)
        if area is None or area.site_id != site_id:
            raise invalid("areaId", "The area must belong to the incident's site")
        if new and area.archived:
            raise invalid("areaId", "This area is archived; it takes no new reports")
    # Held for the request: the answer and the notices name them without
    # loading them again (the session's identity map holds objects weakly).
    request.dbsession.info.setdefault("held", []).extend((site, area))


def set_occurred_at(incident: Incident, moment: Any) -> None:
    incident.occurred_at = moment
    incident.occurred_offset_minutes = int(moment.utcoffset().total_seconds() // 60)


def find_by_client_id(dbsession: Any, organization_id: int, client_id: str | None) -> Incident | None:
    if not client_id:
        return None
    return dbsession.execute(select(Incident).where(
        Incident.organization_id == organization_id, Incident.client_id == client_id)).scalar()


def user_filer(anonymous: bool, user_id: int | None) -> str:
    """The identity a user's report is filed under, for clientId replays: an
    anonymous report names no user (spec: not linked to any reporter)."""
    return "user" if anonymous or user_id is None else f"user:{user_id}"


def file_incident(request: Request, data: dict[str, Any], organization_id: int,
                  reporter_id: int | None, filer: str | None = None) -> tuple[Incident, bool]:
    """Store a report, not yet numbered; returns (incident, created). A
    report with a used clientId gives back the stored one (even if its site
    was archived since); the caller must answer a replay only when
    `incident.client_filer` is its own `filer` (default: the user's). The
    caller finishes with `number_incident` before commit; anything it does
    in between (building the answer, storing files) stays outside the
    organization's numbering lock."""
    dbsession = request.dbsession
    try:
        check_location(request, data["siteId"], data.get("areaId"), new=True)
    except APIError:
        existing = find_by_client_id(dbsession, organization_id, data.get("clientId"))
        if existing is not None:
            return existing, False  # a retry, answered even if the site was archived since
        raise
    incident = Incident(organization_id=organization_id, status="reported", number=None,
                        anonymous=data["anonymous"], client_id=data.get("clientId"),
                        reporter_id=None if data["anonymous"] else reporter_id)
    if incident.client_id:
        incident.client_filer = filer or user_filer(data["anonymous"], reporter_id)
    for key, attr in FIELDS.items():
        setattr(incident, attr, data.get(key))
    set_occurred_at(incident, data["occurredAt"])
    incident.created_at = incident.updated_at = utcnow()
    try:
        # The unique (organization, clientId) constraint recognises a retry,
        # also between two concurrent requests with one clientId: PostgreSQL
        # holds the second insert until the first commits, then refuses it.
        with dbsession.begin_nested():
            dbsession.add(incident)
            dbsession.flush()
    except IntegrityError:
        existing = find_by_client_id(dbsession, organization_id, data.get("clientId"))
        if existing is None:
            raise
        return existing, False
    created = audit.diff({}, {key: data.get(key) for key in (*FIELDS, "occurredAt", "anonymous")})
    # An anonymous report records no actor, here or anywhere.
    audit.record(request, incident.id, "incident.created", created,
                 actor_id=incident.reporter_id)
    return incident, True


def number_incident(request: Request, incident: Incident) -> None:
    """Give a filed report its number (locking the counter until commit) and
    announce it; the last step of filing."""
    incident.number = take_number(request.dbsession, incident.organization_id)
    request.dbsession.flush()
    publish(request, IncidentCreated(request, incident=incident))
    log.info("incident %s filed", incident.reference)


def replay_allowed(incident: Incident, data: dict[str, Any]) -> bool:
    """A retry repeats the report exactly; a different report under a used
    clientId is a client bug, not a retry (Stripe, IETF idempotency draft)."""
    return (all(getattr(incident, attr) == data.get(key) for key, attr in FIELDS.items())
            and incident.occurred_at == data["occurredAt"] and incident.anonymous == data["anonymous"])


@view_config(route_name="incidents", request_method="POST", renderer="json",
             permission=Permission.signed_in, body=IncidentCreateSchema,
             responses=(200, 201))
def create(request: Request) -> dict:
    data = request.validated
    user = request.identity.user
    incident, created = file_incident(request, data, user.organization_id, user.id)
    if not created:
        return replay(request, incident, data)
    # The answer is built before the number is taken, outside the numbering lock.
    body = (incident_json(request, incident, detail=True, fresh=True)
            | detail_extras(request, incident, fresh=True))
    number_incident(request, incident)
    request.response.status = 201
    return body | {"number": incident.number, "reference": incident.reference}


def replay(request: Request, incident: Incident, data: dict[str, Any]) -> dict:
    """The answer to a create sent again: only to the identity that filed
    the report (anyone else learns nothing beyond "used"), and no more than
    that identity may see: the detail if it may open the incident, else the
    report as it was filed (an anonymous reporter cannot open their report,
    and its investigation is not theirs to read)."""
    if incident.client_filer is None or incident.client_filer != user_filer(
            data["anonymous"], request.identity.user_id):
        raise APIError(409, "This clientId was already used")
    if not replay_allowed(incident, data):
        raise APIError(422, "This clientId was already used for a different report")
    request.response.status = 200
    context = IncidentContext(request, incident)
    if request.has_permission(Permission.view_incident, context):
        return (incident_json(request, incident, detail=True)
                | detail_extras(request, incident, context=context))
    return (incident_json(request, incident, detail=True, fresh=True)
            | detail_extras(request, incident, fresh=True))


def list_query(request: Request, query: dict[str, Any]) -> Select:
    identity = request.identity
    stmt = select(Incident).where(Incident.organization_id == identity.user.organization_id)
    stmt = visible_incidents(stmt, identity)
    text = query.get("q")
    if text:
        terms = [Incident.title.icontains(text, autoescape=True),
                 Incident.description.icontains(text, autoescape=True),
                 Incident.location_detail.icontains(text, autoescape=True)]
        number = text.upper().removeprefix("INC-").strip()
        if number.isdigit() and len(number) <= 9:
            terms.append(Incident.number == int(number))
        stmt = stmt.where(or_(*terms))
    for item in extensions.filters(request):
        if query.get(item.name) is not None:
            stmt = item.apply(stmt, query[item.name], request)
    return stmt


def list_schema(registry: Any) -> colander.SchemaNode:
    """The list/export query: paging and `q`, plus every registered filter."""
    schema = IncidentQuerySchema()
    for item in registry.get("incident_filters", []):
        schema.add(item.node.clone())
    return schema


def unfiltered(request: Request, query: dict[str, Any]) -> bool:
    """The caller sees every incident of the organization and narrows nothing."""
    return (sees_everything(request.identity) and not query.get("q")
            and all(query.get(item.name) is None for item in extensions.filters(request)))


def list_total(request: Request, query: dict[str, Any], stmt: Select, rows: list[Incident]) -> int:
    """How many incidents the list has in all. Numbers are given out from 1
    without gaps and incidents are never deleted, so when nothing is filtered
    out the count is the organization's highest number: the first row of the
    first page, or one index lookup. Counting the rows instead costs a scan
    that grows with the table."""
    if unfiltered(request, query):
        if query["page"] == 1 and rows:
            return rows[0].number
        return request.dbsession.execute(select(func.coalesce(func.max(Incident.number), 0)).where(
            Incident.organization_id == request.identity.user.organization_id)).scalar()
    return request.dbsession.execute(
        select(func.count()).select_from(stmt.with_only_columns(Incident.id).subquery())).scalar()


@view_config(route_name="incidents", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=list_schema)
def list_incidents(request: Request) -> dict:
    query = request.validated_query
    stmt = list_query(request, query)
    page, size = query["page"], query["pageSize"]
    if query.get("q"):
        rows, total = searched_page(request, query, stmt)
    else:
        rows = list(request.dbsession.execute(
            stmt.order_by(Incident.number.desc()).limit(size).offset((page - 1) * size)).scalars())
        total = list_total(request, query, stmt, rows)
    return {"items": incidents_json(request, rows), "page": page, "pageSize": size, "total": total}


def searched_page(request: Request, query: dict[str, Any], stmt: Select) -> tuple[list[Incident], int]:
    """A page of a text search and its total in one pass over the matches.
    Every match has to be read for the total anyway (the trigram indexes
    find candidates, each is checked against the text); sorting them by
    number (an expression, so not by walking the number index, which reads
    every newer incident that does not match) costs little on top, where a
    second query for the page would read them all again."""
    page, size = query["page"], query["pageSize"]
    # Narrow rows (id, number) through the count and the sort; the page's
    # incidents are read whole afterwards.
    matches = (stmt.with_only_columns(Incident.id, func.count().over().label("total"))
               .order_by((Incident.number + 0).desc()).limit(size).offset((page - 1) * size).subquery())
    found = request.dbsession.execute(
        select(Incident, matches.c.total).join(matches, matches.c.id == Incident.id)
        .order_by(Incident.number.desc())).all()
    if not found:  # past the last page: nothing to read the total from
        return [], list_total(request, query, stmt, [])
    return [incident for incident, _ in found], found[0][1]


def can_flags(request: Request, context: IncidentContext) -> dict[str, bool]:
    incident = context.incident
    supervisor = request.has_permission(Permission.update_incident, context)
    return {
        "update": bool(supervisor),
        "transition": any(t["blockedReason"] is None for t in transitions_for(request, incident)),
        "comment": bool(request.has_permission(Permission.comment_incident, context)),
        "upload": bool(request.has_permission(Permission.upload_attachment, context)),
        "investigate": bool(request.has_permission(Permission.manage_investigation, context)),
        "addRootCause": bool(request.has_permission(Permission.manage_investigation, context)),
        "addAction": bool(supervisor) and incident.status != "closed",
    }


def detail_extras(request: Request, incident: Incident, fresh: bool = False,
                  context: IncidentContext | None = None) -> dict[str, Any]:
    """`context`: the route's, whose ACL is already loaded."""
    if context is None or context.incident is not incident:
        context = IncidentContext(request, incident, fresh)
    return {"transitions": transitions_for(request, incident), "can": can_flags(request, context)}


@view_config(route_name="incident", request_method="GET", renderer="json",
             permission=Permission.view_incident)
def detail(context: IncidentContext, request: Request) -> dict:
    return (incident_json(request, context.incident, detail=True)
            | detail_extras(request, context.incident, context=context))


@view_config(route_name="incident", request_method="PATCH", renderer="json",
             permission=Permission.update_incident, body=IncidentUpdateSchema)
def update(context: IncidentContext, request: Request) -> dict:
    data = request.validated
    incident = context.incident
    site_id = data.get("siteId", incident.site_id)
    if "siteId" in data and site_id != incident.site_id and "areaId" not in data:
        data["areaId"] = None  # moving to another site clears the area
    area_id = data.get("areaId", incident.area_id)
    if "siteId" in data or "areaId" in data:
        check_location(request, site_id, area_id, new=False)
    before = {key: getattr(incident, attr) for key, attr in FIELDS.items()}
    before["occurredAt"] = incident.occurred_at
    for key, attr in FIELDS.items():
        if key in data:
            setattr(incident, attr, data[key])
    after = {key: data[key] for key in data}
    if "occurredAt" in data:
        set_occurred_at(incident, data["occurredAt"])
        after["occurredAt"] = data["occurredAt"]
    changes = audit.diff(before, after)
    if "occurredAt" in changes and data["occurredAt"] == before["occurredAt"]:
        del changes["occurredAt"]  # same instant, only written differently
    if changes:
        incident.updated_at = utcnow()
        audit.record(request, incident.id, "incident.updated", changes)
        publish(request, IncidentUpdated(request, incident=incident, changes=changes))
    return incident_json(request, incident, detail=True) | detail_extras(request, incident, context=context)


def comment_json(comment: Comment, names: dict[int, str]) -> dict[str, Any]:
    return {"id": comment.id, "body": comment.body, "author": person(names, comment.author_id),
            "transitionTo": comment.transition_to, "createdAt": iso(comment.created_at)}


@view_config(route_name="incident.comments", request_method="GET", renderer="json",
             permission=Permission.view_incident)
def list_comments(context: IncidentContext, request: Request) -> list[dict]:
    comments = list(request.dbsession.execute(
        select(Comment).where(Comment.incident_id == context.incident.id)
        .order_by(Comment.created_at, Comment.id)).scalars())
    names = user_names(request, {c.author_id for c in comments})
    return [comment_json(c, names) for c in comments]


@view_config(route_name="incident.comments", request_method="POST", renderer="json",
             permission=Permission.comment_incident, body=CommentSchema,
             responses=(201,))
def add_comment(context: IncidentContext, request: Request) -> dict:
    data = request.validated
    comment = Comment(incident_id=context.incident.id, author_id=request.identity.user_id,
                      body=data["body"], created_at=utcnow())
    request.dbsession.add(comment)
    request.dbsession.flush()
    request.response.status = 201
    return comment_json(comment, user_names(request, {comment.author_id}))
