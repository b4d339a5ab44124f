"""Sites and their areas as pickers and filters need them."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.sites.models import Area, Site


def active_sites(request: Request, include_archived: bool = False) -> list[dict[str, Any]]:
    """Sites with their areas, by name ({id, name, timezone, archived,
    areas: [{id, name, parentId}]}), loaded once per request."""
    key = "ehs.sites.all" if include_archived else "ehs.sites.active"
    cached = request.environ.get(key)
    if cached is not None:
        return cached
    sites_q = select(Site).order_by(Site.name, Site.id)
    areas_q = select(Area).order_by(Area.name, Area.id)
    if not include_archived:
        sites_q = sites_q.where(Site.archived.is_(False))
        areas_q = areas_q.where(Area.archived.is_(False))
    areas: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for area in request.dbsession.execute(areas_q).scalars():
        areas[area.site_id].append({"id": area.id, "name": area.name, "parentId": area.parent_id})
    sites = [{"id": s.id, "name": s.name, "timezone": s.timezone, "archived": s.archived,
              "areas": areas[s.id]} for s in request.dbsession.execute(sites_q).scalars()]
    request.environ[key] = sites
    return sites
