"""The California plugin's pages: a panel on the incident page (for
supervisors, at California sites) where the serious-injury facts and the
violence log's entry are entered; the printable violent incident log with
its CSV; and the home card where an employee asks for a copy of the log.
Each adapts the same operations and schemas as the JSON API."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import exists, func, select

from ehs_core.errors import DomainError
from ehs_core.incidents.resources import IncidentContext
from ehs_core.obligations import services as obligations
from ehs_core.security import Permission, Role, role_at_least
from ehs_core.sites.models import Site
from ehs_core.sites.zones import site_zone
from ehs_core.ui.forms import BOOL, OPTIONAL_INT, OPTIONAL_TEXT, TEXT, errors_of, json_values, local_to_iso
from ehs_plugins.calosha import printing, requests, serious, violence
from ehs_plugins.calosha.schemas import (
    LogRequestSchema,
    SeriousSchema,
    ViolenceSchema,
    log_query_schema,
)
from ehs_plugins.calosha.views import ASK_FOR_LOG, ROOT_FACTORY, VIEW_LOG

TEMPLATES = "ehs_plugins.calosha:templates/"
INCIDENT = r"/incidents/{number:\d{1,9}}/calosha"
VIOLENCE_FIELDS = {"perpetratorRelation": TEXT, "description": TEXT, "circumstances": TEXT, "where": TEXT,
                   "consequences": TEXT, "securityCalled": BOOL, "policeCalled": BOOL,
                   "actionsTaken": OPTIONAL_TEXT, "completedByTitle": TEXT, "violenceType": OPTIONAL_INT}
SERIOUS_FIELDS = {"died": BOOL, "inpatientHours": OPTIONAL_INT, "observationOnly": BOOL, "lostMember": BOOL,
                  "disfigurement": BOOL}
def may_see_entries(request: Request) -> bool:
    """The log entry's changes on the timeline: supervisors and above."""
    identity = request.identity
    return bool(identity and identity.is_user and role_at_least(identity.role, Role.supervisor))


def panel_values(request: Request, context: IncidentContext) -> dict[str, Any] | None:
    incident = context.incident
    site = request.dbsession.get(Site, incident.site_id)
    if site is None or (site.state or "").strip().upper() != "CA":
        return None
    zone = site_zone(site.timezone, request.registry)
    facts = serious.facts_of(request, incident.id)
    entry = violence.entry_of(request, incident.id)
    shown = serious.facts_json(request, incident, facts, zone) if facts else None
    report = shown["report"] if shown else None
    owed = obligations.find(request, serious.KIND, serious.subject(incident.id),
                            incident.organization_id) if report else None
    return {"facts": shown, "report": report, "due": owed.due_at if owed else None,
            "entry": violence.entry_json(entry) if entry else None, "zone": site.timezone,
            "number": incident.number}


def _form_page(request: Request, context: IncidentContext, which: str,
               errors: dict[str, str]) -> dict[str, Any]:
    """A refused form, shown again on a page of its own with what was posted."""
    request.override_renderer = TEMPLATES + "form.html"
    values: dict[str, Any] = dict(request.POST.items())
    values["incidentKinds"] = request.POST.getall("incidentKinds")
    return {"which": which, "errors": errors, "values": values, "number": context.incident.number}


def _back(request: Request, context: IncidentContext) -> HTTPFound:
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "saved"}, _anchor="panel-calosha"))


def save_violence(context: IncidentContext, request: Request) -> Any:
    values = json_values(request.POST, VIOLENCE_FIELDS)
    if values.get("violenceType") is None:
        values.pop("violenceType", None)  # not chosen: the schema says it is required
    values["incidentKinds"] = [k for k in request.POST.getall("incidentKinds") if isinstance(k, str)]
    people = request.POST.get("peopleInvolved", "")
    values["peopleInvolved"] = [line.strip() for line in str(people).splitlines() if line.strip()]
    try:
        violence.save_entry(request, context.incident, ViolenceSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return _form_page(request, context, "violence", errors_of(exc))
    return _back(request, context)


def save_serious(context: IncidentContext, request: Request) -> Any:
    values = json_values(request.POST, SERIOUS_FIELDS)
    site = request.dbsession.get(Site, context.incident.site_id)
    learned = request.POST.get("learnedAt", "")
    zone = site_zone(site.timezone, request.registry)
    values["learnedAt"] = local_to_iso(learned, zone) if learned else None
    try:
        serious.put_facts(request, context.incident, SeriousSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return _form_page(request, context, "serious", errors_of(exc))
    return _back(request, context)


def log_values(request: Request) -> dict[str, Any]:
    """The log's entries for the chosen site and dates, as the API gives them."""
    raw = {k: v for k, v in request.GET.items() if k in ("siteId", "from", "to") and v}
    errors: dict[str, str] = {}
    try:
        query = log_query_schema().deserialize(raw)
    except colander.Invalid as exc:
        errors = errors_of(exc)
        query = log_query_schema().deserialize({})
    items = violence.log_entries(request, query["siteId"], query["from"], query["to"])
    return {"items": items, "query": raw if not errors else {}, "errors": errors}


def log_page(request: Request) -> dict[str, Any]:
    """The printable log: the same items as the API, for the chosen site and dates."""
    values = log_values(request)
    raw = {k: v for k, v in request.GET.items() if k in ("siteId", "from", "to") and v}
    sites = request.dbsession.execute(select(Site.id, Site.name).where(
        Site.organization_id == request.identity.account.organization_id).order_by(Site.name)).all()
    return {**values, "query": raw, "sites": sites, "csv": request.route_path("calosha.log_csv", _query=raw),
            "pdf": request.route_path("page.calosha_log_pdf", _query=raw)}


def log_pdf(request: Request) -> Response:
    """The same log as a PDF (the same entries, the same no-names rule)."""
    return printing.log_pdf(request, TEMPLATES + "log_pdf.html", log_values(request),
                            "violent-incident-log.pdf")


def ask_card(request: Request) -> dict[str, Any] | None:
    """Shown where the organization has a site in California."""
    organization = request.identity.account.organization_id
    california = request.dbsession.execute(select(exists().where(
        Site.organization_id == organization, func.upper(Site.state) == "CA"))).scalar()
    return {"days": requests.DAYS} if california else None


def ask_for_log(request: Request) -> Any:
    requests.request_copy(request, LogRequestSchema().deserialize({}))
    return HTTPFound(request.route_path("home", _query={"notice": "saved"}))


def includeme(config: Configurator) -> None:
    factory = "ehs_core.incidents.resources.incident_factory"
    config.add_incident_panel("calosha", TEMPLATES + "panel.html", panel_values,
                              permission=Permission.manage_investigation, order=60)
    config.add_route("page.calosha_violence", INCIDENT + "/violence", factory=factory)
    config.add_route("page.calosha_serious", INCIDENT + "/serious", factory=factory)
    config.add_route("page.calosha_log", "/calosha/violent-incident-log", factory=ROOT_FACTORY)
    config.add_route("page.calosha_log_pdf", "/calosha/violent-incident-log.pdf", factory=ROOT_FACTORY)
    config.add_route("page.calosha_ask", "/calosha/log-requests", factory=ROOT_FACTORY)
    config.add_view(save_violence, route_name="page.calosha_violence", request_method="POST",
                    renderer=TEMPLATES + "form.html", permission=Permission.manage_investigation)
    config.add_view(save_serious, route_name="page.calosha_serious", request_method="POST",
                    renderer=TEMPLATES + "form.html", permission=Permission.manage_investigation)
    config.add_view(log_page, route_name="page.calosha_log", request_method="GET",
                    renderer=TEMPLATES + "log.html", permission=VIEW_LOG)
    config.add_view(log_pdf, route_name="page.calosha_log_pdf", request_method="GET", permission=VIEW_LOG)
    config.add_view(ask_for_log, route_name="page.calosha_ask", request_method="POST", permission=ASK_FOR_LOG)
    config.add_nav_item("calosha_log", "Violence log", "page.calosha_log", permission=VIEW_LOG, order=70,
                        context=ROOT_FACTORY)
    config.add_dashboard_card("calosha_ask", TEMPLATES + "ask_card.html", ask_card, permission=ASK_FOR_LOG,
                              context=ROOT_FACTORY, order=90)
