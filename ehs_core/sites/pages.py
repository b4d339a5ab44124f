"""Sites and their areas, as pages (/admin/sites), for safety managers and
admins (`manage_sites`, as in the API): create a site; edit its name, zone
and the establishment fields the injury records use, each explained (29 CFR
1904.32 and the ITA's establishment type); archive and restore; the area
tree shown as a tree, areas added under a parent, renamed and archived.
Each form adapts `sites.services` with the API's schemas."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.errors import DomainError, NotFound
from ehs_core.security import Permission
from ehs_core.sites import services
from ehs_core.sites.models import ESTABLISHMENT_FIELDS, Area, AreaKind, Site
from ehs_core.sites.schemas import AreaCreateSchema, AreaUpdateSchema, SiteCreateSchema, SiteUpdateSchema
from ehs_core.sites.zones import zone_choices
from ehs_core.ui.forms import BOOL, OPTIONAL_INT, OPTIONAL_TEXT, TEXT, errors_of, json_values

SITE = r"/admin/sites/{id:\d{1,9}}"
SITE_FORM = {"name": TEXT, "address": OPTIONAL_TEXT, "timezone": OPTIONAL_TEXT,
             "streetAddress": OPTIONAL_TEXT, "city": OPTIONAL_TEXT, "state": OPTIONAL_TEXT,
             "zip": OPTIONAL_TEXT, "naicsCode": OPTIONAL_TEXT, "industryDescription": OPTIONAL_TEXT,
             "ein": OPTIONAL_TEXT, "establishmentType": OPTIONAL_INT}


def area_tree(areas: list[Area]) -> list[dict[str, Any]]:
    """Areas as nested {area, children}, each level by name."""
    children: dict[int | None, list[Area]] = defaultdict(list)
    for area in sorted(areas, key=lambda a: (a.name.lower(), a.id)):
        children[area.parent_id].append(area)

    def branch(parent_id: int | None) -> list[dict[str, Any]]:
        return [{"area": area, "children": branch(area.id)} for area in children[parent_id]]

    return branch(None)


def _site(request: Request) -> Site:
    try:
        return services.get_site(request, int(request.matchdict["id"]))
    except NotFound:
        raise HTTPNotFound() from None


def site_list(request: Request, errors: dict[str, str] | None = None,
              values: dict[str, Any] | None = None) -> dict[str, Any]:
    found = services.list_sites(request, include_archived=True)
    return {"zones": zone_choices(),
            "sites": [{"site": site, "areas": len([a for a in areas if not a.archived])}
                      for site, areas in found],
            "errors": errors or {}, "values": values or {}}


def create_site(request: Request) -> Any:
    values = json_values(request.POST, {"name": TEXT, "address": OPTIONAL_TEXT, "timezone": OPTIONAL_TEXT})
    try:
        site = services.create_site(request, SiteCreateSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return site_list(request, errors_of(exc), dict(request.POST.items()))
    return HTTPFound(request.route_path("page.site", id=site.id, _query={"notice": "saved"}))


def site_page(request: Request, errors: dict[str, str] | None = None,
              values: dict[str, Any] | None = None, site: Site | None = None) -> dict[str, Any]:
    site = site or _site(request)
    areas = services.site_areas(request, site)
    current = {"name": site.name, "address": site.address, "timezone": site.timezone,
               **{name: getattr(site, attr) for name, attr in ESTABLISHMENT_FIELDS.items()}}
    return {"site": site, "zones": zone_choices(), "tree": area_tree(areas),
            "parents": [a for a in areas if not a.archived],
            "kinds": list(AreaKind), "errors": errors or {}, "values": values or current}


def show_site(request: Request) -> dict[str, Any]:
    return site_page(request)


def update_site(request: Request) -> Any:
    """The edit form, or archive/restore from its own button."""
    site = _site(request)
    spec = {"archived": BOOL} if "archived" in request.POST else SITE_FORM
    try:
        services.update_site(request, site, SiteUpdateSchema().deserialize(json_values(request.POST, spec)))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return site_page(request, errors_of(exc), dict(request.POST.items()), site)
    return HTTPFound(request.route_path("page.site", id=site.id, _query={"notice": "saved"}))


def add_area(request: Request) -> Any:
    site = _site(request)
    values = json_values(request.POST, {"name": TEXT, "kind": TEXT, "parentId": OPTIONAL_INT})
    try:
        area = services.create_area(request, site, AreaCreateSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        found = {("area-" + k if k != "_" else "area-name"): v for k, v in errors_of(exc).items()}
        return site_page(request, found, None, site)
    return HTTPFound(request.route_path("page.site", id=site.id, _query={"notice": "saved"},
                                        _anchor=f"area-{area.id}"))


def change_area(request: Request) -> Any:
    """Rename, or archive/restore from its own button."""
    try:
        area = services.get_area(request, int(request.matchdict["id"]))
    except NotFound:
        raise HTTPNotFound() from None
    spec = {"archived": BOOL} if "archived" in request.POST else {"name": TEXT}
    try:
        services.update_area(request, area, AreaUpdateSchema().deserialize(json_values(request.POST, spec)))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        message = "; ".join(errors_of(exc).values())
        return site_page(request, {f"area-{area.id}": message}, None,
                         services.get_site(request, area.site_id))
    return HTTPFound(request.route_path("page.site", id=area.site_id, _query={"notice": "saved"},
                                        _anchor=f"area-{area.id}"))


def has_sites(request: Request) -> bool:
    """The first hour's step: the organization has a site."""
    found = request.dbsession.execute(select(Site.id).where(Site.archived.is_(False)).limit(1)).first()
    return found is not None


def includeme(config: Configurator) -> None:
    config.add_first_step("sites", "Add your sites and their areas", "page.sites", has_sites, order=10)
    config.add_route("page.sites", "/admin/sites")
    config.add_route("page.site", SITE)
    config.add_route("page.site_areas", SITE + "/areas")
    config.add_route("page.area", r"/admin/areas/{id:\d{1,9}}")
    view = config.add_view
    manage = Permission.manage_sites
    view(site_list, route_name="page.sites", request_method="GET",
         renderer="ehs_core:templates/sites/list.html", permission=manage)
    view(create_site, route_name="page.sites", request_method="POST",
         renderer="ehs_core:templates/sites/list.html", permission=manage)
    view(show_site, route_name="page.site", request_method="GET",
         renderer="ehs_core:templates/sites/site.html", permission=manage)
    view(update_site, route_name="page.site", request_method="POST",
         renderer="ehs_core:templates/sites/site.html", permission=manage)
    view(add_area, route_name="page.site_areas", request_method="POST",
         renderer="ehs_core:templates/sites/site.html", permission=manage)
    view(change_area, route_name="page.area", request_method="POST",
         renderer="ehs_core:templates/sites/site.html", permission=manage)
    config.add_nav_item("sites", "Sites", "page.sites", permission=manage, order=82)
