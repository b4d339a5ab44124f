"""What the kiosk adds to incidents: `channel` and `kiosk { id, name }`."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request
from sqlalchemy import ColumnElement, select

from ehs_core.incidents.extensions import Reporter
from ehs_core.incidents.models import Incident
from ehs_core.rowsjson import decoder, json_rows
from ehs_plugins.kiosk.models import KioskLink, KioskReport

_ = TranslationStringFactory("ehs_kiosk")
THROUGH = _("the reporting link “${name}”")


class LinkRow(NamedTuple):
    id: int
    name: str
    reporter_name: str | None


_decode = decoder(LinkRow)


@functools.cache
def link_column() -> ColumnElement[Any]:
    """The reporting link an incident was filed through (none for the web),
    read with the incident: a column section of both `channel` and `kiosk`."""
    return (select(json_rows(KioskLink.id, KioskLink.name, KioskReport.reporter_name))
            .select_from(KioskReport).join(KioskLink, KioskLink.id == KioskReport.kiosk_id)
            .where(KioskReport.incident_id == Incident.id).scalar_subquery())


def channel_section(request: Request, incident: Incident, value: Any) -> str:
    return "kiosk" if _decode(value) else "web"


def kiosk_section(request: Request, incident: Incident, value: Any) -> dict[str, Any] | None:
    for link in _decode(value):
        return {"id": link.id, "name": link.name, "reporterName": link.reporter_name}
    return None


def link_reporter(request: Request, value: dict[str, Any] | None) -> Reporter | None:
    """Who filed a report through a link, as the incident page, its
    history and the export show them (`add_reporter_source`, issue #36
    item 5): the name typed on the link's form (None: anonymous) and the
    link's name."""
    if not value:
        return None
    through = request.localizer.translate(_(THROUGH, mapping={"name": value["name"]}))
    return Reporter(value.get("reporterName") or None, through)
