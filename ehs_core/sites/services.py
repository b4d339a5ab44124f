"""Sites and their areas (convention as in `incidents.filing`: the request is
the unit of work, data is validated, refusals are domain errors)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.errors import Invalid, NotFound
from ehs_core.sites.models import ESTABLISHMENT_FIELDS, Area, Site

# JSON field -> column of a site
SITE_FIELDS = {"name": "name", "address": "address", "timezone": "timezone", "archived": "archived",
               **ESTABLISHMENT_FIELDS}


def get_site(request: Request, site_id: int) -> Site:
    site = request.dbsession.get(Site, site_id)
    if site is None:
        raise NotFound()
    return site


def get_area(request: Request, area_id: int) -> Area:
    area = request.dbsession.get(Area, area_id)
    if area is None:
        raise NotFound()
    return area


def site_areas(request: Request, site: Site) -> list[Area]:
    return list(request.dbsession.execute(
        select(Area).where(Area.site_id == site.id).order_by(Area.id)).scalars())


def list_sites(request: Request, include_archived: bool) -> list[tuple[Site, list[Area]]]:
    """Every site with its areas, by name; archived ones only when asked."""
    sites_q = select(Site).order_by(Site.name, Site.id)
    areas_q = select(Area).order_by(Area.name, Area.id)
    if not include_archived:
        sites_q = sites_q.where(Site.archived.is_(False))
        areas_q = areas_q.where(Area.archived.is_(False))
    areas: dict[int, list[Area]] = defaultdict(list)
    for area in request.dbsession.execute(areas_q).scalars():
        areas[area.site_id].append(area)
    return [(site, areas[site.id]) for site in request.dbsession.execute(sites_q).scalars()]


def create_site(request: Request, data: dict[str, Any]) -> Site:
    site = Site(organization_id=request.identity.user.organization_id, name=data["name"],
                address=data.get("address"), timezone=data.get("timezone"), archived=False)
    request.dbsession.add(site)
    request.dbsession.flush()
    return site


def update_site(request: Request, site: Site, data: dict[str, Any]) -> Site:
    """Change a site's fields (a US state code is kept upper case)."""
    for key, value in data.items():
        if key == "state" and value is not None:
            value = value.upper()
        setattr(site, SITE_FIELDS[key], value)
    return site


def create_area(request: Request, site: Site, data: dict[str, Any]) -> Area:
    """An area of a site, under a parent area of the same site if given."""
    parent_id = data.get("parentId")
    if parent_id is not None:
        parent = request.dbsession.get(Area, parent_id)
        if parent is None or parent.site_id != site.id:
            raise Invalid("parentId", "The parent area must belong to the same site")
        if parent.archived:
            raise Invalid("parentId", "The parent area is archived")
    area = Area(site_id=site.id, name=data["name"], kind=data.get("kind", "area"),
                parent_id=parent_id, archived=False)
    request.dbsession.add(area)
    request.dbsession.flush()
    return area


def update_area(request: Request, area: Area, data: dict[str, Any]) -> Area:
    for key, value in data.items():
        setattr(area, key, value)
    return area
