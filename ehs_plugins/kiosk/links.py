"""Reporting links, the operations behind both the API (`views.py`) and the
safety managers' screens (`pages.py`): list, create, rename, restrict to a
site, revoke. A link's token is a 256-bit random value (ASVS 5 7.2.3); the
link can only file reports, and revoking it stops it at once."""

from __future__ import annotations

import secrets
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.errors import APIError, invalid
from ehs_core.serialize import iso
from ehs_core.sites.models import Site
from ehs_plugins.kiosk.models import KioskLink


def link_json(link: KioskLink) -> dict[str, Any]:
    return {"id": link.id, "name": link.name, "siteId": link.site_id, "revoked": link.revoked,
            "token": link.token, "createdAt": iso(link.created_at)}


def check_site(request: Request, site_id: int | None) -> None:
    if site_id is not None:
        site = request.dbsession.get(Site, site_id)
        if site is None:
            raise invalid("siteId", "Unknown site")
        if site.archived:
            raise invalid("siteId", "This site is archived; a link cannot report on it")


def list_links(request: Request) -> list[KioskLink]:
    return list(request.dbsession.execute(select(KioskLink).order_by(KioskLink.id)).scalars())


def get_link(request: Request, link_id: int) -> KioskLink:
    link = request.dbsession.get(KioskLink, link_id)
    if link is None:
        raise APIError(404, "Not found")
    return link


def create_link(request: Request, data: dict[str, Any]) -> KioskLink:
    """`data` as LinkCreateSchema gives it."""
    check_site(request, data["siteId"])
    link = KioskLink(organization_id=request.identity.account.organization_id, name=data["name"],
                     site_id=data["siteId"], token=secrets.token_urlsafe(32), revoked=False)
    request.dbsession.add(link)
    request.dbsession.flush()
    return link


def update_link(request: Request, link_id: int, data: dict[str, Any]) -> KioskLink:
    """`data` as LinkUpdateSchema gives it (only the fields to change)."""
    link = get_link(request, link_id)
    if "siteId" in data:
        check_site(request, data["siteId"])
        link.site_id = data["siteId"]
    for key in ("name", "revoked"):
        if key in data:
            setattr(link, key, data[key])
    return link


def link_url(request: Request, link: KioskLink, area_id: int | None = None) -> str:
    """The address a poster's QR code holds: <public_url>/k/<token>, with
    the area to preselect when one is given."""
    url = f"{request.registry.settings['ehs.public_url']}/k/{link.token}"
    return f"{url}?area={area_id}" if area_id is not None else url
