"""Printable forms: the 300 Log (legal, landscape, columns A-M, page totals,
"Page n of m"), the 300A summary (letter, one page, signature lines, to post
from February 1 to April 30) and Form 301 (letter), each as a print-ready
page and as a PDF made by WeasyPrint from the very same template.

OSHA accepts equivalent forms (1904.29(b)(4)): these hold the same
information in the same order as OSHA's, laid out for our data, not a copy
of OSHA's PDF. WeasyPrint reads nothing from the network: the stylesheet is
handed to it as a file and every other URL is refused.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPNotFound
from pyramid.renderers import render
from pyramid.request import Request
from pyramid.response import Response

from ehs_core.sites.models import Site
from ehs_plugins.osha import services
from ehs_plugins.osha.cases import form_301_json
from ehs_plugins.osha.certification import certification_json, certification_of
from ehs_plugins.osha.log import load, log_json
from ehs_plugins.osha.pages import ROOT, labels
from ehs_plugins.osha.pages.records import Choice, company_name, log_rows
from ehs_plugins.osha.views import MANAGE

FORMS = "ehs_plugins.osha:templates/forms/"
# Rows on one sheet of the 300 Log (OSHA's own form has 13 lines; ours allow
# longer descriptions).
ROWS_PER_SHEET = 10
FORMS_CSS = files("ehs_plugins.osha") / "static" / "forms.css"
TOTAL_KEYS = ("G", "H", "I", "J", "K", "L", "M1", "M2", "M3", "M4", "M5", "M6")


def refuse_urls(url: str, *args: Any, **kw: Any) -> dict[str, Any]:
    """WeasyPrint's URL fetcher: nothing is fetched at run time."""
    raise ValueError(f"not fetched: {url[:80]}")


def pdf(html: str) -> bytes:
    import weasyprint

    stylesheet = weasyprint.CSS(string=FORMS_CSS.read_text("utf-8"))
    return weasyprint.HTML(string=html, url_fetcher=refuse_urls).write_pdf(stylesheets=[stylesheet])


def answer(request: Request, template: str, values: dict[str, Any], filename: str, as_pdf: bool) -> Response:
    """The print-ready page, or the PDF of the same template."""
    pdf_route = PDF_OF.get(request.matched_route.name, request.matched_route.name)
    pdf_url = request.route_path(pdf_route, **request.matchdict, _query=list(request.GET.items()))
    html = render(FORMS + template, {**values, "as_pdf": as_pdf, "pdf_url": pdf_url}, request=request)
    if not as_pdf:
        return Response(html, content_type="text/html", charset="utf-8")
    response = Response(body=pdf(html), content_type="application/pdf")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response


def sheets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log's rows cut into sheets, each with its page totals (OSHA's
    form totals every page and carries them to the 300A)."""
    chunks = [rows[i:i + ROWS_PER_SHEET] for i in range(0, len(rows), ROWS_PER_SHEET)] or [[]]
    found = []
    for chunk in chunks:
        totals = dict.fromkeys(TOTAL_KEYS, 0)
        for row in chunk:
            totals[row["outcomeColumn"]] += 1
            totals["K"] += row["daysAway"]
            totals["L"] += row["daysRestricted"]
            if row["typeColumn"]:
                totals[row["typeColumn"]] += 1
        found.append({"rows": chunk, "totals": totals})
    return found


def site_year(request: Request) -> tuple[Choice, Any]:
    choice = Choice(request)
    if choice.site is None:
        raise HTTPNotFound()
    return choice, load(request.dbsession, request.registry, [choice.site], choice.year)[0]


def log_300(request: Request) -> Response:
    choice, item = site_year(request)
    rows = log_rows(request, item)
    values = {"site": choice.site, "year": choice.year, "sheets": sheets(rows),
              "totals": item.totals, "company": company_name(request), **labels(request)}
    as_pdf = request.matched_route.name == "page.osha_log_pdf"
    return answer(request, "log300.html", values, f"osha-300-log-{choice.site.id}-{choice.year}.pdf", as_pdf)


def summary_300a(request: Request) -> Response:
    choice, item = site_year(request)
    values = {"site": choice.site, "year": choice.year, "data": log_json(item),
              "certification": certification_json(certification_of(request.dbsession, choice.site,
                                                                    choice.year)),
              "company": company_name(request), **labels(request)}
    as_pdf = request.matched_route.name == "page.osha_summary_pdf"
    return answer(request, "summary300a.html", values, f"osha-300a-{choice.site.id}-{choice.year}.pdf",
                  as_pdf)


def form_301(request: Request) -> Response:
    case, incident = services.load_case(request, int(request.matchdict["id"]))
    zone = services.zone_of(request, incident)
    site = request.dbsession.get(Site, incident.site_id)
    forms = [form_301_json(case, incident, zone)]
    values = {"forms": forms, "site": site, "company": company_name(request), **labels(request)}
    as_pdf = request.matched_route.name == "page.osha_form301_pdf"
    return answer(request, "form301.html", values, f"osha-301-{forms[0]['caseNumber']}.pdf", as_pdf)


def forms_301_of_year(request: Request) -> Response:
    """Every Form 301 of a site's recordable cases in a year, one per sheet."""
    choice, item = site_year(request)
    forms = [form_301_json(case, incident, item.zone) for case, incident in item.cases]
    values = {"forms": forms, "site": choice.site, "year": choice.year, "company": company_name(request),
              **labels(request)}
    as_pdf = request.matched_route.name == "page.osha_forms301_pdf"
    return answer(request, "form301.html", values, f"osha-301-{choice.site.id}-{choice.year}.pdf", as_pdf)


# The PDF route of each print-ready page.
PDF_OF = {"page.osha_log_print": "page.osha_log_pdf", "page.osha_summary_print": "page.osha_summary_pdf",
          "page.osha_form301": "page.osha_form301_pdf", "page.osha_forms301": "page.osha_forms301_pdf"}


def includeme(config: Configurator) -> None:
    routes = [
        ("page.osha_log_print", "/osha/log/print", "page.osha_log_pdf", "/osha/log.pdf", log_300),
        ("page.osha_summary_print", "/osha/summary/print", "page.osha_summary_pdf", "/osha/summary.pdf",
         summary_300a),
        ("page.osha_form301", r"/osha/cases/{id:\d{1,9}}/301", "page.osha_form301_pdf",
         r"/osha/cases/{id:\d{1,9}}/301.pdf", form_301),
        ("page.osha_forms301", "/osha/forms-301", "page.osha_forms301_pdf", "/osha/forms-301.pdf",
         forms_301_of_year),
    ]
    for page_name, page_path, pdf_name, pdf_path, view in routes:
        config.add_route(page_name, page_path, factory=ROOT)
        config.add_route(pdf_name, pdf_path, factory=ROOT)
        config.add_view(view, route_name=page_name, request_method="GET", permission=MANAGE)
        config.add_view(view, route_name=pdf_name, request_method="GET", permission=MANAGE)
