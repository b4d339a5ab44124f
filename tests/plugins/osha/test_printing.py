"""Printable forms as PDFs (WeasyPrint) and as print-ready pages from the
same templates: read back with pypdf, the 300 Log of a site-year holds every
case number, the masked privacy case and the totals on legal landscape
pages; the 300A is one letter page with its certification; Form 301 is
letter."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from tests.plugins.osha import FORM_301, OSHA, YEAR, full_year, put_hours, recorded

LEGAL_LANDSCAPE = (1008, 612)  # points: 14 x 8.5 inches
LETTER = (612, 792)


def read(response):
    assert response.content_type == "application/pdf"
    assert response.headers["Content-Disposition"].startswith("attachment;")
    return PdfReader(io.BytesIO(response.body))


def size(page):
    return round(float(page.mediabox.width)), round(float(page.mediabox.height))


def text_of(reader):
    return "\n".join(page.extract_text() for page in reader.pages)


@pytest.fixture
def site_year(manager, site):
    """Twelve recorded cases (two sheets of the log), one of them a privacy case."""
    cases = [recorded(manager, site, f"Worker Number{i}", medicalTreatment=True, caseType="injury",
                      **FORM_301) for i in range(11)]
    cases.append(recorded(manager, site, "Secret Person", daysAwayFromWork=True, daysAway=5,
                          privacyCase=True, caseType="skin_disorder"))
    put_hours(manager, site, full_year(2000, 12))
    return site, cases


def test_the_300_log_pdf(manager, site_year):
    site, cases = site_year
    reader = read(manager.get("/osha/log.pdf", {"siteId": site, "year": YEAR}))
    assert len(reader.pages) == 2
    assert all(size(page) == LEGAL_LANDSCAPE for page in reader.pages)
    text = text_of(reader)
    for case in cases:
        assert case["caseNumber"] in text
    assert "Privacy case" in text and "Secret Person" not in text
    assert "Page 1 of 2" in text and "Page 2 of 2" in text
    assert "Page totals" in text and "Totals for the year" in text
    assert "(A) Case no." in text and "(M) Injury or illness type" in text
    # The year's totals: 11 other recordable (J), 1 days away (H) with 5 days (K).
    last = " ".join(reader.pages[-1].extract_text().split())
    year_totals = last[last.index("Totals for the year"):]
    assert "0 1 0 11 5 0 11 1 0 0 0 0" in year_totals


def test_the_300a_pdf_is_one_page_with_the_certification(manager, site_year):
    site, _ = site_year
    manager.put_json(f"{OSHA}/sites/{site}/certification?year={YEAR}",
                     {"executiveName": "Pat Boss", "executiveTitle": "Plant director",
                      "phone": "+1 413 555 0100", "certifiedOn": "2026-01-20"})
    reader = read(manager.get("/osha/summary.pdf", {"siteId": site, "year": YEAR}))
    assert len(reader.pages) == 1 and size(reader.pages[0]) == LETTER
    text = text_of(reader)
    for expected in ("Pat Boss", "Plant director", "+1 413 555 0100", "2026-01-20", "Sign here",
                     "I certify that I have examined this document", "24,000", "February 1 to April 30"):
        assert expected in text, expected


def test_form_301_pdfs_are_letter(manager, site_year):
    site, cases = site_year
    one = read(manager.get(f"/osha/cases/{cases[0]['id']}/301.pdf"))
    assert len(one.pages) == 1 and size(one.pages[0]) == LETTER
    text = text_of(one)
    assert "Injury and Illness Incident Report" in text and cases[0]["caseNumber"] in text
    assert FORM_301["whatHappened"] in text
    every = read(manager.get("/osha/forms-301.pdf", {"siteId": site, "year": YEAR}))
    assert len(every.pages) == len(cases)
    assert all(size(page) == LETTER for page in every.pages)


def test_print_ready_pages_come_from_the_same_templates(manager, site_year):
    site, cases = site_year
    page = manager.get("/osha/log/print", {"siteId": site, "year": YEAR})
    assert page.content_type == "text/html"
    assert "Page 2 of 2" in page.text and cases[-1]["caseNumber"] in page.text
    assert "Secret Person" not in page.text
    assert f'href="/osha/log.pdf?siteId={site}&amp;year={YEAR}"' in page.text
    assert "Sign here" in manager.get("/osha/summary/print", {"siteId": site, "year": YEAR}).text
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]


def test_a_supervisor_gets_no_pdf(make_user, site_year):
    site, cases = site_year
    supervisor = make_user("supervisor")
    for url in (f"/osha/log.pdf?siteId={site}&year={YEAR}", f"/osha/summary.pdf?siteId={site}&year={YEAR}",
                f"/osha/cases/{cases[0]['id']}/301.pdf", f"/osha/forms-301.pdf?siteId={site}&year={YEAR}"):
        assert supervisor.get(url, status=403).content_type == "text/html"
