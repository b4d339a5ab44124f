from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from pyramid.authorization import Allow
from pyramid.renderers import render_to_response
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.attachments.storage import Refused, max_upload_bytes, save_upload
from ehs_core.auth import ratelimit
from ehs_core.errors import APIError, TooMany, invalid
from ehs_core.followup import services as followup
from ehs_core.incidents.filing import check_replay, file_incident, find_by_client_id
from ehs_core.incidents.models import Incident
from ehs_core.schemas import deserialize, parse_json
from ehs_core.security import Role, role_principal
from ehs_core.sites.models import Area, Site
from ehs_core.sites.services import area_path
from ehs_core.ui import PAGE_HEADERS, language_switch
from ehs_core.users.models import Organization
from ehs_plugins.kiosk import links
from ehs_plugins.kiosk.links import link_json
from ehs_plugins.kiosk.models import KioskLink, KioskReport
from ehs_plugins.kiosk.schemas import LinkCreateSchema, LinkUpdateSchema, report_schema
from ehs_plugins.kiosk.security import FILE_REPORT, active_link

log = logging.getLogger(__name__)

TEMPLATES = "ehs_plugins.kiosk:templates/"

MANAGE = "kiosk.manage"
TOKEN = [{"kioskToken": []}]
MAX_FILES = 5
REPORT_LIMIT = ratelimit.Limit("kiosk", 30, dt.timedelta(minutes=10))


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
    if link.site_id is not None and data["siteId"] != link.site_id:
        raise invalid("siteId", "This link reports only on its own site")
    reporter_name = data.pop("reporterName")
    data["anonymous"] = not reporter_name
    # A retry is answered before the rate limit: it files nothing new.
    existing = find_by_client_id(request.dbsession, link.organization_id, data.get("clientId"))
    if existing is not None:
        return replay(request, link, existing, data)
    wait = ratelimit.hit(request.dbsession, REPORT_LIMIT, str(link.id))
    if wait is not None:
        raise TooMany("Too many reports from this link; try again in a few minutes",
                      headers={"Retry-After": str(max(1, int(wait.total_seconds()) + 1))})
    incident, created = file_incident(request, data, link.organization_id, reporter_id=None,
                                      filer=f"kiosk:{link.id}")
    if not created:  # the same clientId arrived concurrently
        return replay(request, link, incident, data)
    request.dbsession.add(KioskReport(incident_id=incident.id, kiosk_id=link.id,
                                      reporter_name=reporter_name or None))
    failed = []
    for upload in uploads:
        try:
            save_upload(request, incident, upload, uploader_id=None)
        except Refused as exc:
            failed.append({"name": (upload.filename or "")[:200], "error": exc.message})
    log.info("kiosk link %s filed %s (%d file(s) refused)", link.id, incident.reference, len(failed))
    request.response.status = 201
    answer: dict[str, Any] = {"reference": incident.reference, "failedFiles": failed}
    if incident.anonymous:
        # A report without a name: the code to follow it up, shown this once
        # (the core keeps only its hash); a named report gets none.
        answer["followUpCode"] = followup.issue_code(request, incident)
    return answer


def replay(request: Request, link: KioskLink, incident: Incident, data: dict[str, Any]) -> dict[str, Any]:
    """The answer to a retried submission: the original reference, but only
    to the link that filed it and only for the same report."""
    filed = request.dbsession.get(KioskReport, incident.id)
    check_replay(incident, data, filed_by_sender=filed is not None and filed.kiosk_id == link.id)
    request.response.status = 200
    return {"reference": incident.reference, "failedFiles": []}


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None


# How long an unsent report is kept without anyone typing (kiosk.js): a link
# often runs on a shared tablet, and an abandoned report (a name, an injury,
# a diagnosis) must not outlive the person who typed it.
DRAFT_IDLE_SECONDS = 10 * 60


# The address holds the link's token, and the page posts with fetch (whose
# Origin no referrer policy removes): no Referer at all.
KIOSK_HEADERS = {**PAGE_HEADERS, "Referrer-Policy": "no-referrer"}


@view_config(route_name="kiosk.page", request_method="GET", permission=NO_PERMISSION_REQUIRED)
def report_page(request: Request) -> Response:
    """The report form, or, for an unknown or revoked link, a page that
    says what to do instead (still a 404: the link is not there)."""
    token = request.matchdict["token"]
    link = active_link(request.dbsession, token)
    if link is None:
        response = render_to_response(TEMPLATES + "gone.html", {}, request=request)
        response.status = 404
    else:
        config = config_json(request, link)
        site_id, area_id = _int(request.GET.get("site")), _int(request.GET.get("area"))
        if site_id is None and area_id is not None:  # a QR code may name only the area
            site_id = next((s["id"] for s in config["sites"] for a in s["areas"] if a["id"] == area_id),
                           None)
        if site_id not in {s["id"] for s in config["sites"]}:
            site_id = config["sites"][0]["id"] if len(config["sites"]) == 1 else None
        # The installed app starts where this QR code pointed (offline.py).
        query = {key: str(value) for key, value in (("site", site_id), ("area", area_id))
                 if value is not None}
        response = render_to_response(TEMPLATES + "report.html", {
            "organization": config["organizationName"] or "", "link_name": link.name, "token": token,
            "sites": config["sites"], "site_id": site_id, "area_id": area_id,
            "manifest_path": request.route_path("kiosk.manifest", token=token, _query=query),
            "draft_idle_seconds": DRAFT_IDLE_SECONDS, "language_switch": language_switch(request)},
            request=request)
    response.headers.update(KIOSK_HEADERS)
    return response
