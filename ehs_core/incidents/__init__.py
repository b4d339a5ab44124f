"""Incident reports: filing, listing, detail, updates, comments, export."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.incidents.extensions import BoundFilter
from ehs_core.incidents.models import Incident
from ehs_core.incidents.schemas import (
    AREA_QUERY,
    DATE_QUERY,
    SEVERITY_QUERY,
    SITE_QUERY,
    STATUS_QUERY,
    TYPE_QUERY,
)
from ehs_core.sites.zones import server_zone

INCIDENT = r"/api/incidents/{number:\d{1,9}}"
FACTORY = "ehs_core.incidents.resources.incident_factory"
# The detail's route: on a safe request the incident and its sections in one statement.
DETAIL_FACTORY = "ehs_core.incidents.resources.detail_factory"


def _column_filter(column: Any) -> BoundFilter:
    return BoundFilter(column.in_)


def _day_start(request: Request, day: dt.date) -> dt.datetime:
    """Midnight of a calendar day in the server's zone (TZ), as periods are
    read elsewhere (the analytics periods and due dates)."""
    return dt.datetime.combine(day, dt.time(), server_zone(request.registry))


# From the start of that day; until the end of that day, inclusive.
_occurred_from = BoundFilter(lambda values: Incident.occurred_at >= values[0],
                             lambda day, request: [_day_start(request, day)])
_occurred_to = BoundFilter(lambda values: Incident.occurred_at < values[0],
                           lambda day, request: [_day_start(request, day + dt.timedelta(days=1))])


def includeme(config: Configurator) -> None:
    config.include(".extensions")
    config.add_request_method("ehs_core.incidents.resources.incident_contexts", "incident_contexts",
                              reify=True)
    config.add_route("incidents.export", "/api/incidents/export")
    config.add_route("incidents", "/api/incidents")
    config.add_route("incident", INCIDENT, factory=DETAIL_FACTORY)
    config.add_route("incident.comments", INCIDENT + "/comments", factory=FACTORY)
    config.add_route("incident.timeline", INCIDENT + "/timeline", factory=FACTORY)
    # The core's own filters, through the same directive plugins use.
    config.add_incident_filter("type", TYPE_QUERY, _column_filter(Incident.type))
    config.add_incident_filter("severity", SEVERITY_QUERY, _column_filter(Incident.severity))
    config.add_incident_filter("status", STATUS_QUERY, _column_filter(Incident.status))
    config.add_incident_filter("siteId", SITE_QUERY, _column_filter(Incident.site_id))
    config.add_incident_filter("areaId", AREA_QUERY, _column_filter(Incident.area_id))
    config.add_incident_filter("from", DATE_QUERY, _occurred_from)
    config.add_incident_filter("to", DATE_QUERY, _occurred_to)
    config.add_mail_template("incident_reported", "ehs_core.mail:templates/incident_reported.txt")
    config.scan(".views")
    config.scan(".export")
    config.scan(".notices")
    config.scan(".numbering")  # the counter of a new organization
    config.include(".pages")  # /incidents/<number> and its forms
    config.include(".list_pages")  # /incidents
    config.include(".report_pages")  # /incidents/new
    config.include(".home")  # /: what waits for the person, and the cards plugins add
