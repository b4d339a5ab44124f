"""The people involved in an incident (issue #39 item 4): the JSON API
(`views`), the panel on the incident page (`pages`), and
`config.add_person_action`, through which a plugin offers something to do
with one person (the OSHA plugin: start an injury case for an injured
person, with their name filled in)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.directives import register_once
from ehs_core.incidents import FACTORY, INCIDENT
from ehs_core.incidents.serialize import person as user_ref
from ehs_core.people.models import IncidentPerson
from ehs_core.serialize import iso

# provider(request, context, person) -> {"label", "path", "fields"} (a form
# posting `fields` to `path`) or {"label", "href"} (a link), or None.
PersonAction = Callable[[Request, Any, IncidentPerson], dict[str, Any] | None]
AUDIT_ACTIONS = ("person.created", "person.updated", "person.deleted")


def person_json(item: IncidentPerson, names: dict[int, str], statement: bool) -> dict[str, Any]:
    """An entry as the API answers it; `statement`: whether the caller may
    read the statement (`services.may_see_statement`), else it is null."""
    said = None
    if statement and (item.statement_text is not None or item.statement_attachment_id is not None
                      or item.statement_date is not None):
        said = {"text": item.statement_text,
                "date": item.statement_date.isoformat() if item.statement_date else None,
                "attachmentId": item.statement_attachment_id}
    return {"id": item.id, "name": item.name, "involvement": item.involvement,
            "employmentType": item.employment_type, "role": item.role, "contact": item.contact,
            "statement": said, "createdBy": user_ref(names, item.created_by_id),
            "createdAt": iso(item.created_at), "updatedAt": iso(item.updated_at)}


def add_person_action(config: Configurator, name: str, provider: PersonAction | str, *,
                      order: int = 100) -> None:
    """Directive: something to do with one person on the incident page's
    people panel (a button or a link on their row). `provider(request,
    context, person)` says what, or None for nothing; it checks its own
    permission (the OSHA plugin's are for safety managers)."""
    provider = config.maybe_dotted(provider)

    def register() -> None:
        actions = config.registry.setdefault("people.actions", [])
        actions.append((order, name, provider))
        actions.sort(key=lambda entry: entry[:2])

    register_once(config, "ehs.person_action", name, register)


def person_actions(request: Request, context: Any, person: IncidentPerson) -> list[dict[str, Any]]:
    """What the registered providers offer for this person."""
    found = []
    for _, _, provider in request.registry.get("people.actions", []):
        offer = provider(request, context, person)
        if offer is not None:
            found.append(offer)
    return found


def may_read_trail(request: Request) -> bool:
    """Who reads the people's audit entries: supervisors and above."""
    from ehs_core.people.services import sees_all_people

    return sees_all_people(request.identity)


def includeme(config: Configurator) -> None:
    config.add_directive("add_person_action", add_person_action)
    config.add_route("incident.people", INCIDENT + "/people", factory=FACTORY)
    config.add_route("person", r"/api/people/{id:\d{1,9}}", factory="ehs_core.people.views.person_factory")
    for action in AUDIT_ACTIONS:
        config.add_restricted_audit_action(action, may_read_trail)
    config.scan(".views")
    config.scan(".listeners")
    config.include(".pages")  # the panel on /incidents/<number>
