"""The report form's pages: file a report as the API does (same schema, same
`filing` operation, a form `clientId` so sending twice files once), its
thanks page, and the area picker the form swaps with htmx."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request

from ehs_core.attachments import storage
from ehs_core.errors import DomainError
from ehs_core.followup.services import follow_up_url, issue_code
from ehs_core.incidents import filing
from ehs_core.incidents.models import Incident
from ehs_core.incidents.pages import (
    FORM_FIELDS,
    active_sites,
    form_values,
    report_values,
    site_zone,
)
from ehs_core.incidents.resources import sees_everything
from ehs_core.incidents.schemas import IncidentCreateSchema
from ehs_core.security import Permission
from ehs_core.ui.forms import (
    BOOL,
    TEXT,
    errors_of,
)

_ = TranslationStringFactory("ehs")




def report_form(request: Request) -> dict[str, Any]:
    sites = active_sites(request)
    site_id = sites[0]["id"] if len(sites) == 1 else None
    now = dt.datetime.now(site_zone(request, sites, site_id)).replace(second=0, microsecond=0)
    shown = now.strftime("%Y-%m-%dT%H:%M")
    return form_values(request, sites) | {
        "values": {"clientId": str(uuid.uuid4()), "occurredAt": shown, "siteId": site_id,
                   "nowShown": shown, "nowAt": now.isoformat()}, "errors": {}}


def report(request: Request) -> Any:
    """File a report as the API does: same schema, same filing operation, a
    `clientId` from the form so that sending it twice files it once."""
    sites = active_sites(request)
    values = report_values(request, sites, FORM_FIELDS | {"anonymous": BOOL, "clientId": TEXT})
    # The thanks page is found by the clientId (see `thanks`): a form sent
    # without one gets one here.
    values["clientId"] = values.get("clientId") or str(uuid.uuid4())
    user = request.identity.user
    try:
        data = IncidentCreateSchema().deserialize(values)
        incident, created = filing.file_report(request, data)
    except (colander.Invalid, DomainError) as exc:
        request.response.status = 400
        shown = dict(request.POST.items())
        shown.pop("photos", None)
        # A browser cannot put chosen files back into a file input: say which
        # ones were not kept, so that nobody believes they were sent.
        dropped = [item.filename for item in request.POST.getall("photos") if hasattr(item, "file")]
        return form_values(request, sites) | {"values": shown, "errors": errors_of(exc),
                                              "dropped_files": dropped}
    failed = []
    if created:
        for item in request.POST.getall("photos"):
            if not hasattr(item, "file"):
                continue
            try:
                storage.save_upload(request, incident, item, None if incident.anonymous else user.id)
            except storage.Refused:
                failed.append(item.filename)
    # A report without a name gets its follow-up code, shown on this answer
    # only (the thanks page a redirect leads to cannot show it again).
    code = issue_code(request, incident) if created and incident.anonymous else None
    if failed or code:
        # The files not kept are named by this answer itself: the address
        # must not write what the page says (anyone can craft one).
        request.override_renderer = "ehs_core:templates/incidents/thanks.html"
        return thanks_values(request, incident) | {
            "failed": failed, "follow_up_code": code,
            "follow_up_url": follow_up_url(request, code) if code else None}
    return HTTPFound(request.route_path("page.incident_thanks", _query={"report": incident.client_id}))


def thanks(request: Request) -> dict[str, Any]:
    """The report's reference, to who filed it only: the address names the
    report by its clientId (a random UUID the form was given), and the page
    answers as a retry of that clientId would (`filing.filed_by`: the
    reporter of a named report; any signed-in user holding the clientId of
    an anonymous one, which names no reporter); 404 otherwise, like every
    page for what the caller cannot see. By `?number=N` it told anyone
    whether N existed and whether it was anonymous."""
    try:
        client_id = str(uuid.UUID(request.GET.get("report", "")[:64]))
    except ValueError:
        raise HTTPNotFound() from None
    identity = request.identity
    incident = filing.find_by_client_id(request.dbsession, identity.account.organization_id, client_id)
    if (incident is None or incident.number is None
            or not filing.filed_by(incident, filing.user_filer(incident.anonymous, identity.user_id))):
        raise HTTPNotFound()
    return thanks_values(request, incident)


def thanks_values(request: Request, incident: Incident) -> dict[str, Any]:
    visible = sees_everything(request.identity) or incident.reporter_id == request.identity.user_id
    return {"reference": incident.reference, "number": incident.number, "visible": visible,
            "anonymous": incident.anonymous, "failed": [], "follow_up_code": None}


def area_picker(request: Request) -> dict[str, Any]:
    """The area select of the chosen site (htmx swaps it when the site changes)."""
    raw = request.GET.get("siteId", "")
    site_id = int(raw) if raw.isdigit() and len(raw) <= 9 else None
    sites = active_sites(request)
    return {"sites": [s for s in sites if s["id"] == site_id] if site_id else sites,
            "values": {"siteId": site_id, "areaId": None}, "errors": {},
            "field": request.GET.get("field") or "areaId"}


def includeme(config: Configurator) -> None:
    config.add_route("page.incident_new", "/incidents/new")
    config.add_route("page.incident_thanks", "/incidents/new/thanks")
    config.add_route("page.area_picker", "/incidents/areas")
    signed_in = Permission.signed_in
    view = config.add_view
    view(report_form, route_name="page.incident_new", request_method="GET",
         renderer="ehs_core:templates/incidents/new.html", permission=signed_in)
    view(report, route_name="page.incident_new", request_method="POST",
         renderer="ehs_core:templates/incidents/new.html", permission=signed_in)
    view(thanks, route_name="page.incident_thanks", request_method="GET",
         renderer="ehs_core:templates/incidents/thanks.html", permission=signed_in)
    view(area_picker, route_name="page.area_picker", request_method="GET",
         renderer="ehs_core:templates/incidents/area_select.html", permission=signed_in)
    config.add_nav_item("report", "Report", "page.incident_new", permission=signed_in, order=30)
