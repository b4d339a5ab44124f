"""PDFs of the printable forms made in the background.

A 300 Log of a busy site-year runs to a hundred sheets and the Forms 301 of
the same year to a thousand, longer to lay out than a person should wait on a
request, so such a PDF is made by a job (`pages.printing`), not in the
request: the safety manager watches its progress and downloads it when it is
done (the product's rule: a long job shows progress). The job's record holds
the progress and then the file, kept for `KEEP` and given only to safety
managers of the organization that asked (the views check the permission,
`job_of` the organization).
"""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

from huey import crontab
from pyramid.registry import Registry
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ehs_core.db import utcnow
from ehs_core.sites.models import Site
from ehs_plugins.osha.models import PdfJob

JOB = "osha.pdf"
PURGE_JOB = "osha.pdf_purge"
PURGE_SCHEDULE = crontab(minute="23")
KINDS = ("log300", "forms301")
KEEP = dt.timedelta(hours=24)
# An unfinished job whose worker has not reported for this long is taken for
# dead (the worker stopped mid-way): shown as failed, made again on request.
STALE = dt.timedelta(minutes=10)
UNFINISHED = ("queued", "running")


def is_stale(job: PdfJob, now: dt.datetime | None = None) -> bool:
    return job.status in UNFINISHED and (now or utcnow()) - job.updated_at > STALE


def purge(dbsession: Session) -> int:
    """Delete the jobs older than `KEEP`, their files with them."""
    return dbsession.execute(delete(PdfJob).where(PdfJob.created_at < utcnow() - KEEP)).rowcount or 0


def purge_job(registry: Registry) -> int:
    """Hourly: the files hold injured people's names; none is kept past `KEEP`
    even when nobody asks for another PDF (asking purges too)."""
    with registry["dbsession_factory"]() as dbsession:
        removed = purge(dbsession)
        dbsession.commit()
    return removed


def start(dbsession: Session, *, kind: str, site: Site, year: int, user: Any, sheets: int,
          filename: str) -> tuple[PdfJob, bool]:
    """The job making this PDF: one still under way for the same form,
    site and year in the organization (asking twice does not make it twice),
    or a new one; True when new (the caller queues it). Jobs past `KEEP`
    are deleted here, with their files."""
    if kind not in KINDS:
        raise ValueError(kind)
    now = utcnow()
    purge(dbsession)
    running = dbsession.execute(
        select(PdfJob).where(PdfJob.organization_id == user.organization_id, PdfJob.kind == kind,
                             PdfJob.site_id == site.id, PdfJob.year == year,
                             PdfJob.status.in_(UNFINISHED), PdfJob.updated_at >= now - STALE)
        .order_by(PdfJob.id.desc())).scalars().first()
    if running is not None:
        return running, False
    job = PdfJob(token=secrets.token_urlsafe(24), organization_id=user.organization_id, requested_by=user.id,
                 kind=kind, site_id=site.id, year=year, status="queued", sheets_done=0, sheets_total=sheets,
                 filename=filename, created_at=now, updated_at=now)
    dbsession.add(job)
    dbsession.flush()
    return job, True


def job_of(dbsession: Session, token: str, organization_id: int) -> PdfJob | None:
    """The job behind a token, if it is the caller's organization's."""
    job = dbsession.execute(select(PdfJob).where(PdfJob.token == token)).scalar()
    return job if job is not None and job.organization_id == organization_id else None


def recent(dbsession: Session, organization_id: int, kind: str, site_id: int, year: int) -> list[PdfJob]:
    """This form's jobs of the site-year still kept, newest first (without their files)."""
    return list(dbsession.execute(
        select(PdfJob).where(PdfJob.organization_id == organization_id, PdfJob.kind == kind,
                             PdfJob.site_id == site_id, PdfJob.year == year,
                             PdfJob.created_at >= utcnow() - KEEP)
        .order_by(PdfJob.id.desc()).limit(5)).scalars())


def progress(dbsession: Session, job_id: int, sheets_done: int, sheets_total: int | None = None) -> None:
    """Record how far the worker is (committed by the caller at once, so the
    progress page sees it)."""
    values: dict[str, Any] = {"status": "running", "sheets_done": sheets_done, "updated_at": utcnow()}
    if sheets_total is not None:
        values["sheets_total"] = sheets_total
    dbsession.execute(update(PdfJob).where(PdfJob.id == job_id).values(**values))


def finish(dbsession: Session, job_id: int, pdf: bytes) -> None:
    now = utcnow()
    dbsession.execute(update(PdfJob).where(PdfJob.id == job_id).values(
        status="done", pdf=pdf, sheets_done=PdfJob.sheets_total, updated_at=now, finished_at=now))


def fail(dbsession: Session, job_id: int) -> None:
    now = utcnow()
    dbsession.execute(update(PdfJob).where(PdfJob.id == job_id).values(
        status="failed", updated_at=now, finished_at=now))


def job_json(job: PdfJob) -> dict[str, Any]:
    """What the progress page shows (and polls)."""
    status = "failed" if is_stale(job) else job.status
    return {"token": job.token, "kind": job.kind, "siteId": job.site_id, "year": job.year, "status": status,
            "sheetsDone": job.sheets_done, "sheetsTotal": job.sheets_total, "filename": job.filename,
            "createdAt": job.created_at, "finishedAt": job.finished_at}
