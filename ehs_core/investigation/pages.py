"""The investigation workspace on the incident page: lead, method, summary
and completion; root causes with their category and a "why?" chain extended
one answer at a time (the five whys); a fishbone view grouping the causes by
category. Each form is an adapter over `investigation.services` with the
API's schemas and the incident's own permission (`manage_investigation`).

Without JavaScript a form posts and the page comes back at the part just
changed (its anchor); with htmx only the workspace is swapped and focus
stays where the person was (the next "why?" of the same cause).
"""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request

from ehs_core.errors import DomainError
from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.serialize import user_names
from ehs_core.investigation import loaded, services
from ehs_core.investigation.models import RootCause
from ehs_core.investigation.schemas import (
    MAX_WHYS,
    InvestigationSchema,
    RootCauseSchema,
    RootCauseUpdateSchema,
)
from ehs_core.security import Permission
from ehs_core.ui.forms import BOOL, OPTIONAL_INT, OPTIONAL_TEXT, TEXT, errors_of, json_values
from ehs_core.ui.paths import path_maker, route_path, route_paths
from ehs_core.users.services import assignable_users

PAGE = r"/incidents/{number:\d{1,9}}"
CAUSE = PAGE + r"/root-causes/{cause:\d{1,9}}"

# The usual fishbone (Ishikawa) bones, offered as suggestions; any category
# the team writes is kept and gets its own bone.
CATEGORIES = ("equipment", "procedure", "training", "human factors", "environment", "management",
              "design", "communication")
METHODS = ("5 whys", "Fishbone (Ishikawa)", "Fault tree", "Interview", "Site inspection")

INVESTIGATION_FIELDS = {"leadId": OPTIONAL_INT, "method": OPTIONAL_TEXT, "summary": OPTIONAL_TEXT,
                        "completed": BOOL}
# The workspace's forms (and the actions' form below it), by the name the templates use.
WORKSPACE_FORMS = {"investigation": "page.investigation", "root_causes": "page.root_causes",
                   "actions": "page.incident_actions"}
CAUSE_FIELDS = {"category": TEXT, "description": TEXT}


def fishbone(causes: list[RootCause]) -> list[tuple[str, list[RootCause]]]:
    """Causes grouped by category (case and spacing ignored), bones in the
    order their first cause was recorded."""
    bones: dict[str, tuple[str, list[RootCause]]] = {}
    for cause in causes:
        key = " ".join(cause.category.split()).casefold()
        bones.setdefault(key, (cause.category.strip(), []))[1].append(cause)
    return list(bones.values())


def workspace_values(request: Request, context: IncidentContext,
                     errors: dict[str, dict[str, str]] | None = None,
                     values: dict[str, dict[str, Any]] | None = None,
                     focus: str | None = None, can: dict[str, bool] | None = None) -> dict[str, Any]:
    """What the workspace template shows: read for everyone who sees the
    incident, with forms for those who may manage the investigation. `can`:
    the detail's `can` section when the page has it (the same two
    permissions, asked once per request); the paths of a cause's forms only
    where the forms are shown (an open incident, a caller who may use them)."""
    incident = context.incident
    investigations, all_causes = loaded(request, [incident])
    investigation = investigations.get(incident.id)
    causes = all_causes[incident.id]
    if can is None:
        can_manage = bool(request.has_permission(Permission.manage_investigation, context))
        can_add_action = bool(request.has_permission(Permission.update_incident, context))
    else:
        can_manage, can_add_action = can["investigate"], can["update"]
    lead_name = None
    if investigation is not None and investigation.lead_id is not None:
        lead_name = user_names(request, {investigation.lead_id}).get(investigation.lead_id)
    number = incident.number
    closed = incident.status == "closed"
    cause_paths = {}
    if causes and not closed and (can_manage or can_add_action):
        whys = path_maker(request, "page.root_cause_whys")
        remove = path_maker(request, "page.root_cause_remove")
        # "Add a corrective action for this cause": the page with the cause
        # chosen in the form (a whole number: nothing in it to quote).
        page = route_path(request, "page.incident", number=number)
        cause_paths = {cause.id: {
            "whys": whys(number=number, cause=cause.id), "remove": remove(number=number, cause=cause.id),
            "add_action": f"{page}?cause={int(cause.id)}#new-action"} for cause in causes}
    return {"incident": incident, "investigation": investigation, "lead_name": lead_name,
            "ws_paths": {} if closed else route_paths(request, WORKSPACE_FORMS, number=number),
            "cause_paths": cause_paths,
            "causes": causes, "cause_by_id": {cause.id: cause for cause in causes},
            "bones": fishbone(causes), "categories": CATEGORIES, "methods": METHODS,
            "max_whys": MAX_WHYS, "people": assignable_users(request),
            "can_manage_investigation": can_manage, "can_add_action": can_add_action,
            "closed": closed,
            "ws_errors": errors or {}, "ws_values": values or {}, "ws_focus": focus}


def _answer(request: Request, context: IncidentContext, anchor: str, errors: dict[str, dict[str, str]],
            values: dict[str, dict[str, Any]], focus: str | None, announce: str | None) -> Any:
    """htmx: the workspace alone; a plain form: back to the page at the
    changed part, or the page with the errors next to their fields."""
    if request.headers.get("HX-Request") == "true":
        request.override_renderer = "ehs_core:templates/investigation/workspace.html"
        if not errors:
            # What else on the page follows from the change (the next step's
            # moves and why one is held back) fetches itself again
            # (detail.html's #next-step listens for this event).
            request.response.headers["HX-Trigger"] = "incident-changed"
        return workspace_values(request, context, errors, values, focus) | {
            "announce": announce if not errors else None, "fragment": True}
    if errors:
        request.response.status = 400
        request.override_renderer = "ehs_core:templates/incidents/detail.html"
        page = request.incident_page_values(context)
        return page | workspace_values(request, context, errors, values, focus)
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "saved"}, _anchor=anchor))


def save_investigation(context: IncidentContext, request: Request) -> Any:
    values = json_values(request.POST, INVESTIGATION_FIELDS)
    try:
        services.put_investigation(request, context.incident, InvestigationSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        return _answer(request, context, "investigation", {"investigation": errors_of(exc)},
                       {"investigation": dict(request.POST.items())}, "inv-lead", None)
    return _answer(request, context, "investigation", {}, {}, "inv-title",
                   request.localizer.translate("The investigation was saved."))


def add_cause(context: IncidentContext, request: Request) -> Any:
    values = json_values(request.POST, CAUSE_FIELDS | {"why": OPTIONAL_TEXT})
    first_why = values.pop("why", None)
    values["whys"] = [first_why] if first_why else []
    try:
        cause = services.add_root_cause(request, context.incident, RootCauseSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        return _answer(request, context, "new-cause", {"cause": errors_of(exc)},
                       {"cause": dict(request.POST.items())}, "cause-category", None)
    return _answer(request, context, f"cause-{cause.id}", {}, {}, f"why-{cause.id}",
                   request.localizer.translate("The root cause was added."))


def cause_of(context: IncidentContext, request: Request) -> RootCause:
    """The incident's own root cause named in the address, or 404."""
    cause = request.dbsession.get(RootCause, int(request.matchdict["cause"]))
    if cause is None or cause.incident_id != context.incident.id:
        raise HTTPNotFound()
    return cause


def add_why(context: IncidentContext, request: Request) -> Any:
    """One more answer to "why?": the chain grows one step at a time, each
    answer asking the next question."""
    cause = cause_of(context, request)
    key = f"why-{cause.id}"
    answer = request.POST.get("answer")
    answer = answer.strip() if isinstance(answer, str) else ""
    try:
        if not answer:
            raise colander.Invalid(colander.SchemaNode(colander.String(), name="answer"),
                                   request.localizer.translate("Write the answer to \"why?\""))
        data = RootCauseUpdateSchema().deserialize({"whys": [*(cause.whys or []), answer]})
        services.update_root_cause(request, cause, data)
    except (colander.Invalid, DomainError) as exc:
        found = errors_of(exc)
        message = found.get("answer") or found.get("whys") or next(iter(found.values()))
        return _answer(request, context, f"cause-{cause.id}", {key: {"answer": message}},
                       {key: {"answer": answer}}, key, None)
    return _answer(request, context, f"cause-{cause.id}", {}, {}, key,
                   request.localizer.translate("The answer was added. Ask \"why?\" again, or stop "
                                               "when you reach something you can fix."))


def remove_cause(context: IncidentContext, request: Request) -> Any:
    cause = cause_of(context, request)
    services.remove_root_cause(request, cause)
    request.dbsession.flush()
    return _answer(request, context, "investigation", {}, {}, "causes-title",
                   request.localizer.translate("The root cause was removed."))


def workspace_panel(request: Request, context: IncidentContext) -> dict[str, Any]:
    """The incident page's investigation workspace (a panel)."""
    return workspace_values(request, context)


def includeme(config: Configurator) -> None:
    # The workspace on the incident page, a panel like any other (its template draws its own section).
    config.add_incident_panel("investigation", "ehs_core:templates/investigation/workspace.html",
                              workspace_panel, permission=Permission.view_incident, order=10, framed=False)
    factory = "ehs_core.incidents.resources.incident_factory"
    config.add_route("page.investigation", PAGE + "/investigation", factory=factory)
    config.add_route("page.root_causes", PAGE + "/root-causes", factory=factory)
    config.add_route("page.root_cause_whys", CAUSE + "/whys", factory=factory)
    config.add_route("page.root_cause_remove", CAUSE + "/remove", factory=factory)
    manage = Permission.manage_investigation
    for view, route in ((save_investigation, "page.investigation"), (add_cause, "page.root_causes"),
                        (add_why, "page.root_cause_whys"), (remove_cause, "page.root_cause_remove")):
        config.add_view(view, route_name=route, request_method="POST",
                        renderer="ehs_core:templates/incidents/detail.html", permission=manage)
