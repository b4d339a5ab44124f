from __future__ import annotations

from collections import defaultdict

from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.errors import APIError, invalid
from ehs_core.security import Permission
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


def _site_areas(request: Request, site: Site) -> list[Area]:
    return list(request.dbsession.execute(
        select(Area).where(Area.site_id == site.id).order_by(Area.id)).scalars())


def _get(request: Request, model: type, key: str = "id"):
    item = request.dbsession.get(model, int(request.matchdict[key]))
    if item is None:
        raise APIError(404, "Not found")
    return item


@view_config(route_name="sites", request_method="GET", renderer="json",
             permission=Permission.signed_in, query=SiteListQuery)
def list_sites(request: Request) -> list[dict]:
    query = request.validated_query
    sites_q = select(Site).order_by(Site.name, Site.id)
    areas_q = select(Area).order_by(Area.name, Area.id)
    if not query["includeArchived"]:
        sites_q = sites_q.where(Site.archived.is_(False))
        areas_q = areas_q.where(Area.archived.is_(False))
    areas = defaultdict(list)
    for area in request.dbsession.execute(areas_q).scalars():
        areas[area.site_id].append(area)
    return [site_json(site, areas[site.id]) for site in request.dbsession.execute(sites_q).scalars()]


@view_config(route_name="sites", request_method="POST", renderer="json",
             permission=Permission.manage_sites, body=SiteCreateSchema,
             responses=(201,))
def create_site(request: Request) -> dict:
    data = request.validated
    site = Site(organization_id=request.identity.user.organization_id, name=data["name"],
                address=data.get("address"), timezone=data.get("timezone"), archived=False)
    request.dbsession.add(site)
    request.dbsession.flush()
    request.response.status = 201
    return site_json(site, [])


@view_config(route_name="site", request_method="PATCH", renderer="json",
             permission=Permission.manage_sites, body=SiteUpdateSchema)
def update_site(request: Request) -> dict:
    data = request.validated
    site = _get(request, Site)
    attrs = {"name": "name", "address": "address", "timezone": "timezone",
             "archived": "archived", **ESTABLISHMENT_FIELDS}
    for key, value in data.items():
        if key == "state" and value is not None:
            value = value.upper()
        setattr(site, attrs[key], value)
    return site_json(site, _site_areas(request, site))


@view_config(route_name="site.areas", request_method="POST", renderer="json",
             permission=Permission.manage_sites, body=AreaCreateSchema,
             responses=(201,))
def create_area(request: Request) -> dict:
    data = request.validated
    site = _get(request, Site)
    parent_id = data.get("parentId")
    if parent_id is not None:
        parent = request.dbsession.get(Area, parent_id)
        if parent is None or parent.site_id != site.id:
            raise invalid("parentId", "The parent area must belong to the same site")
        if parent.archived:
            raise invalid("parentId", "The parent area is archived")
    area = Area(site_id=site.id, name=data["name"], kind=data.get("kind", "area"),
                parent_id=parent_id, archived=False)
    request.dbsession.add(area)
    request.dbsession.flush()
    request.response.status = 201
    return area_json(area)


@view_config(route_name="area", request_method="PATCH", renderer="json",
             permission=Permission.manage_sites, body=AreaUpdateSchema)
def update_area(request: Request) -> dict:
    data = request.validated
    area = _get(request, Area)
    for key, value in data.items():
        setattr(area, key, value)
    return area_json(area)
