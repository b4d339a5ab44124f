"""The request desk for copies of the records (1904.35(b)(2)): the page that
takes a request, lists the open ones with their clocks and records the copy
given, and the copy itself, exactly what the rule allows, as a print-ready
page and a PDF from the same template (`printing`). Adapters over `access`,
the operations behind /api/osha/access-requests."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.renderers import render
from pyramid.request import Request
from pyramid.response import Response

from ehs_core.errors import DomainError
from ehs_core.sites.models import Site
from ehs_core.ui.forms import INT, OPTIONAL_INT, TEXT, errors_of, json_values
from ehs_plugins.osha import access
from ehs_plugins.osha.cases import form_301_json
from ehs_plugins.osha.deidentify import name_parts, remove_name
from ehs_plugins.osha.log import load
from ehs_plugins.osha.pages import ROOT, TEMPLATES, labels
from ehs_plugins.osha.pages.printing import FORMS, pdf, pdf_response, printable
from ehs_plugins.osha.pages.records import company_name, organization_sites
from ehs_plugins.osha.schemas import AccessKind, AccessRequestBody, FulfilBody
from ehs_plugins.osha.views import MANAGE

DESK = "/osha/access-requests"
NARRATIVES = ("activityBefore", "whatHappened", "injuryOrIllness", "bodyPart", "objectOrSubstance")
KIND_LABELS = {
    AccessKind.log_copy: "Copy of the 300 Log (employee, former employee or personal representative)",
    AccessKind.own_301: "The employee's own Form 301 (employee, former employee or personal representative)",
    AccessKind.representative_301: "Forms 301, the part about the case (authorized employee representative)",
}


def case_part(form: dict[str, Any], name: str) -> dict[str, Any]:
    """Form 301's "about the case" part (items 10-18) and nothing else
    (1904.35(b)(2)(v)(B)), the employee's name taken out of its narratives."""
    parts = name_parts(name)
    case = {key: remove_name(value, parts) if key in NARRATIVES and value else value
            for key, value in form["case"].items()}
    return {"caseNumber": form["caseNumber"], "case": case}


def copy_html(request: Request, row: Any, as_pdf: bool, pdf_url: str | None = None) -> tuple[str, str]:
    """The copy a request allows, as HTML (and its PDF's filename)."""
    site = request.dbsession.get(Site, row.site_id)
    company = company_name(request)
    extra = {"as_pdf": as_pdf, "pdf_url": pdf_url}
    if row.kind == AccessKind.log_copy:
        form = printable(request, "log300", site, row.year, company)
        html = render(FORMS + form.template, {**form.values, form.key: form.sheets, **extra}, request=request)
        return html, f"osha-300-log-{site.id}-{row.year}-copy-{row.id}.pdf"
    zone = access.zone_of(request, site)
    if row.case_id is not None:
        try:
            cases = [access.case_of_site(request, row.case_id, site)]
        except DomainError:
            raise HTTPNotFound() from None
    elif row.kind == AccessKind.representative_301:
        cases = load(request.dbsession, request.registry, [site], row.year)[0].cases
    else:
        raise HTTPNotFound()  # an own 301 whose case was deleted
    forms = [form_301_json(case, incident, zone) for case, incident in cases]
    case_only = row.kind == AccessKind.representative_301
    if case_only:
        forms = [case_part(form, case.name) for form, (case, _) in zip(forms, cases, strict=True)]
    values = {"forms": forms, "site": site, "company": company, "year": row.year, "case_only": case_only,
              **labels(request), **extra}
    return render(FORMS + "form301.html", values, request=request), f"osha-301-copy-{row.id}.pdf"


def copy_page(request: Request) -> Response:
    row = access.load(request, int(request.matchdict["id"]))
    if request.matched_route.name == "page.osha_access_copy_pdf":
        html, filename = copy_html(request, row, as_pdf=True)
        return pdf_response(pdf(html), filename)
    html, _ = copy_html(request, row, as_pdf=False,
                        pdf_url=request.route_path("page.osha_access_copy_pdf", id=row.id))
    return Response(html, content_type="text/html", charset="utf-8")


def desk_values(request: Request, form: dict[str, Any] | None = None,
                errors: dict[str, str] | None = None) -> dict[str, Any]:
    t = request.localizer.translate
    rows = access.open_requests(request)
    zones = {site.id: site.timezone for site in organization_sites(request, include_archived=True)}
    return {"requests": [{**access.request_json(request, row), "due": row.due_by,
                          "zone": zones.get(row.site_id)} for row in rows],
            "site_options": [(site.id, site.name) for site in organization_sites(request)],
            "kinds": {k.value: t(v, domain="ehs_osha") for k, v in KIND_LABELS.items()},
            "form": form or {}, "errors": errors or {}}


def desk_page(request: Request) -> dict[str, Any]:
    return desk_values(request)


def take_request(request: Request) -> Any:
    raw = json_values(request.POST, {"kind": TEXT, "requesterName": TEXT, "siteId": INT, "year": INT,
                                     "caseId": OPTIONAL_INT})
    try:
        row = access.create(request, AccessRequestBody().deserialize(raw))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = 400
        request.tm.doom()
        return desk_values(request, dict(request.POST), errors_of(exc))
    return HTTPFound(request.route_path("page.osha_access", _query={"notice": "saved"}, _anchor=f"r{row.id}"))


def give_copy(request: Request) -> Any:
    row = access.load(request, int(request.matchdict["id"]))
    try:
        given = FulfilBody().deserialize(json_values(request.POST, {"givenTo": TEXT}))
        access.fulfil(request, row, given["givenTo"])
    except (colander.Invalid, DomainError) as exc:
        request.response.status = 400
        request.tm.doom()
        return desk_values(request, errors={f"givenTo-{row.id}": next(iter(errors_of(exc).values()))})
    return HTTPFound(request.route_path("page.osha_access", _query={"notice": "saved"}))


def includeme(config: Configurator) -> None:
    config.add_route("page.osha_access", DESK, factory=ROOT)
    config.add_route("page.osha_access_give", DESK + r"/{id:\d{1,9}}/given", factory=ROOT)
    config.add_route("page.osha_access_copy", DESK + r"/{id:\d{1,9}}/copy", factory=ROOT)
    config.add_route("page.osha_access_copy_pdf", DESK + r"/{id:\d{1,9}}/copy.pdf", factory=ROOT)
    config.add_view(desk_page, route_name="page.osha_access", request_method="GET",
                    renderer=TEMPLATES + "access.html", permission=MANAGE)
    config.add_view(take_request, route_name="page.osha_access", request_method="POST",
                    renderer=TEMPLATES + "access.html", permission=MANAGE)
    config.add_view(give_copy, route_name="page.osha_access_give", request_method="POST",
                    renderer=TEMPLATES + "access.html", permission=MANAGE)
    for name in ("page.osha_access_copy", "page.osha_access_copy_pdf"):
        config.add_view(copy_page, route_name=name, request_method="GET", permission=MANAGE)
