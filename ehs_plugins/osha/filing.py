"""Filing a site-year with OSHA from the service (1904.41): the edit checks
first (a filing with an error OSHA would refuse is not started, each failure
named), then a job per filing that talks to OSHA's ITA API (`ita_api`): a
dry run against OSHA's preview environment, or the real filing. OSHA's
confirmation, or the errors it named with their fields, are kept on the
filing. Filing again a year already filed asks for the reason of the
change (ITA's `change_reason`, at most 100 characters)."""

from __future__ import annotations

import json
import logging
from typing import Any

from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.errors import Conflict, DomainError, Invalid, NotFound
from ehs_core.jobs import queue_job
from ehs_core.serialize import iso
from ehs_core.sites.models import Site
from ehs_core.users.models import Organization
from ehs_plugins.osha import ita_api
from ehs_plugins.osha.checks import checks
from ehs_plugins.osha.coverage import CASE_DATA, requirement
from ehs_plugins.osha.log import LOG_COLUMNS, active_site_names, load
from ehs_plugins.osha.models import ItaSubmission
from ehs_plugins.osha.obligations import JobContext, fulfil_ita_filing

log = logging.getLogger(__name__)

JOB = "osha.ita_submission"
URL, PREVIEW_URL, TOKEN = "osha.ita_url", "osha.ita_preview_url", "osha.ita_token"
UNFINISHED = ("queued", "running")


def start(request: Request, data: dict[str, Any]) -> ItaSubmission:
    """A filing of a site-year (validated `SubmissionBody`), queued once the
    request commits; refused with the checks' named failures when any
    would make OSHA refuse the files."""
    org = request.identity.account.organization_id
    site = request.dbsession.get(Site, data["siteId"])
    if site is None or site.organization_id != org:
        raise Invalid("siteId", "No such site")
    if not request.registry.settings.get(TOKEN):
        raise Conflict("The ITA API token is not set: an administrator sets osha.ita_token "
                       "(EHS_OSHA_ITA_TOKEN) from the employer's ITA account")
    year, dry_run = data["year"], data["dryRun"]
    item = load(request.dbsession, request.registry, [site], year, LOG_COLUMNS)[0]
    org_row = request.dbsession.get(Organization, org)
    failures = [f for f in checks(item, active_site_names(request), org_row.name if org_row else "")
                if f["level"] == "error"]
    if failures:
        raise DomainError("The edit checks found what OSHA would refuse: fix it first", [
            {"path": f["field"], "message": (f"Case {f['caseNumber']}: " if f["caseNumber"] else "")
             + f["message"]} for f in failures])
    reason = (data.get("changeReason") or "").strip() or None
    if not dry_run and reason is None and filed_before(request, site.id, year):
        raise Invalid("changeReason", f"{year} was filed for this site before: say why it changes "
                                      "(ITA's change reason, at most 100 characters)")
    if any(row.status in UNFINISHED for row in submissions_of(request, site.id, year)):
        raise Conflict("A filing of this site and year is under way: wait for its answer")
    needs = requirement(site.naics_code, item.peak_employees, year)
    row = ItaSubmission(organization_id=org, site_id=site.id, year=year, dry_run=dry_run, status="queued",
                        change_reason=reason, with_case_data=CASE_DATA in needs.requires,
                        requested_by=request.identity.user.id if request.identity.is_user else None,
                        created_at=utcnow())
    request.dbsession.add(row)
    request.dbsession.flush()
    queue_job(request, JOB, row.id)
    return row


def filed_before(request: Request, site_id: int, year: int) -> bool:
    return any(row.status == "accepted" and not row.dry_run for row in submissions_of(request, site_id, year))


def submissions_of(request: Request, site_id: int, year: int) -> list[ItaSubmission]:
    return list(request.dbsession.execute(select(ItaSubmission).where(
        ItaSubmission.organization_id == request.identity.account.organization_id,
        ItaSubmission.site_id == site_id, ItaSubmission.year == year)
        .order_by(ItaSubmission.id.desc())).scalars())


def of_year(request: Request, year: int) -> list[ItaSubmission]:
    return list(request.dbsession.execute(select(ItaSubmission).where(
        ItaSubmission.organization_id == request.identity.account.organization_id,
        ItaSubmission.year == year).order_by(ItaSubmission.id.desc())).scalars())


def load_submission(request: Request, submission_id: int) -> ItaSubmission:
    row = request.dbsession.get(ItaSubmission, submission_id)
    if row is None or row.organization_id != request.identity.account.organization_id:
        raise NotFound()
    return row


def run(registry: Registry, submission_id: int) -> None:
    """The job: file the site-year as its data is now, keep OSHA's answer."""
    factory = registry["dbsession_factory"]
    with factory() as dbsession:
        row = dbsession.get(ItaSubmission, submission_id)
        if row is None or row.status != "queued":
            return
        row.status = "running"
        dbsession.commit()
        settings = registry.settings
        client = ita_api.Client(settings[PREVIEW_URL] if row.dry_run else settings[URL], settings[TOKEN])
        try:
            site = dbsession.get(Site, row.site_id)
            org = dbsession.get(Organization, row.organization_id)
            item = load(dbsession, registry, [site], row.year, LOG_COLUMNS)[0]
            done = ita_api.file_site_year(client, item, org.name if org else "", row.with_case_data,
                                          row.change_reason)
            row.status, row.confirmation = "accepted", done.confirmation
            row.answer = json.dumps(done.json())
        except ita_api.ItaRefused as exc:
            row.status, row.errors = "refused", json.dumps(exc.errors)
        except ita_api.ItaUnreachable as exc:
            row.status, row.errors = "failed", json.dumps([{"field": None, "message": str(exc)}])
        except Exception:
            log.exception("ITA filing %s failed", submission_id)
            row.status = "failed"
            row.errors = json.dumps([{"field": None,
                                      "message": "The filing stopped on an error of the service"}])
        row.finished_at = utcnow()
        # A real filing accepted: the filing owed for the site-year is done.
        fulfil_ita_filing(JobContext(dbsession, registry), row)
        dbsession.commit()


def submission_json(row: ItaSubmission) -> dict[str, Any]:
    """`{id, siteId, year, dryRun, status, withCaseData, changeReason,
    confirmation, errors: [{field, message}], createdAt, finishedAt}`."""
    return {"id": row.id, "siteId": row.site_id, "year": row.year, "dryRun": row.dry_run,
            "status": row.status, "withCaseData": row.with_case_data, "changeReason": row.change_reason,
            "confirmation": row.confirmation, "errors": json.loads(row.errors) if row.errors else [],
            "createdAt": iso(row.created_at), "finishedAt": iso(row.finished_at) if row.finished_at else None}
