"""Electronic submission (29 CFR 1904.41): per year, who must file what,
OSHA's ITA edit checks on both files listed by site and case, each with a
link to where it is fixed, the two CSV files (the API's own downloads), and
filing with OSHA's ITA API (`filing`): a dry run or the real filing, each
filing's answer from OSHA."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.request import Request

from ehs_core.errors import DomainError
from ehs_core.ui.forms import INT, OPTIONAL_TEXT, errors_of, json_values
from ehs_plugins.osha import filing
from ehs_plugins.osha.checks import site_year_checks
from ehs_plugins.osha.coverage import coverage
from ehs_plugins.osha.pages import ROOT, TEMPLATES
from ehs_plugins.osha.pages.cases import FIELD_LABELS
from ehs_plugins.osha.pages.records import Choice, company_name
from ehs_plugins.osha.schemas import SubmissionBody
from ehs_plugins.osha.views import MANAGE

# Where an ITA case-file column is answered on the case form.
CASE_FIELD_OF = {
    "dafw_num_away": "daysAway", "djtr_num_tr": "daysRestricted", "date_of_death": "dateOfDeath",
    "type_of_incident": "caseType", "job_title": "jobTitle", "incident_description": "natureOfInjury",
    "nar_before_incident": "activityBefore", "nar_what_happened": "whatHappened",
    "nar_injury_illness": "natureOfInjury", "nar_object_substance": "objectSubstance",
}
# Site-level findings fixed on the hours grid; the rest on the log page
# (the establishment's fields and totals).
HOURS_FIELDS = ("total_hours_worked", "annual_average_employees", "size")


def fix_url(request: Request, finding: dict[str, Any], year: int) -> str:
    if finding["caseId"] is not None:
        anchor = CASE_FIELD_OF.get(finding["field"], "decision")
        return request.route_path("page.osha_case", id=finding["caseId"], _anchor=anchor)
    if finding["field"] in HOURS_FIELDS:
        return request.route_path("page.osha_hours", _query={"year": year})
    return request.route_path("page.osha_log", _query={"siteId": finding["siteId"], "year": year},
                              _anchor="est-title")


def field_label(request: Request, finding: dict[str, Any]) -> str | None:
    """A case's finding names the case form's field as the form labels it
    ("What happened"), not OSHA's column (`nar_what_happened`, issue #36
    item 7); None where the form has no such field."""
    if finding["caseId"] is None:
        return None
    form_field = CASE_FIELD_OF.get(finding["field"])
    words = FIELD_LABELS.get(form_field) if form_field else None
    return request.localizer.translate(words, domain="ehs_osha") if words else None


def submission_page(request: Request) -> dict[str, Any]:
    choice = Choice(request, need_site=False)
    company = company_name(request)
    by_site, items = [], []
    names = [(site.id, site.name) for site in choice.active]
    for site in choice.active:
        # The totals of every case, the ITA columns of the few that may have a finding.
        item, findings = site_year_checks(request.dbsession, request.registry, site, choice.year, names,
                                          company)
        items.append(item)
        found = [{**f, "url": fix_url(request, f, choice.year), "label": field_label(request, f)}
                 for f in findings]
        by_site.append({"site": item.site, "cases": len(item.cases),
                        "establishment": [f for f in found if f["caseId"] is None],
                        "case_findings": [f for f in found if f["caseId"] is not None],
                        "errors": sum(1 for f in found if f["level"] == "error")})
    year = choice.year
    names_by_id = dict(names)
    filings = [{**filing.submission_json(row), "siteName": names_by_id.get(row.site_id, "")}
               for row in filing.of_year(request, year)]
    return {**choice.values(), "by_site": by_site, "coverage": coverage(items), "filings": filings,
            "file_errors": {}, "file_issues": [],
            "errors": sum(s["errors"] for s in by_site),
            "summary_csv": request.route_path("osha.ita_summary", _query={"year": year}),
            "cases_csv": request.route_path("osha.ita_cases", _query={"year": year})}


def file_with_osha(request: Request) -> Any:
    """The page's "File with OSHA" (the API's `filing.start`): refused
    filings come back to the page with the checks' named failures."""
    raw = json_values(request.POST, {"siteId": INT, "year": INT, "changeReason": OPTIONAL_TEXT})
    raw["dryRun"] = request.POST.get("mode") != "real"
    try:
        filing.start(request, SubmissionBody().deserialize(raw))
    except (colander.Invalid, DomainError) as exc:
        if isinstance(exc, DomainError) and exc.status == 404:
            raise
        request.response.status = 400
        request.tm.doom()
        return {**submission_page(request), "file_errors": errors_of(exc),
                "file_issues": getattr(exc, "issues", None) or []}
    return HTTPFound(request.route_path("page.osha_submission", _query={"year": raw.get("year"),
                                                                         "notice": "saved"},
                                        _anchor="filings-title"))


def includeme(config: Configurator) -> None:
    config.add_route("page.osha_submission", "/osha/submission", factory=ROOT)
    config.add_route("page.osha_submission_file", "/osha/submission/file", factory=ROOT)
    config.add_view(submission_page, route_name="page.osha_submission", request_method="GET",
                    renderer=TEMPLATES + "submission.html", permission=MANAGE)
    config.add_view(file_with_osha, route_name="page.osha_submission_file", request_method="POST",
                    renderer=TEMPLATES + "submission.html", permission=MANAGE)
