"""The kiosk identity: a valid, unrevoked link token in `X-Kiosk-Token`.

Its only principal is `kiosk` (plus `kiosk:<id>`), which nothing in the core
grants anything to; only the two kiosk endpoints, whose context is
`KioskRoot`, allow it. Browsers cannot send this header cross-site without
a CORS preflight, and the service grants none."""

from __future__ import annotations

from pyramid.authorization import Allow
from pyramid.request import Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from ehs_core.security import Identity
from ehs_plugins.kiosk.models import KioskLink

HEADER = "X-Kiosk-Token"
FILE_REPORT = "kiosk.file_report"


def active_link(dbsession: Session, token: str | None) -> KioskLink | None:
    """The unrevoked link with this token (from the header or the page's URL)."""
    if not token or len(token) > 64:
        return None
    return dbsession.execute(
        select(KioskLink).where(KioskLink.token == token, KioskLink.revoked.is_(False))).scalar()


def kiosk_identity(request: Request) -> Identity | None:
    link = active_link(request.dbsession, request.headers.get(HEADER))
    if link is None:
        return None
    return Identity(kind="kiosk", id=link.id, principals=["kiosk", f"kiosk:{link.id}"],
                    extra={"link": link})


class KioskRoot:
    __acl__ = [(Allow, "kiosk", FILE_REPORT)]

    def __init__(self, request: Request) -> None:
        self.request = request
