"""The follow-up as pages: the reporter's page at /f/<code> (no sign-in: the
code is the key; server-rendered, works without JavaScript, not indexed),
and the thread as a panel of the incident page for the team (supervisor
and above), with a reply form that htmx swaps in place. Each adapts
`services` with the API's schema."""

from __future__ import annotations

import functools
import io
from typing import Any

import colander
import segno
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPSeeOther
from pyramid.renderers import render_to_response
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED
from sqlalchemy import ColumnElement, func, select

from ehs_core.errors import DomainError, TooMany
from ehs_core.followup import services
from ehs_core.followup.models import FollowUpCode
from ehs_core.followup.schemas import MessageSchema
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import IncidentContext
from ehs_core.security import Permission
from ehs_core.sites.services import site_timezone
from ehs_core.ui.directives import panel_read
from ehs_core.ui.forms import TEXT, errors_of, json_values

TEMPLATES = "ehs_core:templates/followup/"
PANEL = "follow_up"
# Not for search engines; the address is the key, so no other site gets it
# (the layout's same-origin referrer policy), and nothing is cached.
REPORTER_HEADERS = {"X-Robots-Tag": "noindex, nofollow"}


def _reporter_page(request: Request, template: str, values: dict[str, Any], status: int = 200,
                   headers: dict[str, str] | None = None) -> Response:
    response = render_to_response(TEMPLATES + template, values, request=request)
    response.status = status
    response.headers.update(REPORTER_HEADERS)
    response.headers.update(headers or {})
    return response


def _refused(request: Request, exc: DomainError) -> Response:
    """A wrong, ended or throttled code: a page saying which, with its
    status (answered, not raised, so a wrong code's count commits)."""
    kind = ("throttled" if isinstance(exc, TooMany)
            else "ended" if isinstance(exc, services.Ended) else "wrong")
    return _reporter_page(request, "refused.html", {"kind": kind}, exc.status, exc.headers)


def _thread_values(request: Request, incident: Any, code: str) -> dict[str, Any]:
    return {"reference": incident.reference, "title": incident.title, "status": incident.status,
            "messages": services.thread(request, incident.id),
            "zone": site_timezone(request, incident.site_id),
            "action": request.route_path("page.follow_up", code=code), "errors": {}, "values": {},
            "sent": request.GET.get("sent") == "1"}


def reporter_page(request: Request) -> Response:
    code = request.matchdict["code"]
    try:
        incident = services.incident_for_code(request, code)
    except DomainError as exc:
        return _refused(request, exc)
    return _reporter_page(request, "reporter.html", _thread_values(request, incident, code))


def reporter_answer(request: Request) -> Response:
    code = request.matchdict["code"]
    try:
        incident = services.incident_for_code(request, code)
    except DomainError as exc:
        return _refused(request, exc)
    try:
        data = MessageSchema().deserialize(json_values(request.POST, {"body": TEXT}))
        services.answer_team(request, incident, data["body"])
    except (colander.Invalid, DomainError) as exc:
        values = _thread_values(request, incident, code) | {
            "errors": errors_of(exc), "values": {"body": request.POST.get("body", "")}, "sent": False}
        return _reporter_page(request, "reporter.html", values, 400)
    return HTTPSeeOther(request.route_path("page.follow_up", code=code, _query={"sent": "1"}),
                        headers=REPORTER_HEADERS)


def qr_svg(request: Request) -> Response:
    """The reporter's page address as a QR code (segno), so a reporter on a
    shared tablet takes the code away on their own phone. Checked like the
    page (a wrong code counts); nothing is cached."""
    code = request.matchdict["code"]
    try:
        services.incident_for_code(request, code)
    except DomainError as exc:
        response = Response(status=exc.status, content_type="text/plain", body=b"")
        response.headers.update(exc.headers)
        return response
    out = io.BytesIO()
    qr = segno.make(services.follow_up_url(request, code), error="m", micro=False)
    qr.save(out, kind="svg", scale=6, border=4)
    response = Response(out.getvalue(), content_type="image/svg+xml")
    response.headers.update({"Cache-Control": "no-store", **REPORTER_HEADERS})
    return response


# --- the team's panel ------------------------------------------------------------------------


@functools.cache
def has_code_column() -> ColumnElement[Any]:
    """Whether the incident has a follow-up code (1 or 0), read with the
    incident page's one statement: the page of a report with a name (most
    reports) sends nothing more for this panel."""
    return (select(func.count()).where(FollowUpCode.incident_id == Incident.id)
            .correlate(Incident).scalar_subquery())


def panel_values(request: Request, context: IncidentContext) -> dict[str, Any] | None:
    """The thread on a report filed without a name; nothing on the others."""
    incident = context.incident
    read, has_code = panel_read(context, PANEL)
    if not (has_code if read else services.has_follow_up(request, incident.id)):
        return None
    found = services.team_thread(request, incident)
    zone = site_timezone(request, incident.site_id)
    form = getattr(request, "follow_up_form", None) or {}
    return {"messages": found.messages, "names": found.names, "ended": found.ended, "zone": zone,
            "action": request.route_path("page.incident_follow_up", number=incident.number),
            "errors": form.get("errors", {}), "body": form.get("body", ""), "announce": form.get("announce")}


def team_write(context: IncidentContext, request: Request) -> Any:
    htmx = request.headers.get("HX-Request") == "true"
    errors: dict[str, str] = {}
    try:
        data = MessageSchema().deserialize(json_values(request.POST, {"body": TEXT}))
        services.write_to_reporter(request, context.incident, data["body"])
    except (colander.Invalid, DomainError) as exc:
        errors = errors_of(exc)
        errors = {"body": errors.get("body") or "; ".join(errors.values())}
        request.response.status = 200 if htmx else getattr(exc, "status", 400)
    request.follow_up_form = {"errors": errors, "body": request.POST.get("body", "") if errors else "",
                              "announce": None if errors else request.localizer.translate(
                                  "Your message to the reporter was sent.")}
    if htmx:
        request.override_renderer = TEMPLATES + "panel.html"
        return {"panel": {"name": PANEL, "vars": panel_values(request, context)}}
    if errors:
        return request.incident_page_values(context)
    return HTTPSeeOther(request.route_path("page.incident", number=context.incident.number,
                                           _query={"notice": "saved"}, _anchor="panel-" + PANEL))


def includeme(config: Configurator) -> None:
    from ehs_core.incidents import FACTORY
    from ehs_core.incidents.pages import PAGE

    config.add_route("page.follow_up", "/f/{code}")
    config.add_route("page.follow_up_qr", "/f/{code}/qr.svg")
    config.add_route("page.incident_follow_up", PAGE + "/follow-up", factory=FACTORY)
    config.add_view(reporter_page, route_name="page.follow_up", request_method="GET",
                    permission=NO_PERMISSION_REQUIRED)
    config.add_view(reporter_answer, route_name="page.follow_up", request_method="POST",
                    permission=NO_PERMISSION_REQUIRED)
    config.add_view(qr_svg, route_name="page.follow_up_qr", request_method="GET",
                    permission=NO_PERMISSION_REQUIRED)
    config.add_view(team_write, route_name="page.incident_follow_up", request_method="POST",
                    renderer="ehs_core:templates/incidents/detail.html", permission=Permission.follow_up)
    config.add_incident_panel(PANEL, TEMPLATES + "panel.html", panel_values, permission=Permission.follow_up,
                              order=900, read=has_code_column)
