from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Any

import colander
from pyramid.authorization import Allow
from pyramid.httpexceptions import HTTPSeeOther
from pyramid.renderers import render_to_response
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.attachments.storage import max_upload_bytes
from ehs_core.errors import APIError, DomainError, invalid
from ehs_core.followup import services as followup
from ehs_core.security import Role, role_principal
from ehs_core.sites.models import Area, Site
from ehs_core.sites.services import area_path
from ehs_core.sites.zones import site_zone
from ehs_core.ui import PAGE_HEADERS, language_switch
from ehs_core.ui.forms import INT, OPTIONAL_INT, OPTIONAL_TEXT, TEXT, errors_of, json_values, local_to_iso
from ehs_core.users.models import Organization
from ehs_core.validation import deserialize, parse_json
from ehs_plugins.kiosk import links, reports
from ehs_plugins.kiosk.links import link_json
from ehs_plugins.kiosk.models import KioskLink
from ehs_plugins.kiosk.reports import MAX_FILES
from ehs_plugins.kiosk.schemas import LinkCreateSchema, LinkUpdateSchema, report_schema
from ehs_plugins.kiosk.security import FILE_REPORT, active_link

log = logging.getLogger(__name__)

TEMPLATES = "ehs_plugins.kiosk:templates/"

MANAGE = "kiosk.manage"
TOKEN = [{"kioskToken": []}]


class KioskAdmin:
    __acl__ = [(Allow, role_principal(Role.safety_manager), MANAGE)]

    def __init__(self, request: Request) -> None:
        self.request = request


@view_config(route_name="kiosks", request_method="GET", renderer="json", permission=MANAGE)
def list_links(request: Request) -> list[dict[str, Any]]:
    return [link_json(link) for link in links.list_links(request)]


@view_config(route_name="kiosks", request_method="POST", renderer="json", permission=MANAGE,
             body=LinkCreateSchema,
             responses=(201,))
def create_link(request: Request) -> dict[str, Any]:
    link = links.create_link(request, request.validated)
    request.response.status = 201
    return link_json(link)


@view_config(route_name="kiosk", request_method="PATCH", renderer="json", permission=MANAGE,
             body=LinkUpdateSchema)
def update_link(request: Request) -> dict[str, Any]:
    return link_json(links.update_link(request, int(request.matchdict["id"]), request.validated))


def allowed_sites(request: Request, link: KioskLink) -> list[dict[str, Any]]:
    sites_q = select(Site).where(Site.archived.is_(False)).order_by(Site.name, Site.id)
    if link.site_id is not None:
        sites_q = sites_q.where(Site.id == link.site_id)
    sites = list(request.dbsession.execute(sites_q).scalars())
    areas = request.dbsession.execute(
        select(Area).where(Area.archived.is_(False), Area.site_id.in_([s.id for s in sites]))
        .order_by(Area.name, Area.id)).scalars()
    by_site: dict[int, list] = {s.id: [] for s in sites}
    for area in areas:
        by_site[area.site_id].append({"id": area.id, "name": area.name, "kind": area.kind,
                                      "parentId": area.parent_id})
    for site_areas in by_site.values():
        by_id = {area["id"]: area for area in site_areas}
        for area in site_areas:
            area["path"] = area_path(area, by_id)
        site_areas.sort(key=lambda area: (area["path"].casefold(), area["id"]))
    return [{"id": s.id, "name": s.name, "timezone": s.timezone, "areas": by_site[s.id]} for s in sites]


def config_json(request: Request, link: KioskLink) -> dict[str, Any]:
    org = request.dbsession.get(Organization, link.organization_id)
    return {"organizationName": org.name if org else None, "linkName": link.name,
            "siteId": link.site_id, "sites": allowed_sites(request, link)}


@view_config(route_name="kiosk.config", request_method="GET", renderer="json", permission=FILE_REPORT,
             security=TOKEN)
def kiosk_config(request: Request) -> dict[str, Any]:
    return config_json(request, request.identity.extra["link"])


def _report_part(request: Request) -> dict[str, Any]:
    part = request.POST.get("report")
    if part is None:
        raise APIError(400, "Invalid request", [{"path": "report", "message": "Required"}])
    raw = part.file.read() if hasattr(part, "file") else part.encode("utf-8", "surrogatepass")
    body = parse_json(raw, "report")
    if not isinstance(body, dict):
        raise APIError(400, "Invalid request", [{"path": "report", "message": "Must be a JSON object"}])
    return body


@view_config(route_name="kiosk.reports", request_method="POST", renderer="json", permission=FILE_REPORT,
             responses=(200, 201), multipart={"report": "json", "files": "files"}, security=TOKEN)
def file_report(request: Request) -> dict[str, Any]:
    """The JSON adapter of `reports.file_link_report` (what kiosk.js sends)."""
    link: KioskLink = request.identity.extra["link"]
    if not (request.content_type or "").startswith("multipart/form-data"):
        raise APIError(415, "Send the report as multipart/form-data")
    limit = max_upload_bytes(request)
    if request.content_length and request.content_length > MAX_FILES * limit + 1024 * 1024:
        raise APIError(413, "The report is too large")
    uploads = [value for key, value in request.POST.items() if key != "report" and hasattr(value, "file")]
    if len(uploads) > MAX_FILES:
        raise APIError(400, "Invalid request", [{"path": "files", "message": f"At most {MAX_FILES} files"}])
    data = deserialize(report_schema(), _report_part(request))
    filed = reports.file_link_report(request, link, data, uploads)
    request.response.status = 201 if filed.created else 200
    answer: dict[str, Any] = {"reference": filed.incident.reference, "failedFiles": filed.failed}
    if filed.follow_up_code:
        answer["followUpCode"] = filed.follow_up_code
    return answer


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None


# How long an unsent report is kept without anyone typing (kiosk.js): a link
# often runs on a shared tablet, and an abandoned report (a name, an injury,
# a diagnosis) must not outlive the person who typed it.
DRAFT_IDLE_SECONDS = 10 * 60


# The address holds the link's token. `same-origin` (not `no-referrer`): a
# plain form post from a no-referrer page carries `Origin: null` in
# Chromium, which the core's Origin check (CSRF defence) rightly refuses;
# with `same-origin` the Referer (and so the token) is sent only to this
# service itself, never to another origin (ASVS 5 V3.4 browser security
# headers, V13 (API/web service) and V14.3 no sensitive data in URLs leaked
# by Referer: the token leaves the page only toward its own origin).
KIOSK_HEADERS = {**PAGE_HEADERS, "Referrer-Policy": "same-origin"}

# The form's fields as the report schema's values (a browser sends text).
FORM_SPEC = {"title": TEXT, "type": TEXT, "severity": TEXT, "siteId": INT, "areaId": OPTIONAL_INT,
             "locationDetail": OPTIONAL_TEXT, "description": OPTIONAL_TEXT,
             "immediateAction": OPTIONAL_TEXT, "reporterName": OPTIONAL_TEXT, "clientId": TEXT}


def _gone(request: Request) -> Response:
    response = render_to_response(TEMPLATES + "gone.html", {}, request=request)
    response.status = 404
    response.headers.update(KIOSK_HEADERS)
    return response


def _zone_of(request: Request, sites: list[dict[str, Any]], site_id: Any) -> dt.tzinfo:
    name = next((s["timezone"] for s in sites if s["id"] == site_id), None)
    return site_zone(name, request.registry)


def _form(request: Request, link: KioskLink, token: str, site_id: int | None, area_id: int | None,
          values: dict[str, Any] | None = None, errors: dict[str, str] | None = None,
          dropped: list[str] | None = None) -> Response:
    config = config_json(request, link)
    if site_id is None and area_id is not None:  # a QR code may name only the area
        site_id = next((s["id"] for s in config["sites"] for a in s["areas"] if a["id"] == area_id), None)
    if site_id not in {s["id"] for s in config["sites"]}:
        site_id = config["sites"][0]["id"] if len(config["sites"]) == 1 else None
    # The installed app starts where this QR code pointed (offline.py).
    query = {key: str(value) for key, value in (("site", site_id), ("area", area_id)) if value is not None}
    if values is None:
        # Without JavaScript the form is sent as it was served: its own
        # clientId (a retry files once) and "now" in the site's zone.
        now = dt.datetime.now(_zone_of(request, config["sites"], site_id))
        values = {"clientId": str(uuid.uuid4()), "occurredAt": now.strftime("%Y-%m-%dT%H:%M")}
    response = render_to_response(TEMPLATES + "report.html", {
        "organization": config["organizationName"] or "", "link_name": link.name, "token": token,
        "sites": config["sites"], "site_id": site_id, "area_id": area_id,
        "manifest_path": request.route_path("kiosk.manifest", token=token, _query=query),
        "draft_idle_seconds": DRAFT_IDLE_SECONDS, "values": values, "errors": errors or {},
        "dropped_files": dropped or [], "language_switch": language_switch(request)}, request=request)
    response.headers.update(KIOSK_HEADERS)
    return response


@view_config(route_name="kiosk.page", request_method="GET", permission=NO_PERMISSION_REQUIRED)
def report_page(request: Request) -> Response:
    """The report form, or, for an unknown or revoked link, a page that
    says what to do instead (still a 404: the link is not there)."""
    token = request.matchdict["token"]
    link = active_link(request.dbsession, token)
    if link is None:
        return _gone(request)
    return _form(request, link, token, _int(request.GET.get("site")), _int(request.GET.get("area")))


@view_config(route_name="kiosk.page_report", request_method="POST", permission=NO_PERMISSION_REQUIRED)
def report_post(request: Request) -> Response:
    """The form sent without JavaScript (project rule: pages work without
    it): the page adapter of `reports.file_link_report`, as the API is its
    JSON one. The link's token in the address is the authority, as the
    header is for the API; the server-given clientId makes a double submit
    file once. A new report's thanks come in this very answer when it has
    a follow-up code or refused files (neither may be put in an address);
    otherwise 303 to the thanks page."""
    token = request.matchdict["token"]
    link = active_link(request.dbsession, token)
    if link is None:
        return _gone(request)
    config = config_json(request, link)
    values = json_values(request.POST, FORM_SPEC)
    if "occurredAt" in request.POST:
        values["occurredAt"] = local_to_iso(request.POST.get("occurredAt"),
                                            _zone_of(request, config["sites"], values.get("siteId")))
    uploads = [item for item in request.POST.getall("files") if hasattr(item, "file")]
    try:
        if len(uploads) > MAX_FILES:
            raise invalid("files", f"At most {MAX_FILES} files")
        filed = reports.file_link_report(request, link, report_schema().deserialize(values), uploads)
    except (colander.Invalid, DomainError) as exc:
        shown = {key: value for key, value in request.POST.items() if isinstance(value, str)}
        site_id = values.get("siteId") if isinstance(values.get("siteId"), int) else None
        area_id = values.get("areaId") if isinstance(values.get("areaId"), int) else None
        # A browser cannot put chosen files back into a file input: name
        # them, so that nobody believes they were sent.
        response = _form(request, link, token, site_id, area_id, shown, errors_of(exc),
                         [item.filename for item in uploads])
        response.status = getattr(exc, "status", 400)
        response.headers.update(getattr(exc, "headers", None) or {})
        return response
    if filed.created and (filed.follow_up_code or filed.failed):
        return _thanks(request, token, filed.incident.reference, filed.failed, filed.follow_up_code)
    return HTTPSeeOther(request.route_path("kiosk.page_thanks", token=token,
                                           _query={"report": filed.incident.client_id}))


def _thanks(request: Request, token: str, reference: str, failed: list[dict[str, str]],
            code: str | None) -> Response:
    response = render_to_response(TEMPLATES + "thanks.html", {
        "reference": reference, "failed": failed, "follow_up_code": code, "token": token,
        "follow_up_url": followup.follow_up_url(request, code) if code else None}, request=request)
    response.headers.update(KIOSK_HEADERS)
    return response


@view_config(route_name="kiosk.page_thanks", request_method="GET", permission=NO_PERMISSION_REQUIRED)
def thanks_page(request: Request) -> Response:
    """The reference of a report this link filed, found by its clientId (a
    random UUID the form was given); 404 for any other."""
    token = request.matchdict["token"]
    link = active_link(request.dbsession, token)
    if link is None:
        return _gone(request)
    try:
        client_id = str(uuid.UUID(request.GET.get("report", "")[:64]))
    except ValueError:
        return _gone(request)
    incident = reports.filed_through(request, link, client_id)
    if incident is None or incident.number is None:
        return _gone(request)
    return _thanks(request, token, incident.reference, [], None)
