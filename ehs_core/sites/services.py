"""Sites and their areas (convention as in `incidents.filing`: the request is
the unit of work, data is validated, refusals are domain errors)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core import audit, refdata
from ehs_core.errors import Invalid, NotFound
from ehs_core.events import SiteUpdated, actor, publish
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


def site_choices(request: Request, include_archived: bool) -> list[dict[str, Any]]:
    """Sites and their areas as pickers and filters show them ({id, name,
    timezone, archived, areas: [{id, name, parentId}]}, by name): every page
    with a site picker reads them, so each worker keeps them until a site or
    an area changes (`ehs_core.refdata`). Read only: the value is shared."""
    return refdata.cached(request, ("site_choices", include_archived),
                          lambda r: _site_choices(r, include_archived))


def site_index(request: Request) -> dict[str, dict[int, Any]]:
    """Every site and area by id, archived ones too: {"site": {id: site},
    "area": {id: area}} of `site_choices` (kept per worker likewise), for
    the names and zones shown beside incidents."""
    return refdata.cached(request, "site_index", _site_index)


def site_timezone(request: Request, site_id: int) -> str | None:
    """The IANA zone of a site (None: the server's), from `site_entry`."""
    site = site_entry(request, site_id)
    return site["timezone"] if site is not None else None


def site_entry(request: Request, site_id: int) -> dict[str, Any] | None:
    """A site's id, name, timezone and archived: from the reference data
    each worker keeps (`site_index`) for a signed-in caller, with no
    statement; for another caller (a kiosk link, a job: no version to key a
    cache by) from the session, loading the one site instead of all. Read only."""
    if refdata.reference_version(request) is not None:
        return site_index(request)["site"].get(site_id)
    site = request.dbsession.get(Site, site_id)
    return None if site is None else {"id": site.id, "name": site.name, "timezone": site.timezone,
                                      "archived": site.archived}


def area_entry(request: Request, area_id: int) -> dict[str, Any] | None:
    """An area's id, name, siteId and archived, as `site_entry`. Read only."""
    if refdata.reference_version(request) is not None:
        return site_index(request)["area"].get(area_id)
    area = request.dbsession.get(Area, area_id)
    return None if area is None else {"id": area.id, "name": area.name, "siteId": area.site_id,
                                      "archived": area.archived}


def _site_index(request: Request) -> dict[str, dict[int, Any]]:
    sites, areas = _sites_and_areas(request, include_archived=True)
    return {"site": {site["id"]: site for site in sites}, "area": areas}


def _site_choices(request: Request, include_archived: bool) -> list[dict[str, Any]]:
    return _sites_and_areas(request, include_archived)[0]


def _sites_and_areas(request: Request, include_archived: bool) -> tuple[list[dict[str, Any]],
                                                                        dict[int, dict[str, Any]]]:
    """The sites as `site_choices` gives them, and their areas by id with
    their site and whether archived (`area_entry`), from one statement."""
    stmt = (select(Site.id, Site.name, Site.timezone, Site.archived, Area.id, Area.name, Area.parent_id,
                   Area.archived)
            .outerjoin(Area, (Area.site_id == Site.id) if include_archived
                       else (Area.site_id == Site.id) & Area.archived.is_(False))
            .order_by(Site.name, Site.id, Area.name, Area.id))
    if not include_archived:
        stmt = stmt.where(Site.archived.is_(False))
    sites: dict[int, dict[str, Any]] = {}
    areas: dict[int, dict[str, Any]] = {}
    for (site_id, name, timezone, archived, area_id, area_name, parent_id,
         area_archived) in request.dbsession.execute(stmt):
        site = sites.setdefault(site_id, {"id": site_id, "name": name, "timezone": timezone,
                                          "archived": archived, "areas": []})
        if area_id is not None:
            area = {"id": area_id, "name": area_name, "parentId": parent_id}
            site["areas"].append(area)
            # Its own entry: those of the choices are shared with pickers' answers.
            areas[area_id] = area | {"siteId": site_id, "archived": area_archived}
    for site in sites.values():
        by_id = {area["id"]: area for area in site["areas"]}
        for area in site["areas"]:
            area["path"] = areas[area["id"]]["path"] = area_path(area, by_id)
        # Pickers list areas by their path, so sub-areas sit under their parent.
        site["areas"].sort(key=lambda area: (area["path"].casefold(), area["id"]))
    return list(sites.values()), areas


def area_path(area: dict[str, Any], by_id: dict[int, dict[str, Any]]) -> str:
    """An area named by the areas it is inside ("Warehouse / Yard"): two
    sub-areas of one name under different parents read apart."""
    names, seen = [area["name"]], {area["id"]}
    parent = by_id.get(area.get("parentId"))
    while parent is not None and parent["id"] not in seen:
        names.append(parent["name"])
        seen.add(parent["id"])
        parent = by_id.get(parent.get("parentId"))
    return " / ".join(reversed(names))


def create_site(request: Request, data: dict[str, Any]) -> Site:
    site = Site(organization_id=request.identity.account.organization_id, name=data["name"],
                address=data.get("address"), timezone=data.get("timezone"), archived=False)
    request.dbsession.add(site)
    request.dbsession.flush()
    return site


def update_site(request: Request, site: Site, data: dict[str, Any]) -> Site:
    """Change a site's fields (a US state code is kept upper case);
    publishes SiteUpdated when something changed."""
    before = {key: getattr(site, SITE_FIELDS[key]) for key in data}
    after = {}
    for key, value in data.items():
        if key == "state" and value is not None:
            value = value.upper()
        setattr(site, SITE_FIELDS[key], value)
        after[key] = value
    changes = audit.diff(before, after)
    if changes:
        publish(request, SiteUpdated(request, site=site, changes=changes, actor_id=actor(request)))
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
