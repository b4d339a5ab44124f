"""Who may see and touch an incident: the visibility rule and the incident's
ACL, used by every endpoint that takes an incident number.

Supervisors and above see every incident; a reporter sees what they reported
and incidents in which they are assigned a corrective action. Anything else
answers 404, exactly as a number that does not exist, so existence does not
leak (ASVS 5 8.2.2).

The detail (JSON and page) reads the incident as plain columns, with its
sections and what is registered to be read with it, in one statement
(`read_incident_page`, answered as one `IncidentPage`); the other routes
load the ORM object they change (`incident_factory`).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pyramid.authorization import Allow
from pyramid.httpexceptions import HTTPForbidden, HTTPNotFound
from pyramid.request import Request
from sqlalchemy import ColumnElement, Select, and_, bindparam, exists, or_, select

from ehs_core.actions.models import CorrectiveAction
from ehs_core.incidents.extensions import read_one_with_sections
from ehs_core.incidents.models import Incident, reference
from ehs_core.security import Identity, Permission, Role, role_at_least, role_principal

# What a supervisor may do on every incident (workflow rows add their own roles).
SUPERVISOR_PERMISSIONS = (
    Permission.view_incident, Permission.update_incident, Permission.comment_incident,
    Permission.upload_attachment, Permission.manage_investigation,
    Permission.record_people, Permission.remove_people, Permission.follow_up,
)
# What a reporter may do on an incident they can see.
VIEWER_PERMISSIONS = (Permission.view_incident, Permission.comment_incident,
                      Permission.upload_attachment, Permission.record_people)


def sees_everything(identity: Identity | None) -> bool:
    return bool(identity and identity.is_user and role_at_least(identity.role, Role.supervisor))


def reported_or_assigned(user: Any, one: bool = False) -> ColumnElement[bool]:
    """What a reporter sees: the incidents `user` (an id, or a bound
    parameter) reported, and those with an action assigned to them. `one`:
    for a statement of one incident, whose actions are looked up by the
    incident (an index lookup) rather than by the user (PostgreSQL would
    hash all of the user's actions)."""
    if one:
        return or_(Incident.reporter_id == user, exists().where(
            CorrectiveAction.incident_id == Incident.id, CorrectiveAction.assignee_id == user))
    reported = select(Incident.id).where(Incident.reporter_id == user)
    assigned = select(CorrectiveAction.incident_id).where(CorrectiveAction.assignee_id == user)
    return Incident.id.in_(reported.union(assigned))


def visible_incidents(query: Select, identity: Identity | None, user: Any = None) -> Select:
    """Restrict an incident query to what the caller may see; `user`: what
    stands for the caller's id in the statement (a bound parameter, for a
    statement kept for every caller of the same kind), else their id."""
    if sees_everything(identity):
        return query
    if identity is None or not identity.is_user:
        return query.where(Incident.id.is_(None))
    return query.where(reported_or_assigned(identity.user_id if user is None else user))


def incident_contexts(request: Request) -> dict[int, IncidentContext]:
    """`request.incident_contexts`: the latest context of each incident
    object in this request (a retried attempt is a new request)."""
    return {}


def known_context(request: Request, incident: Any) -> IncidentContext | None:
    """The context made for this very incident object in this request, if any."""
    context = request.incident_contexts.get(id(incident))
    return context if context is not None and context.incident is incident else None


class IncidentContext:
    """`incident`: the ORM object a route changes, or, on the detail's safe
    requests (`detail_factory`), the `IncidentRow` of `page`, the
    `IncidentPage` read for this request. For a caller who is not a
    supervisor, `through_action`: whether they see the incident through an
    action assigned to them rather than as its reporter."""

    def __init__(self, request: Request, incident: Any, fresh: bool = False, *,
                 through_action: bool | None = None, page: IncidentPage | None = None) -> None:
        self.request = request
        self.incident = incident
        self.fresh = fresh  # filed in this request: no actions, so no assignees, yet
        self.through_action = through_action
        self.page = page
        # The latest context of each incident in this request, so the parts
        # of its answer (the workflow's `can`) reuse its loaded ACL.
        request.incident_contexts[id(incident)] = self

    @cached_property
    def __acl__(self) -> IncidentACL:  # one per request, however often checked
        return IncidentACL(self)


class IncidentACL:
    """An incident's ACL, read in order by Pyramid's ACLHelper. Its last
    entries, the action assignees, take a query; it is sent only when a
    check reads past the entries before them, so the checks of a supervisor
    (all granted by the first entry) send none, and a reporter's send one
    for the whole request."""

    def __init__(self, context: IncidentContext) -> None:
        self.context = context
        self._assignees: list[tuple[Any, ...]] | None = None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        incident = self.context.incident
        yield (Allow, role_principal(Role.supervisor), SUPERVISOR_PERMISSIONS)
        if incident.reporter_id is not None:
            yield (Allow, f"user:{incident.reporter_id}", VIEWER_PERMISSIONS)
        yield from self.assignees()

    def assignees(self) -> list[tuple[Any, ...]]:
        if self._assignees is None and self.context.through_action is not None:
            # The detail's statement found the incident visible to this
            # caller, a reporter: through an action assigned to them, or as
            # its reporter (then an entry of theirs here could only grant
            # again what the reporter's entry grants). A check only ever
            # matches the caller's own principals, so this entry stands for
            # every assignee's.
            me = self.context.request.identity.user_id
            self._assignees = ([(Allow, f"user:{me}", VIEWER_PERMISSIONS)]
                               if self.context.through_action else [])
        if self._assignees is None:
            found = () if self.context.fresh else self.context.request.dbsession.execute(
                select(CorrectiveAction.assignee_id).distinct()
                .where(CorrectiveAction.incident_id == self.context.incident.id,
                       CorrectiveAction.assignee_id.is_not(None))).scalars()
            self._assignees = [(Allow, f"user:{user_id}", VIEWER_PERMISSIONS) for user_id in found]
        return self._assignees


def load_visible(request: Request, incident: Incident | None) -> IncidentContext:
    if incident is None:
        raise HTTPNotFound()
    context = IncidentContext(request, incident)
    if not request.has_permission(Permission.view_incident, context):
        raise HTTPNotFound()
    return context


def incident_factory(request: Request) -> IncidentContext:
    """Context factory for routes with {number}."""
    identity = request.identity
    if identity is None or not identity.is_user:
        # Not signed in: let the view's permission answer 401.
        return IncidentContext(request, Incident(id=0, reporter_id=None))
    number = int(request.matchdict["number"])
    query = select(Incident).where(Incident.organization_id == identity.account.organization_id,
                                   Incident.number == number)
    return load_visible(request, request.dbsession.execute(query).scalar())


class IncidentRow(namedtuple("IncidentRow", [column.key for column in Incident.__table__.columns])):
    """An incident's columns as the detail reads them, named as `Incident`'s
    attributes (with its `reference`): building the ORM object, which a
    read does not need, cost more than reading the row."""

    __slots__ = ()

    @property
    def reference(self) -> str | None:
        return reference(self.number) if self.number is not None else None


COLUMNS = tuple(Incident.__table__.columns)  # in `IncidentRow`'s order
SAFE_METHODS = frozenset({"GET", "HEAD"})


def _detail_shape(everything: bool) -> tuple[Sequence[ColumnElement[Any]], ColumnElement[bool]]:
    """The detail's columns and the condition that finds the incident: by
    number in the caller's organization and, for a caller who does not see
    everything, only if visible to them (`reported_or_assigned`)."""
    found = and_(Incident.organization_id == bindparam("organization_id"),
                 Incident.number == bindparam("number"))
    return COLUMNS, found if everything else and_(found, reported_or_assigned(bindparam("me"), one=True))


@dataclass(frozen=True)
class IncidentPage:
    """One incident as its detail and its page show it, read in one
    statement by `read_incident_page`: the incident's columns (`incident`,
    the one shape an incident has on the page, on a GET and in a form's
    answer alike), the raw value of each of its column sections by name
    (`sections`, for `incident_json(..., read=)`), and what was registered
    at configuration time to be read with it (`read`, by name: the
    workflow's facts and, on the page, the timeline and the panels'
    columns: `extensions.read_with_detail`, `add_incident_panel(read=)`).
    It lives on the request's context for one attempt: a retried attempt
    is a new request, which reads it again."""

    incident: IncidentRow
    sections: dict[str, Any]
    read: dict[str, Any]
    through_action: bool | None


def read_incident_page(request: Request, number: int, *, page: bool = True) -> IncidentPage:
    """The incident numbered `number` in the caller's organization, if the
    caller may see it (`reported_or_assigned` for a caller who does not see
    every incident), with its sections and what is read with it (`page`:
    also what only the page shows): 404 when no row is found, as for a
    number that does not exist (ASVS 5 8.2.2). Runs on the request's
    connection (`db.PlainRead`): in a form's answer, flush first, so it
    reads what the form changed."""
    identity = request.identity
    everything = sees_everything(identity)
    parameters = {"organization_id": identity.account.organization_id, "number": number}
    if not everything:
        parameters["me"] = identity.user_id
    found = read_one_with_sections(request, everything, lambda: _detail_shape(everything), parameters,
                                   page=page)
    if found is None:
        raise HTTPNotFound()
    incident = IncidentRow(*found.columns)
    return IncidentPage(incident, found.sections, found.read_with,
                        None if everything else incident.reporter_id != identity.user_id)


def page_context(request: Request, page: IncidentPage) -> IncidentContext:
    """The context of an incident read as `page`."""
    return IncidentContext(request, page.incident, page=page, through_action=page.through_action)


def detail_factory(request: Request, page: bool = False) -> IncidentContext:
    """Context factory of the incident's detail (its JSON and, `page`, its
    page). On a safe request of a signed-in user, the context of
    `read_incident_page`; any other request gets `incident_factory`'s
    context (the ORM object it changes)."""
    identity = request.identity
    if request.method not in SAFE_METHODS or identity is None or not identity.is_user:
        return incident_factory(request)
    return page_context(request, read_incident_page(request, int(request.matchdict["number"]), page=page))


def page_factory(request: Request) -> IncidentContext:
    """Context factory of the incident page: the detail's, with what the
    page registered to be read with it (its timeline, its panels' columns)."""
    return detail_factory(request, page=True)


def context_for(request: Request, incident_id: int) -> IncidentContext:
    """The visible incident that a root cause, action or file belongs to."""
    return load_visible(request, request.dbsession.get(Incident, incident_id))


def child_of_incident(request: Request, model: type) -> tuple[Any, IncidentContext]:
    """The row named by the route's {id} and its incident's context: 401 when
    not signed in, 404 when the row is missing or its incident invisible."""
    if request.identity is None or not request.identity.is_user:
        raise HTTPForbidden()  # answered 401
    item = request.dbsession.get(model, int(request.matchdict["id"]))
    if item is None:
        raise HTTPNotFound()
    return item, context_for(request, item.incident_id)
