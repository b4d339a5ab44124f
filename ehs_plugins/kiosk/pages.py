"""The reporting links' screens, for safety managers (and admins), as the
API allows them (`kiosk.manage`): the list with a form to create a link,
each link renamed, restricted to a site or revoked in place, and a
printable poster per link whose QR code (drawn by `segno`, not by hand)
holds <public_url>/k/<token>, optionally preselecting an area. Each form
adapts `links` with the API's own schemas."""

from __future__ import annotations

import io
from typing import Any

import colander
import segno
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import select

from ehs_core.errors import APIError, DomainError
from ehs_core.sites import services as sites
from ehs_core.ui.forms import BOOL, OPTIONAL_INT, TEXT, errors_of, json_values
from ehs_plugins.kiosk import links
from ehs_plugins.kiosk.models import KioskLink
from ehs_plugins.kiosk.schemas import LinkCreateSchema, LinkUpdateSchema

ADMIN = "ehs_plugins.kiosk.views.KioskAdmin"
MANAGE = "kiosk.manage"
TEMPLATES = "ehs_plugins.kiosk:templates/pages/"
LINK = r"/admin/links/{id:\d{1,9}}"
PAPERS = {"a4": "A4", "letter": "Letter"}


def listing(request: Request, errors: dict[str, str] | None = None,
            values: dict[str, Any] | None = None) -> dict[str, Any]:
    found = sites.list_sites(request, include_archived=False)
    names = {site.id: site.name for site, _ in sites.list_sites(request, include_archived=True)}
    return {"links": links.list_links(request), "sites": [site for site, _ in found], "site_names": names,
            "errors": errors or {}, "values": values or {}}


def link_list(request: Request) -> dict[str, Any]:
    return listing(request)


def create_link(request: Request) -> Any:
    values = json_values(request.POST, {"name": TEXT, "siteId": OPTIONAL_INT})
    try:
        link = links.create_link(request, LinkCreateSchema().deserialize(values))
    except (colander.Invalid, DomainError, APIError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return listing(request, errors_of(exc), dict(request.POST.items()))
    return HTTPFound(request.route_path("page.kiosk_links", _query={"notice": "saved"},
                                        _anchor=f"link-{link.id}"))


def change_link(request: Request) -> Any:
    """Name and site from the edit form, or revoked from its own button."""
    link_id = int(request.matchdict["id"])
    spec = {"revoked": BOOL} if "revoked" in request.POST else {"name": TEXT, "siteId": OPTIONAL_INT}
    try:
        links.update_link(request, link_id, LinkUpdateSchema().deserialize(json_values(request.POST, spec)))
    except (colander.Invalid, DomainError, APIError) as exc:
        if getattr(exc, "status", 400) == 404:
            raise HTTPNotFound() from None
        request.response.status = getattr(exc, "status", 400)
        found = errors_of(exc)
        return listing(request, {f"link-{link_id}": "; ".join(found.values())})
    return HTTPFound(request.route_path("page.kiosk_links", _query={"notice": "saved"},
                                        _anchor=f"link-{link_id}"))


def _active_link(request: Request) -> KioskLink:
    link = request.dbsession.get(KioskLink, int(request.matchdict["id"]))
    if link is None or link.revoked:
        raise HTTPNotFound()
    return link


def _area(request: Request, link: KioskLink) -> Any:
    """The area a poster preselects, if it is one the link reports on."""
    raw = request.GET.get("area", "")
    if not (raw.isdigit() and len(raw) < 10):
        return None
    area = request.dbsession.get(sites.Area, int(raw))
    if area is None or area.archived or (link.site_id is not None and area.site_id != link.site_id):
        return None
    return area


def poster(request: Request) -> dict[str, Any]:
    link = _active_link(request)
    area = _area(request, link)
    paper = request.GET.get("paper") if request.GET.get("paper") in PAPERS else "a4"
    found = sites.list_sites(request, include_archived=False)
    choices = [(site, areas) for site, areas in found if link.site_id in (None, site.id) and areas]
    query = {"area": area.id} if area is not None else {}
    return {"link": link, "area": area, "url": links.link_url(request, link, area.id if area else None),
            "site": request.dbsession.get(sites.Site, area.site_id if area else link.site_id)
            if (area or link.site_id) else None,
            "qr_src": request.route_path("page.kiosk_qr", id=link.id, _query=query),
            "paper": paper, "papers": PAPERS, "choices": choices}


def qr_png(request: Request) -> Response:
    """The poster's QR code as a PNG, large enough to print sharp (error
    correction level Q: a poster may get scuffed)."""
    link = _active_link(request)
    area = _area(request, link)
    code = segno.make(links.link_url(request, link, area.id if area else None), error="q", micro=False)
    out = io.BytesIO()
    code.save(out, kind="png", scale=12, border=4)
    response = Response(out.getvalue(), content_type="image/png")
    response.headers["Cache-Control"] = "no-store"
    return response


def has_link(request: Request) -> bool:
    """The first hour's step: a reporting link exists to print a poster of."""
    return request.dbsession.execute(select(KioskLink.id).limit(1)).first() is not None


def includeme(config: Configurator) -> None:
    config.add_first_step("kiosk_poster", "Make a reporting link and print its poster", "page.kiosk_links",
                          has_link, order=40)
    config.add_route("page.kiosk_links", "/admin/links", factory=ADMIN)
    config.add_route("page.kiosk_link", LINK, factory=ADMIN)
    config.add_route("page.kiosk_poster", LINK + "/poster", factory=ADMIN)
    config.add_route("page.kiosk_qr", LINK + "/qr.png", factory=ADMIN)
    view = config.add_view
    view(link_list, route_name="page.kiosk_links", request_method="GET", renderer=TEMPLATES + "links.html",
         permission=MANAGE)
    view(create_link, route_name="page.kiosk_links", request_method="POST", renderer=TEMPLATES + "links.html",
         permission=MANAGE)
    view(change_link, route_name="page.kiosk_link", request_method="POST", renderer=TEMPLATES + "links.html",
         permission=MANAGE)
    view(poster, route_name="page.kiosk_poster", request_method="GET", renderer=TEMPLATES + "poster.html",
         permission=MANAGE)
    view(qr_png, route_name="page.kiosk_qr", request_method="GET", permission=MANAGE)
    config.add_nav_item("kiosk_links", "Reporting links", "page.kiosk_links", permission=MANAGE,
                        context=ADMIN, order=85)
