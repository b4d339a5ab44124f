"""Hours, the 300 Log / 300A and the ITA files."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.errors import APIError
from ehs_core.sites.models import Site
from ehs_core.users.models import Organization
from ehs_plugins.osha import ita
from ehs_plugins.osha.certification import certification_json, certification_of, certify
from ehs_plugins.osha.checks import checks
from ehs_plugins.osha.coverage import coverage
from ehs_plugins.osha.hours import save_hours
from ehs_plugins.osha.log import (
    LOG_COLUMNS,
    active_site_names,
    active_sites,
    load,
    load_months,
    load_totals,
    log_json,
    months_json,
)
from ehs_plugins.osha.schemas import CertificationBody, HoursEntries, LogQuery, YearQuery
from ehs_plugins.osha.views import MANAGE


def get_site(request: Request, site_id: int) -> Site:
    site = request.dbsession.get(Site, site_id)
    if site is None:
        raise APIError(404, "Not found")
    return site


@view_config(route_name="osha.log", request_method="GET", renderer="json", permission=MANAGE, query=LogQuery,
             summary="The 300 Log and 300A of a site and year (dates and the year on the site's clock) and "
                     "the ITA checks of both files: {siteId, siteName, caseId, caseNumber, field, level, "
                     "message}, caseId and caseNumber null for the establishment and 300A file.")
def osha_log(request: Request) -> dict[str, Any]:
    query = request.validated_query
    site = get_site(request, int(query["siteId"]))
    item = load(request.dbsession, request.registry, [site], int(query["year"]), LOG_COLUMNS)[0]
    return {**log_json(item),
            "certification": certification_json(certification_of(request.dbsession, site, item.year)),
            "checks": checks(item, active_site_names(request), _company(request))}


@view_config(route_name="osha.site_hours", request_method="GET", renderer="json", permission=MANAGE,
             query=YearQuery)
def get_hours(request: Request) -> list[dict[str, Any]]:
    year = int(request.validated_query["year"])
    site = get_site(request, int(request.matchdict["id"]))
    return months_json(load_months(request.dbsession, request.registry, [site], year)[0])


@view_config(route_name="osha.site_hours", request_method="PUT", renderer="json", permission=MANAGE,
             query=YearQuery,
             body=HoursEntries)
def put_hours(request: Request) -> list[dict[str, Any]]:
    year = int(request.validated_query["year"])
    site = get_site(request, int(request.matchdict["id"]))
    save_hours(request.dbsession, site, year, request.validated)
    return months_json(load_months(request.dbsession, request.registry, [site], year)[0])


@view_config(route_name="osha.certification", request_method="GET", renderer="json", permission=MANAGE,
             query=YearQuery, summary="The 300A certification of a site and year (29 CFR 1904.32(b)(3)): "
                                      "{executiveName, executiveTitle, phone, certifiedOn, complete}.")
def get_certification(request: Request) -> dict[str, Any]:
    site = get_site(request, int(request.matchdict["id"]))
    return certification_json(certification_of(request.dbsession, site, int(request.validated_query["year"])))


@view_config(route_name="osha.certification", request_method="PUT", renderer="json", permission=MANAGE,
             query=YearQuery, body=CertificationBody,
             summary="Set the 300A certification of a site and year; a field left out is cleared.")
def put_certification(request: Request) -> dict[str, Any]:
    site = get_site(request, int(request.matchdict["id"]))
    row = certify(request.dbsession, site, int(request.validated_query["year"]), request.validated)
    return certification_json(row)


def csv_response(body: str, filename: str) -> Response:
    response = Response(body=body.encode("utf-8"), content_type="text/csv", charset="utf-8")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _company(request: Request) -> str:
    """The organization's name (ITA company_name): the caller's, which the
    signed-in identity carries (no statement), else the first one's."""
    organization = request.identity.extra.get("organization") if request.identity is not None else None
    if organization is not None:
        return organization["name"]
    org = request.dbsession.execute(select(Organization).order_by(Organization.id)).scalar()
    return org.name if org else ""


@view_config(route_name="osha.ita_summary", request_method="GET", permission=MANAGE, query=YearQuery,
             media="text/csv")
def ita_summary(request: Request) -> Response:
    year = int(request.validated_query["year"])
    company = _company(request)
    # The 300A file reads each site-year's totals and months only (`load_totals`).
    items = [load_totals(request.dbsession, request.registry, site, year)
             for site in active_sites(request.dbsession)]
    body = ita.to_csv(ita.SUMMARY_COLUMNS, (ita.summary_row(item, company) for item in items))
    return csv_response(body, f"ita-summary-{year}.csv")


@view_config(route_name="osha.ita_cases", request_method="GET", permission=MANAGE, query=YearQuery,
             media="text/csv")
def ita_cases(request: Request) -> Response:
    year = int(request.validated_query["year"])
    items = load(request.dbsession, request.registry, active_sites(request.dbsession), year, LOG_COLUMNS)
    rows = (row for item in items for row in ita.case_rows(item))
    return csv_response(ita.to_csv(ita.CASE_COLUMNS, rows), f"ita-cases-{year}.csv")


@view_config(route_name="osha.ita_coverage", request_method="GET", renderer="json", permission=MANAGE,
             query=YearQuery,
             summary="Who must file what with OSHA for a year's records (29 CFR 1904.41 as amended in 2023): "
                     "per active site {siteId, siteName, naicsCode, peakEmployees, requires, reason, dueBy}; "
                     "requires lists \"300A\" and \"300_301\" (empty when nothing is required), reason says "
                     "why citing Appendix A or B to Subpart E, dueBy is March 2 of the next year (null when "
                     "nothing is required).")
def ita_coverage(request: Request) -> list[dict[str, Any]]:
    year = int(request.validated_query["year"])
    return coverage(load_months(request.dbsession, request.registry, active_sites(request.dbsession), year))
