"""The JSON face of the request desk for copies of the records
(1904.35(b)(2), operations in `access`) and of filing with OSHA's ITA API
(1904.41, operations in `filing`); safety managers only."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.view import view_config

from ehs_plugins.osha import access, filing
from ehs_plugins.osha.schemas import AccessRequestBody, FulfilBody, SubmissionBody, YearQuery
from ehs_plugins.osha.views import MANAGE

ANSWER = (" A request answers {id, kind, requesterName, siteId, siteName, year, caseId, receivedAt, "
          "dueBy, overdue, secondsLeft, copyOf, copyUrl, pdfUrl, fulfilledAt, givenTo}: dueBy is the end of "
          "the next business day for log_copy and own_301, of the 7th calendar day for representative_301, "
          "on the site's clock; copyUrl and pdfUrl give the copy the rule allows (print page and PDF).")


@view_config(route_name="osha.access_requests", request_method="POST", renderer="json", permission=MANAGE,
             body=AccessRequestBody, responses=(201,),
             summary="Take a request for a copy of the records (29 CFR 1904.35(b)(2)): kind log_copy "
                     "(the 300 Log), own_301 (an employee's own Form 301, caseId required) or "
                     "representative_301 (the 301s' 'about the case' part for an authorized employee "
                     "representative, of one case or the site-year)." + ANSWER)
def create_request(request: Request) -> dict[str, Any]:
    row = access.create(request, request.validated)
    request.response.status = 201
    return access.request_json(request, row)


@view_config(route_name="osha.access_requests", request_method="GET", renderer="json", permission=MANAGE,
             summary="The requests for copies not yet fulfilled, the soonest due first." + ANSWER)
def list_requests(request: Request) -> list[dict[str, Any]]:
    return [access.request_json(request, row) for row in access.open_requests(request)]


@view_config(route_name="osha.access_request_fulfil", request_method="POST", renderer="json",
             permission=MANAGE, body=FulfilBody,
             summary="Record that the copy was given, now, to givenTo (once; 409 after)." + ANSWER)
def fulfil_request(request: Request) -> dict[str, Any]:
    row = access.load(request, int(request.matchdict["id"]))
    access.fulfil(request, row, request.validated["givenTo"])
    return access.request_json(request, row)


SUBMISSION = (" A filing answers {id, siteId, year, dryRun, status (queued, running, accepted, refused, "
              "failed), withCaseData, changeReason, confirmation (OSHA's), errors [{field, message}] "
              "(OSHA's), createdAt, finishedAt}.")


@view_config(route_name="osha.ita_submissions", request_method="POST", renderer="json", permission=MANAGE,
             body=SubmissionBody, responses=(202,),
             summary="File a site-year with OSHA's ITA API (29 CFR 1904.41) by a job: dryRun (the default) "
                     "against OSHA's preview environment, else the real filing; the edit checks run first "
                     "and a failure is a 400 naming each field; a year filed before needs changeReason."
                     + SUBMISSION)
def start_submission(request: Request) -> dict[str, Any]:
    row = filing.start(request, request.validated)
    request.response.status = 202
    return filing.submission_json(row)


@view_config(route_name="osha.ita_submissions", request_method="GET", renderer="json", permission=MANAGE,
             query=YearQuery, summary="The filings of a year, newest first." + SUBMISSION)
def list_submissions(request: Request) -> list[dict[str, Any]]:
    year = int(request.validated_query["year"])
    return [filing.submission_json(row) for row in filing.of_year(request, year)]


@view_config(route_name="osha.ita_submission", request_method="GET", renderer="json", permission=MANAGE,
             summary="One filing and OSHA's answer." + SUBMISSION)
def get_submission(request: Request) -> dict[str, Any]:
    return filing.submission_json(filing.load_submission(request, int(request.matchdict["id"])))
