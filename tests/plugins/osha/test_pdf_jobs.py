"""A long form's PDF is made in the background: the safety manager asks for
it, watches its progress and downloads it; the PDF holds what the one made
in the request holds (read back with pypdf). The limits are lowered here so
that a two-sheet log counts as long."""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest
from pypdf import PdfReader

from ehs_core.sites.models import Site
from ehs_core.users.models import User
from ehs_plugins.osha import pdfjobs
from ehs_plugins.osha.models import PdfJob
from ehs_plugins.osha.pages import printing
from tests.plugins.osha import FORM_301, YEAR, recorded

LEGAL_LANDSCAPE = (1008, 612)
LETTER = (612, 792)


@pytest.fixture
def long_forms(monkeypatch):
    """Any log of more than one sheet, any year of more than two Forms 301, is long;
    a job lays its PDF out one sheet per part."""
    monkeypatch.setattr(printing, "IN_REQUEST_SHEETS", {"log300": 1, "forms301": 2})
    monkeypatch.setattr(printing, "SHEETS_PER_PART", 1)


@pytest.fixture
def site_year(manager, site):
    """Twelve recorded cases (two sheets of the log), one of them a privacy case."""
    cases = [recorded(manager, site, f"Worker Number{i}", medicalTreatment=True, caseType="injury",
                      **FORM_301) for i in range(11)]
    cases.append(recorded(manager, site, "Secret Person", daysAwayFromWork=True, daysAway=5,
                          privacyCase=True, caseType="skin_disorder"))
    return site, cases


def made(browser, registry, url, query):
    """Ask for the PDF on its page, follow the job to its end, download it."""
    offer = browser.get(url, query)
    assert offer.content_type == "text/html"
    started = offer.forms["make-pdf"].submit(status=303)
    job_url = started.headers["Location"]
    assert re.search(r"/osha/pdfs/[A-Za-z0-9_-]{16,}$", job_url)
    registry["job_runner"].wait_idle(timeout=60)
    page = browser.get(job_url)
    link = page.html.find("a", string=re.compile("Download"))
    assert link is not None, page.text
    response = browser.get(link["href"])
    assert response.content_type == "application/pdf"
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert response.headers["Cache-Control"] == "no-store"
    return job_url, PdfReader(io.BytesIO(response.body))


def text_of(reader):
    return "\n".join(page.extract_text() for page in reader.pages)


def size(page):
    return round(float(page.mediabox.width)), round(float(page.mediabox.height))


def test_a_long_log_is_made_by_a_job_with_the_same_content(long_forms, manager, registry, site_year):
    site, cases = site_year
    offer = manager.get("/osha/log.pdf", {"siteId": site, "year": YEAR})
    assert "2 sheets" in offer.text and "Make the PDF" in offer.text
    _, reader = made(manager, registry, "/osha/log.pdf", {"siteId": site, "year": YEAR})
    assert len(reader.pages) == 2 and all(size(page) == LEGAL_LANDSCAPE for page in reader.pages)
    text = text_of(reader)
    for case in cases:
        assert case["caseNumber"] in text
    assert "Privacy case" in text and "Secret Person" not in text
    # Numbered across the parts; page totals on each sheet, the year's on the last.
    assert "Page 1 of 2" in text and "Page 2 of 2" in text
    assert text.count("Page totals") == 2 and text.count("Totals for the year") == 1
    last = " ".join(reader.pages[-1].extract_text().split())
    assert "0 1 0 11 5 0 11 1 0 0 0 0" in last[last.index("Totals for the year"):]


def test_the_forms_301_of_a_long_year_are_made_by_a_job(long_forms, manager, registry, site_year):
    site, cases = site_year
    _, reader = made(manager, registry, "/osha/forms-301.pdf", {"siteId": site, "year": YEAR})
    assert len(reader.pages) == len(cases) and all(size(page) == LETTER for page in reader.pages)
    text = text_of(reader)
    assert all(case["caseNumber"] in text for case in cases)


def test_the_progress_page_polls_while_the_job_runs_and_links_itself_without_script(
        long_forms, manager, dbsession, site_year):
    site, _ = site_year
    sam = dbsession.query(User).filter_by(name="Sam Safety").one()
    job, new = pdfjobs.start(dbsession, kind="log300", site=dbsession.get(Site, site), year=YEAR, user=sam,
                             sheets=2, filename="osha-300-log.pdf")
    assert new
    pdfjobs.progress(dbsession, job.id, 1)
    dbsession.commit()
    page = manager.get(f"/osha/pdfs/{job.token}")
    block = page.html.find(id="pdf-progress")
    assert block["hx-get"] == f"/osha/pdfs/{job.token}/progress" and "every" in block["hx-trigger"]
    assert block["aria-live"] == "polite"
    assert page.html.find("progress")["value"] == "1" and "Sheet 1 of 2" in page.text
    assert page.html.find("a", string="Check again")["href"] == f"/osha/pdfs/{job.token}"
    assert "<script>" not in page.text  # the CSP allows no inline script
    # Asking again while it runs joins the same job.
    again, new = pdfjobs.start(dbsession, kind="log300", site=dbsession.get(Site, site), year=YEAR,
                               user=sam, sheets=2, filename="osha-300-log.pdf")
    assert again.id == job.id and not new
    # Nothing to download yet.
    manager.get(f"/osha/pdfs/{job.token}/file", status=404)
    # A worker that stopped mid-way: the job is shown as failed, and a new request starts afresh.
    dbsession.execute(PdfJob.__table__.update().where(PdfJob.id == job.id).values(
        updated_at=dt.datetime.now(dt.UTC) - pdfjobs.STALE - dt.timedelta(minutes=1)))
    dbsession.commit()
    fragment = manager.get(f"/osha/pdfs/{job.token}/progress")
    assert 'data-status="failed"' in fragment.text and "hx-get" not in fragment.text
    fresh, new = pdfjobs.start(dbsession, kind="log300", site=dbsession.get(Site, site), year=YEAR, user=sam,
                               sheets=2, filename="osha-300-log.pdf")
    assert new and fresh.id != job.id


def test_only_safety_managers_reach_a_job(long_forms, manager, make_user, registry, site_year):
    site, _ = site_year
    job_url, _ = made(manager, registry, "/osha/log.pdf", {"siteId": site, "year": YEAR})
    other = make_user("safety_manager", name="Other Manager")
    assert other.get(job_url + "/file").content_type == "application/pdf"
    supervisor = make_user("supervisor")
    for url in (job_url, job_url + "/progress", job_url + "/file"):
        supervisor.get(url, status=403)
    supervisor.post(f"/osha/log.pdf?siteId={site}&year={YEAR}", status=403)
    manager.get("/osha/pdfs/" + "x" * 32, status=404)
    manager.get("/osha/pdfs/" + "x" * 32 + "/file", status=404)


def test_old_pdfs_are_deleted_when_another_is_asked_for(long_forms, manager, dbsession, registry, site_year):
    site, _ = site_year
    job_url, _ = made(manager, registry, "/osha/log.pdf", {"siteId": site, "year": YEAR})
    token = job_url.rsplit("/", 1)[1]
    dbsession.execute(PdfJob.__table__.update().where(PdfJob.token == token).values(
        created_at=dt.datetime.now(dt.UTC) - pdfjobs.KEEP - dt.timedelta(minutes=1)))
    dbsession.commit()
    made(manager, registry, "/osha/log.pdf", {"siteId": site, "year": YEAR})
    manager.get(job_url, status=404)


def test_a_short_log_is_still_made_in_the_request(manager, site_year):
    site, _ = site_year
    response = manager.get("/osha/log.pdf", {"siteId": site, "year": YEAR})
    assert response.content_type == "application/pdf"
    assert len(PdfReader(io.BytesIO(response.body)).pages) == 2


def test_the_hourly_purge_deletes_pdfs_past_a_day(long_forms, manager, dbsession, registry, site_year):
    site, _ = site_year
    job_url, _ = made(manager, registry, "/osha/log.pdf", {"siteId": site, "year": YEAR})
    assert pdfjobs.purge_job(registry) == 0
    dbsession.execute(PdfJob.__table__.update().values(
        created_at=dt.datetime.now(dt.UTC) - pdfjobs.KEEP - dt.timedelta(minutes=1)))
    dbsession.commit()
    assert pdfjobs.purge_job(registry) == 1
    manager.get(job_url, status=404)


@pytest.mark.parametrize("processes", ["0", "2"])
def test_a_log_of_n_cases_has_a_sheet_per_ten_rows_each_on_its_own_page(
        long_forms, monkeypatch, manager, registry, site, processes):
    """23 cases: three sheets, each case's row (number, name, job title,
    where) on the page of its sheet, whether the job lays the parts out in
    its own thread ("0") or in worker processes (the default)."""
    monkeypatch.setitem(registry.settings, printing.PROCESSES, processes)
    cases = [recorded(manager, site, f"Person Number{i}", medicalTreatment=True, caseType="injury",
                      **FORM_301) for i in range(23)]
    _, reader = made(manager, registry, "/osha/log.pdf", {"siteId": site, "year": YEAR})
    assert len(reader.pages) == 3 and all(size(page) == LEGAL_LANDSCAPE for page in reader.pages)
    pages = [" ".join(page.extract_text().split()) for page in reader.pages]
    for number, case in enumerate(cases):
        page = pages[number // printing.ROWS_PER_SHEET]
        assert case["caseNumber"] in page and f"Person Number{number}" in page, number
    for number, page in enumerate(pages, start=1):
        assert f"Page {number} of 3" in page
    assert "Totals for the year" in pages[-1] and "Totals for the year" not in pages[0]
