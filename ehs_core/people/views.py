"""The JSON face of the people involved; the rules live in `services`."""

from __future__ import annotations

from typing import Any

from pyramid.httpexceptions import HTTPNoContent, HTTPNotFound
from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.incidents.resources import IncidentContext, child_of_incident
from ehs_core.incidents.serialize import user_names
from ehs_core.people import person_json, services
from ehs_core.people.models import IncidentPerson
from ehs_core.people.schemas import PersonSchema, PersonUpdateSchema
from ehs_core.security import Permission


class PersonContext:
    """An entry and its incident: the incident's own rules decide
    (`record_people` for whoever sees it, `remove_people` for supervisors),
    after `services.may_see_person` (else 404)."""

    def __init__(self, incident_context: IncidentContext, person: IncidentPerson) -> None:
        self.incident_context = incident_context
        self.person = person
        self.__acl__ = incident_context.__acl__


def person_factory(request: Request) -> PersonContext:
    item, incident_context = child_of_incident(request, IncidentPerson)
    if not services.may_see_person(request, item):
        raise HTTPNotFound()  # someone else's entry: as if it did not exist
    return PersonContext(incident_context, item)


def answer(request: Request, item: IncidentPerson) -> dict[str, Any]:
    return person_json(item, user_names(request, {item.created_by_id}),
                       services.may_see_statement(request, item))


@view_config(route_name="incident.people", request_method="GET", renderer="json",
             permission=Permission.view_incident,
             summary="The people involved in the incident that the caller may see: supervisors and "
                     "above see everyone, others only the entries they wrote")
def list_people(context: IncidentContext, request: Request) -> list[dict[str, Any]]:
    people = services.list_people(request, context.incident)
    names = user_names(request, {p.created_by_id for p in people})
    return [person_json(p, names, services.may_see_statement(request, p)) for p in people]


@view_config(route_name="incident.people", request_method="POST", renderer="json",
             permission=Permission.record_people, body=PersonSchema, responses=(201,),
             summary="Name someone involved (injured, witness, other), with a witness's statement")
def add_person(context: IncidentContext, request: Request) -> dict[str, Any]:
    item = services.add_person(request, context.incident, request.validated)
    request.response.status = 201
    return answer(request, item)


@view_config(route_name="person", request_method="PATCH", renderer="json",
             permission=Permission.record_people, body=PersonUpdateSchema,
             summary="Change an entry (its author, or a supervisor and above); `statement` replaces "
                     "the statement whole, null removes it")
def update_person(context: PersonContext, request: Request) -> dict[str, Any]:
    item = services.update_person(request, context.incident_context.incident, context.person,
                                  request.validated)
    return answer(request, item)


@view_config(route_name="person", request_method="DELETE", permission=Permission.remove_people,
             responses=(204,), summary="Remove an entry (supervisors and above)")
def delete_person(context: PersonContext, request: Request) -> HTTPNoContent:
    services.remove_person(request, context.incident_context.incident, context.person)
    return HTTPNoContent()
