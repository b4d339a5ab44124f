"""A plugin, written from docs/plugins.md, that declares two kinds of
obligation and opens them on incidents through its own route, as a
regulator's plugin would from its listeners:

- `test.federal`: a report to the authority, handled by safety managers;
- `test.notice`: a notice anyone who sees the incident handles.

`POST /api/test-obligations/{number}` `{kind, hours}` opens (or finds) the
kind's obligation on the incident, due `hours` after the incident occurred."""

from __future__ import annotations

import datetime as dt
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.obligations.services import incident_subject, open_obligation
from ehs_core.schemas import Int, Str, field
from ehs_core.security import Permission

ENTRY_POINT = f"{__name__}:includeme"
FEDERAL, NOTICE = "test.federal", "test.notice"


class OpenSchema(colander.MappingSchema):
    kind = field(Str())
    hours = field(Int())


def open_on_incident(context: Any, request: Request) -> dict[str, Any]:
    incident = context.incident
    data = request.validated
    obligation = open_obligation(request, data["kind"], subject=incident_subject(incident.id),
                                 incident=incident,
                                 due_at=incident.occurred_at + dt.timedelta(hours=data["hours"]))
    return {"id": obligation.id}


def includeme(config: Configurator) -> None:
    config.add_obligation_kind(FEDERAL, title="Report to the authority", handled_by="safety_manager",
                               fulfilled_by="By phone to the area office")
    config.add_obligation_kind(NOTICE, title="Notice to the crew", handled_by="reporter",
                               fulfilled_by="Posted on the board", remind_before=dt.timedelta(hours=1))
    config.add_route("test.obligations", r"/api/test-obligations/{number:\d{1,9}}",
                     factory="ehs_core.incidents.resources.incident_factory")
    config.add_view(open_on_incident, route_name="test.obligations", request_method="POST", renderer="json",
                    permission=Permission.view_incident, body=OpenSchema)


def twin_includeme(config: Configurator) -> None:
    """Another plugin claiming the same kind: start-up must refuse it."""
    config.add_obligation_kind(FEDERAL, title="Another report", handled_by="supervisor")
