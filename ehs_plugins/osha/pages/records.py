"""The records of a site and year: the 300 Log (privacy cases masked,
totals, the 180-day caps, the establishment's fields and what is missing),
the 300A summary with its certification, and the hours and employees grid.
Adapters over `log.load` / `log_json`, `checks`, `certification` and
`hours.save_hours`, the operations behind /api/osha."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.errors import DomainError
from ehs_core.sites.models import Site
from ehs_core.ui.forms import OPTIONAL_TEXT, errors_of, json_values
from ehs_core.users.models import Organization
from ehs_plugins.osha.cases import LoggedCase, LoggedIncident, missing_fields
from ehs_plugins.osha.certification import (
    certification_json,
    certification_of,
    certify,
    missing_certification,
)
from ehs_plugins.osha.hours import save_hours
from ehs_plugins.osha.log import (
    PAGE_COLUMNS,
    SiteYear,
    load,
    load_months,
    load_totals,
    log_row,
    missing_establishment_fields,
)
from ehs_plugins.osha.pages import ROOT, TEMPLATES, labels
from ehs_plugins.osha.recordability import MAX_DAYS
from ehs_plugins.osha.schemas import CertificationBody, HoursEntries
from ehs_plugins.osha.views import MANAGE

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
ESTABLISHMENT_LABELS = {"ein": "EIN", "streetAddress": "Street address", "city": "City", "state": "State",
                        "zip": "ZIP code", "naicsCode": "NAICS code"}
# Cases a page of the 300 Log shows (issue #34): a busy establishment's
# year is more than a person reads on one screen; the print-ready page and
# the PDF hold them all.
LOG_PAGE_SIZE = 100
CERTIFICATION_LABELS = {"executiveName": "Company executive's name", "executiveTitle": "Title",
                        "phone": "Phone", "certifiedOn": "Date certified"}


def record_year(today: dt.date) -> int:
    """The year a safety manager is most likely working on: last year's
    records until the 300A comes down on April 30 (1904.32(b)(6)), then this
    year's."""
    return today.year - 1 if today.month <= 4 else today.year


def company_name(request: Request) -> str:
    org = request.dbsession.get(Organization, request.identity.account.organization_id)
    return org.name if org else ""


def organization_sites(request: Request, include_archived: bool = False) -> list[Site]:
    query = select(Site).where(Site.organization_id == request.identity.account.organization_id)
    if not include_archived:
        query = query.where(Site.archived.is_(False))
    return list(request.dbsession.execute(query.order_by(Site.name, Site.id)).scalars())


class Choice:
    """The site and year a records page is about, from its query (the
    API's `LogQuery` rules; a missing or unknown value falls back to the
    first site and the record year, a site of another organization is 404)."""

    def __init__(self, request: Request, need_site: bool = True) -> None:
        self.sites = organization_sites(request, include_archived=True)
        self.active = [s for s in self.sites if not s.archived]
        raw_year = request.GET.get("year", "")
        today = dt.date.today()
        self.year = int(raw_year) if raw_year.isdigit() and 1970 <= int(raw_year) <= today.year + 1 \
            else record_year(today)
        self.years = list(range(today.year + 1, today.year - 6, -1))
        if self.year not in self.years:
            self.years.append(self.year)
        raw_site = request.GET.get("siteId", "")
        self.site: Site | None = None
        if raw_site.isdigit() and len(raw_site) <= 9:
            self.site = next((s for s in self.sites if s.id == int(raw_site)), None)
            if self.site is None and need_site:
                raise HTTPNotFound()
        elif need_site:
            self.site = self.active[0] if self.active else None

    def query(self, **extra: Any) -> dict[str, Any]:
        values = {"year": self.year, **extra}
        if self.site is not None:
            values["siteId"] = self.site.id
        return values

    def values(self) -> dict[str, Any]:
        return {"sites": self.active if self.site is None or not self.site.archived
                else [*self.active, self.site], "site": self.site, "year": self.year, "years": self.years,
                "query": self.query()}


def establishment(site: Site) -> list[tuple[str, str | None]]:
    return [("Establishment name", site.name), ("Street address", site.street_address),
            ("City", site.city), ("State", site.state), ("ZIP code", site.zip),
            ("Industry description", site.industry_description), ("NAICS code", site.naics_code),
            ("EIN", site.ein)]


def log_rows(request: Request, item: SiteYear,
             cases: list[tuple[LoggedCase, LoggedIncident]] | None = None) -> list[dict[str, Any]]:
    """The log's rows (`log.log_row`) with what the page adds: the
    incident's number (for the link), the case's missing fields and whether
    the 180-day cap binds; of `cases` (a page of them), else of every case."""
    rows = []
    for case, incident in item.cases if cases is None else cases:
        row = log_row(item, case, incident)
        rows.append({**row, "incidentNumber": incident.number, "missing": missing_fields(case),
                     "capped": row["daysAway"] + row["daysRestricted"] >= MAX_DAYS})
    return rows


def page_number(request: Request, pages: int) -> int:
    """The page asked for (`page`), within 1..`pages`."""
    raw = request.GET.get("page", "")
    return min(int(raw), pages) if raw.isdigit() and 0 < len(raw) <= 6 and int(raw) else 1


def log_values(request: Request, choice: Choice) -> dict[str, Any]:
    """The 300 Log page: one page of the site-year's cases (`LOG_PAGE_SIZE`,
    in the log's order), the totals of all of them and every case still
    missing fields. The print-ready page and the PDF hold the whole log."""
    values: dict[str, Any] = {**choice.values(), **labels(request), "item": None}
    if choice.site is None:
        return values
    item = load(request.dbsession, request.registry, [choice.site], choice.year, PAGE_COLUMNS)[0]
    pages = max(1, -(-len(item.cases) // LOG_PAGE_SIZE))
    page = page_number(request, pages)
    first = (page - 1) * LOG_PAGE_SIZE
    shown = item.cases[first:first + LOG_PAGE_SIZE]
    cert = certification_of(request.dbsession, choice.site, choice.year)
    months_missing = [MONTHS[m - 1] for m in range(1, 13)
                      if m not in item.months or item.months[m].hours is None]
    incomplete = [{"caseId": case.id, "caseNumber": case.case_number, "missing": missing}
                  for case, _ in item.cases if (missing := missing_fields(case))]
    return {**values, "item": item, "totals": item.totals, "rows": log_rows(request, item, shown),
            "page": page, "pages": pages, "cases_count": len(item.cases), "incomplete": incomplete,
            "first_shown": first + 1, "last_shown": first + len(shown),
            "establishment": establishment(choice.site),
            "missing_establishment": [ESTABLISHMENT_LABELS[n]
                                      for n in missing_establishment_fields(choice.site)],
            "months_missing": months_missing,
            "missing_certification": [CERTIFICATION_LABELS[n] for n in missing_certification(cert)],
            "zone": choice.site.timezone, "max_days": MAX_DAYS, "type_columns": TYPE_COLUMNS}


def log_page(request: Request) -> dict[str, Any]:
    return log_values(request, Choice(request))


# --- 300A ------------------------------------------------------------------


def summary_values(request: Request, choice: Choice) -> dict[str, Any]:
    """What the 300A page shows: the totals, hours and employees, the
    months missing and the certification (`log.load_totals`: not the log's
    rows nor the ITA checks, which the page does not show)."""
    values: dict[str, Any] = {**choice.values(), **labels(request), "item": None}
    if choice.site is None:
        return values
    item = load_totals(request.dbsession, request.registry, choice.site, choice.year)
    cert = certification_of(request.dbsession, choice.site, choice.year)
    months_missing = [MONTHS[m - 1] for m in range(1, 13)
                      if m not in item.months or item.months[m].hours is None]
    data = {"totals": dict(item.totals), "totalHoursWorked": item.total_hours_whole,
            "annualAverageEmployees": item.annual_average_employees}
    return {**values, "item": item, "data": data, "months_missing": months_missing,
            "certification": certification_json(cert), "type_columns": TYPE_COLUMNS}


def summary_page(request: Request) -> dict[str, Any]:
    choice = Choice(request)
    values = summary_values(request, choice)
    cert = values.get("certification") or certification_json(None)
    return {**values, "form": cert, "form_errors": {}}


TYPE_COLUMNS = [("M1", "injury"), ("M2", "skin_disorder"), ("M3", "respiratory_condition"),
                ("M4", "poisoning"), ("M5", "hearing_loss"), ("M6", "other_illness")]


def save_certification(request: Request) -> Any:
    choice = Choice(request)
    if choice.site is None:
        raise HTTPNotFound()
    raw = json_values(request.POST, dict.fromkeys(CERTIFICATION_LABELS, OPTIONAL_TEXT))
    try:
        data = CertificationBody().deserialize(raw)
        certify(request.dbsession, choice.site, choice.year, data)
    except (colander.Invalid, DomainError) as exc:
        request.response.status = 400
        return {**summary_values(request, choice), "form": raw, "form_errors": errors_of(exc)}
    return HTTPFound(request.route_path("page.osha_summary", _query=choice.query(notice="saved"),
                                        _anchor="certification"))


# --- hours grid ------------------------------------------------------------


def _number(value: Decimal | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if value == value.to_integral() else str(value.normalize())


def cell(kind: str, site_id: int, month: int) -> str:
    return f"{kind}-{site_id}-{month}"


def hours_values(request: Request, choice: Choice, posted: dict[str, str] | None = None,
                 errors: dict[str, str] | None = None) -> dict[str, Any]:
    sites = choice.active
    items = load_months(request.dbsession, request.registry, sites, choice.year) if sites else []
    grid: dict[str, str] = {}
    for item in items:
        for month in range(1, 13):
            row = item.months.get(month)
            grid[cell("h", item.site.id, month)] = _number(row.hours if row else None)
            grid[cell("e", item.site.id, month)] = _number(row.average_employees if row else None)
    if posted:
        grid.update(posted)
    totals = [{"site": item.site, "hours": item.total_hours_whole,
               "average": item.annual_average_employees, "peak": item.peak_employees} for item in items]
    return {**choice.values(), "items": items, "grid": grid, "months": MONTHS, "cell": cell,
            "totals": totals, "errors": errors or {}}


def _json_number(raw: str) -> Any:
    """A typed number as JSON would carry it (the schema judges it)."""
    text = raw.strip().replace(",", "")
    if text == "":
        return None
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return raw


def hours_page(request: Request) -> dict[str, Any]:
    return hours_values(request, Choice(request, need_site=False))


def save_hours_grid(request: Request) -> Any:
    """Every cell of the grid, validated site by site with the API's
    `HoursEntries`, saved only when all are right."""
    choice = Choice(request, need_site=False)
    posted = {key: value for key, value in request.POST.items()
              if isinstance(value, str) and key[:2] in ("h-", "e-")}
    errors: dict[str, str] = {}
    valid: list[tuple[Site, list[dict[str, Any]]]] = []
    for site in choice.active:
        entries = []
        for month in range(1, 13):
            h, e = cell("h", site.id, month), cell("e", site.id, month)
            if h in posted or e in posted:
                entries.append({"month": month, "hours": _json_number(posted.get(h, "")),
                                "averageEmployees": _json_number(posted.get(e, ""))})
        try:
            valid.append((site, HoursEntries().deserialize(entries)))
        except colander.Invalid as exc:
            for path, message in exc.asdict().items():
                index, _, name = path.partition(".")
                month = entries[int(index)]["month"] if index.isdigit() else 1
                kind = "e" if name == "averageEmployees" else "h"
                errors[cell(kind, site.id, month)] = f"{site.name}, {MONTHS[month - 1]}: {message}"
    htmx = request.headers.get("HX-Request") == "true"
    if errors:
        request.response.status = 200 if htmx else 400
        if htmx:
            request.override_renderer = TEMPLATES + "hours_totals.html"
        return hours_values(request, choice, posted, errors)
    for site, entries in valid:
        save_hours(request.dbsession, site, choice.year, entries)
    if htmx:
        request.override_renderer = TEMPLATES + "hours_totals.html"
        return {**hours_values(request, choice), "saved": True}
    return HTTPFound(request.route_path("page.osha_hours", _query=choice.query(notice="saved")))


def includeme(config: Configurator) -> None:
    config.add_route("page.osha_log", "/osha/log", factory=ROOT)
    config.add_route("page.osha_summary", "/osha/summary", factory=ROOT)
    config.add_route("page.osha_hours", "/osha/hours", factory=ROOT)
    view = config.add_view
    view(log_page, route_name="page.osha_log", request_method="GET", renderer=TEMPLATES + "log.html",
         permission=MANAGE)
    view(summary_page, route_name="page.osha_summary", request_method="GET",
         renderer=TEMPLATES + "summary.html", permission=MANAGE)
    view(save_certification, route_name="page.osha_summary", request_method="POST",
         renderer=TEMPLATES + "summary.html", permission=MANAGE)
    view(hours_page, route_name="page.osha_hours", request_method="GET", renderer=TEMPLATES + "hours.html",
         permission=MANAGE)
    view(save_hours_grid, route_name="page.osha_hours", request_method="POST",
         renderer=TEMPLATES + "hours.html", permission=MANAGE)
    config.add_nav_item("osha_records", "Injury records", "page.osha_log", permission=MANAGE,
                        context=ROOT, order=60)

