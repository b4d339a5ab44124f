"""The people involved, on the incident page: a panel listing those the
caller may see (the same rule as the API, `services.list_people`), a form
adding one, and per person an edit page and a remove button. Each form is
an adapter over `people.services` with the API's schemas and the
incident's own permissions (`record_people`, `remove_people`).

Without JavaScript a form posts and the page comes back at the person just
changed; with htmx only the panel is swapped (`people/panel.html`)."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request

from ehs_core.errors import DomainError
from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.serialize import user_names
from ehs_core.people import person_actions, services
from ehs_core.people.models import IncidentPerson
from ehs_core.people.schemas import EmploymentType, Involvement, PersonSchema, PersonUpdateSchema
from ehs_core.security import Permission
from ehs_core.ui.directives import panel_read
from ehs_core.ui.forms import OPTIONAL_INT, OPTIONAL_TEXT, TEXT, errors_of, json_values

FILES = "people.files"
PAGE = r"/incidents/{number:\d{1,9}}"
PERSON = PAGE + r"/people/{person:\d{1,9}}"
FIELDS = {"name": TEXT, "involvement": TEXT, "employmentType": OPTIONAL_TEXT, "role": OPTIONAL_TEXT,
          "contact": OPTIONAL_TEXT}
STATEMENT = {"statementText": OPTIONAL_TEXT, "statementDate": OPTIONAL_TEXT,
             "statementAttachmentId": OPTIONAL_INT}
# Posted statement fields -> the API's `statement` object's.
STATEMENT_KEYS = {"statementText": "text", "statementDate": "date", "statementAttachmentId": "attachmentId"}


def _(text: str) -> str:
    """Marks a string for the catalogue (`make messages`); translated where shown."""
    return text


# Words for the enums, translated by `labels`.
INVOLVEMENT_LABELS = {"injured": _("Injured"), "witness": _("Witness"), "other": _("Other")}
EMPLOYMENT_LABELS = {"employee": _("Employee"), "temporary_worker": _("Temporary worker"),
                     "contractor": _("Contractor"), "visitor": _("Visitor"),
                     "public": _("Member of the public")}


def posted(request: Request) -> dict[str, Any]:
    """The form as the API's body: the statement's fields become `statement`
    (absent when all are empty)."""
    values = json_values(request.POST, FIELDS | STATEMENT)
    statement = {STATEMENT_KEYS[key]: values.pop(key) for key in STATEMENT if key in values}
    statement = {key: value for key, value in statement.items() if value is not None}
    if statement:
        values["statement"] = statement
    elif "statementShown" in request.POST:  # the edit form: everything emptied removes it
        values["statement"] = None
    return values


def labels(request: Request) -> dict[str, Any]:
    translate = request.localizer.translate
    return {"involvement_labels": {k: translate(v) for k, v in INVOLVEMENT_LABELS.items()},
            "employment_labels": {k: translate(v) for k, v in EMPLOYMENT_LABELS.items()},
            "involvements": [i.value for i in Involvement],
            "employment_types": [e.value for e in EmploymentType]}


def panel_values(request: Request, context: IncidentContext, errors: dict[str, str] | None = None,
                 values: dict[str, Any] | None = None, announce: str | None = None) -> dict[str, Any]:
    """What the panel shows: the people the caller may see, injured first,
    each with what they may do with them."""
    incident = context.incident
    people = services.people_read(request, incident, panel_read(context, "people"))
    order = {value: index for index, value in enumerate(Involvement)}
    people.sort(key=lambda p: (order.get(p.involvement, 9), p.id))
    names = user_names(request, {p.created_by_id for p in people})
    closed = incident.status == "closed"
    can_record = bool(request.has_permission(Permission.record_people, context)) and not closed
    can_remove = bool(request.has_permission(Permission.remove_people, context)) and not closed
    number = incident.number
    rows = [{"person": p, "author": names.get(p.created_by_id),
             "statement": services.may_see_statement(request, p),
             "edit": request.route_path("page.person", number=number, person=p.id) if can_record else None,
             "remove": request.route_path("page.person_remove", number=number, person=p.id)
             if can_remove else None,
             "offers": person_actions(request, context, p)} for p in people]
    files = services.files_read(request, incident, panel_read(context, FILES)) if can_record else []
    return {"people_rows": rows, "people_can_record": can_record, "people_files": files,
            "people_file_names": {f.id: f.filename for f in files},
            "people_add_path": request.route_path("page.people", number=number) if can_record else None,
            "people_errors": errors or {}, "people_values": values or {}, "people_announce": announce,
            **labels(request)}


def people_panel(request: Request, context: IncidentContext) -> dict[str, Any]:
    return panel_values(request, context)


def _answer(request: Request, context: IncidentContext, anchor: str, errors: dict[str, str],
            values: dict[str, Any], announce: str | None) -> Any:
    """htmx: the panel alone; a plain form: back to the page at the person,
    or the page with the errors next to their fields."""
    if errors:
        request.tm.doom()  # a refused form changes nothing
    if request.headers.get("HX-Request") == "true":
        request.override_renderer = "ehs_core:templates/people/panel.html"
        return panel_values(request, context, errors, values, None if errors else announce) | {
            "fragment": True}
    if errors:
        request.response.status = 400
        request.override_renderer = "ehs_core:templates/incidents/detail.html"
        return request.incident_page_values(context) | panel_values(request, context, errors, values)
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "saved"}, _anchor=anchor))


def add_person(context: IncidentContext, request: Request) -> Any:
    try:
        person = services.add_person(request, context.incident, PersonSchema().deserialize(posted(request)))
    except (colander.Invalid, DomainError) as exc:
        return _answer(request, context, "people", errors_of(exc), dict(request.POST.items()), None)
    return _answer(request, context, f"person-{person.id}", {}, {},
                   request.localizer.translate("%(name)s was added.") % {"name": person.name})


def person_in(context: IncidentContext, request: Request) -> IncidentPerson:
    """The incident's own entry named in the address, if the caller may see it; else 404."""
    person = request.dbsession.get(IncidentPerson, int(request.matchdict["person"]))
    if person is None or person.incident_id != context.incident.id or not services.may_see_person(
            request, person):
        raise HTTPNotFound()
    return person


def edit_values(request: Request, context: IncidentContext, person: IncidentPerson,
                errors: dict[str, str] | None = None, values: dict[str, Any] | None = None) -> dict[str, Any]:
    if values is None:
        values = {"name": person.name, "involvement": person.involvement,
                  "employmentType": person.employment_type or "", "role": person.role or "",
                  "contact": person.contact or "", "statementText": person.statement_text or "",
                  "statementDate": person.statement_date.isoformat() if person.statement_date else "",
                  "statementAttachmentId": person.statement_attachment_id or ""}
    return {"incident": context.incident, "person": person, "people_values": values,
            "people_errors": errors or {},
            "people_files": services.files_read(request, context.incident, (False, None)),
            "action_path": request.route_path("page.person", number=context.incident.number,
                                              person=person.id), **labels(request)}


def edit_page(context: IncidentContext, request: Request) -> dict[str, Any]:
    return edit_values(request, context, person_in(context, request))


def save_person(context: IncidentContext, request: Request) -> Any:
    person = person_in(context, request)
    try:
        services.update_person(request, context.incident, person,
                               PersonUpdateSchema().deserialize(posted(request)))
    except (colander.Invalid, DomainError) as exc:
        request.tm.doom()
        request.response.status = 400
        return edit_values(request, context, person, errors_of(exc), dict(request.POST.items()))
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "saved"}, _anchor=f"person-{person.id}"))


def remove_person(context: IncidentContext, request: Request) -> Any:
    person = person_in(context, request)
    name = person.name
    try:
        services.remove_person(request, context.incident, person)
    except DomainError as exc:
        return _answer(request, context, "people", errors_of(exc), {}, None)
    return _answer(request, context, "people", {}, {},
                   request.localizer.translate("%(name)s was removed.") % {"name": name})


def includeme(config: Configurator) -> None:
    config.add_incident_panel("people", "ehs_core:templates/people/panel.html", people_panel,
                              permission=Permission.view_incident, order=5, framed=False,
                              read=services.people_column)
    # The files offered as a statement's photo, read with the page too (as a
    # panel's column, under a name no panel has).
    config.read_with_detail("ui.panel." + FILES, services.files_column, page_only=True)
    factory = "ehs_core.incidents.resources.incident_factory"
    config.add_route("page.people", PAGE + "/people", factory=factory)
    config.add_route("page.person", PERSON, factory=factory)
    config.add_route("page.person_remove", PERSON + "/remove", factory=factory)
    config.add_view(add_person, route_name="page.people", request_method="POST",
                    renderer="ehs_core:templates/incidents/detail.html", permission=Permission.record_people)
    config.add_view(edit_page, route_name="page.person", request_method="GET",
                    renderer="ehs_core:templates/people/edit.html", permission=Permission.record_people)
    config.add_view(save_person, route_name="page.person", request_method="POST",
                    renderer="ehs_core:templates/people/edit.html", permission=Permission.record_people)
    config.add_view(remove_person, route_name="page.person_remove", request_method="POST",
                    renderer="ehs_core:templates/incidents/detail.html", permission=Permission.remove_people)
