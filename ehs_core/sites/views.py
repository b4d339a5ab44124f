"""The JSON face of sites and areas; the operations live in `services`."""

from __future__ import annotations

from pyramid.request import Request
from pyramid.view import view_config

from ehs_core.security import Permission
from ehs_core.sites import services
from ehs_core.sites.models import ESTABLISHMENT_FIELDS, Area, Site
from ehs_core.sites.schemas import (
    AreaCreateSchema,
    AreaUpdateSchema,
    SiteCreateSchema,
    SiteListQuery,
    SiteUpdateSchema,
)


def area_json(area: Area) -> dict:
    return {"id": area.id, "siteId": area.site_id, "name": area.name, "kind": area.kind,
            "parentId": area.parent_id, "archived": area.archived}


def site_json(site: Site, areas: list[Area]) -> dict:
    body = {"id": site.id, "name": site.name, "address": site.address,
            "timezone": site.timezone, "archived": site.archived,
            "areas": [area_json(area) for area in areas]}
    for name, attr in ESTABLISHMENT_FIELDS.items():
        body[name] = getattr(site, attr)
    return body


@view_config(route_name="sites", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=SiteListQuery)
def list_sites(request: Request) -> list[dict]:
    found = services.list_sites(request, request.validated_query["includeArchived"])
    return [site_json(site, areas) for site, areas in found]


@view_config(route_name="sites", request_method="POST", renderer="json",
             permission=Permission.manage_sites, body=SiteCreateSchema,
             responses=(201,))
def create_site(request: Request) -> dict:
    site = services.create_site(request, request.validated)
    request.response.status = 201
    return site_json(site, [])


@view_config(route_name="site", request_method="PATCH", renderer="json",
             permission=Permission.manage_sites, body=SiteUpdateSchema)
def update_site(request: Request) -> dict:
    site = services.update_site(request, services.get_site(request, int(request.matchdict["id"])),
                                request.validated)
    return site_json(site, services.site_areas(request, site))


@view_config(route_name="site.areas", request_method="POST", renderer="json",
             permission=Permission.manage_sites, body=AreaCreateSchema,
             responses=(201,))
def create_area(request: Request) -> dict:
    site = services.get_site(request, int(request.matchdict["id"]))
    area = services.create_area(request, site, request.validated)
    request.response.status = 201
    return area_json(area)


@view_config(route_name="area", request_method="PATCH", renderer="json",
             permission=Permission.manage_sites, body=AreaUpdateSchema)
def update_area(request: Request) -> dict:
    area = services.get_area(request, int(request.matchdict["id"]))
    return area_json(services.update_area(request, area, request.validated))
