"""Printable forms: the 300 Log (legal, landscape, columns A-M, page totals,
"Page n of m"), the 300A summary (letter, one page, signature lines, to post
from February 1 to April 30) and Form 301 (letter), each as a print-ready
page and as a PDF made by WeasyPrint from the very same template.

OSHA accepts equivalent forms (1904.29(b)(4)): these hold the same
information in the same order as OSHA's, laid out for our data, not a copy
of OSHA's PDF. WeasyPrint reads nothing from the network: the stylesheet is
handed to it as a file and every other URL is refused.

A form of more than `IN_REQUEST_SHEETS` sheets (a busy site-year has a
hundred log sheets and a thousand Forms 301) takes longer to lay out than a
person should wait on a request, so it is made by a job with a progress page
(`pdfjobs`; the product's rule: a long job shows progress), never in the
request. The job lays it out in parts of `SHEETS_PER_PART` sheets, each
written on its own and the parts' pages then joined (pypdf): memory stays
that of one part (a whole log's layout held at once grows with every sheet)
and the progress moves part by part.

The job's layout runs in worker processes (`osha.pdf_processes`, default
the machine's cores, at most 2; 0 lays out in the job's own thread): the
in-process job runner of the embedded default is a thread of the web
process, and a layout held there takes the GIL from every request while
it runs; in processes of their own the parts are also laid out side by side
(bench/pdf.py measures it).
"""

from __future__ import annotations

import io
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPNotFound, HTTPSeeOther
from pyramid.registry import Registry
from pyramid.renderers import render
from pyramid.request import Request
from pyramid.response import Response
from pyramid.scripting import prepare

from ehs_core.jobs import queue_job
from ehs_core.sites.models import Site
from ehs_core.users.models import Organization
from ehs_plugins.osha import pdfjobs, services
from ehs_plugins.osha.cases import form_301_json
from ehs_plugins.osha.certification import certification_json, certification_of
from ehs_plugins.osha.log import TOTAL_KEYS, SiteYear, load, log_json
from ehs_plugins.osha.models import PdfJob
from ehs_plugins.osha.pages import ROOT, TEMPLATES, labels
from ehs_plugins.osha.pages.records import Choice, company_name, log_rows
from ehs_plugins.osha.views import MANAGE

log = logging.getLogger(__name__)

FORMS = "ehs_plugins.osha:templates/forms/"
# Rows on one sheet of the 300 Log (OSHA's own form has 13 lines; ours allow
# longer descriptions).
ROWS_PER_SHEET = 10
FORMS_CSS = files("ehs_plugins.osha") / "static" / "forms.css"
# Sheets laid out per WeasyPrint document (a step of a job's progress, and
# what one worker process lays out at a time).
SHEETS_PER_PART = 5
PROCESSES = "osha.pdf_processes"
# The most sheets a PDF made in the request may have: what a person can wait
# for on a busy machine (a Form 301 sheet is quicker to lay out than a log's,
# bench/pdf.py).
IN_REQUEST_SHEETS = {"log300": 10, "forms301": 25}


def refuse_urls(url: str, *args: Any, **kw: Any) -> dict[str, Any]:
    """WeasyPrint's URL fetcher: nothing is fetched at run time."""
    raise ValueError(f"not fetched: {url[:80]}")


_stylesheet: Any = None


def stylesheet() -> Any:
    """The forms' stylesheet, parsed once per process."""
    global _stylesheet
    if _stylesheet is None:
        import weasyprint

        _stylesheet = weasyprint.CSS(string=FORMS_CSS.read_text("utf-8"))
    return _stylesheet


# One layout at a time in a process: WeasyPrint (Pango, fontconfig) is not
# documented as safe across threads, and threads share the one CPU the GIL
# gives them anyway (the worker's job threads, a threaded server's requests).
_layout = threading.Lock()


def pdf(html: str) -> bytes:
    import weasyprint

    with _layout:
        return weasyprint.HTML(string=html, url_fetcher=refuse_urls).write_pdf(stylesheets=[stylesheet()])


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def process_count(raw: str) -> int:
    """`osha.pdf_processes` (`EHS_OSHA_PDF_PROCESSES`): "auto" (the cores,
    at most 2), or a count, 0 for none (the job's own thread)."""
    text = str(raw).strip().lower()
    if text in ("", "auto"):
        return min(2, os.cpu_count() or 1)
    count = int(text)
    if count < 0:
        raise ValueError("a count of processes, 0 or more, or auto")
    return count


def processes(registry: Registry) -> int:
    """How many worker processes lay a job's PDF out (`osha.pdf_processes`)."""
    return process_count(registry.settings.get(PROCESSES, "auto"))


def pool(workers: int) -> ProcessPoolExecutor:
    """The worker processes, started once per process on first use. They are
    spawned, not forked: forking a process with threads (the web server's,
    the job runner's) copies locks in whatever state they are."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        return _pool


def _drop_pool() -> None:
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


def pdf_of_parts(parts: Iterable[str], done: Callable[[int], None] | None = None, workers: int = 0) -> bytes:
    """One PDF of several HTML documents, each laid out and written on its
    own (`done(n)` after the n-th in order), their pages then joined in
    order; with `workers`, laid out in that many worker processes at once."""
    written: list[bytes] = []
    if workers > 0:
        futures: list[Future[bytes]] = [pool(workers).submit(pdf, html) for html in parts]
        try:
            for number, future in enumerate(futures, start=1):
                written.append(future.result())
                if done is not None:
                    done(number)
        except BrokenProcessPool:
            _drop_pool()  # a worker died (killed, out of memory): the next job starts new ones
            raise
        finally:
            for future in futures:
                future.cancel()
    else:
        for number, html in enumerate(parts, start=1):
            written.append(pdf(html))
            if done is not None:
                done(number)
    if len(written) == 1:
        return written[0]
    from pypdf import PdfWriter

    writer = PdfWriter()
    for part in written:
        writer.append(io.BytesIO(part))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def sheets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log's rows cut into sheets, each with its page totals (OSHA's
    form totals every page and carries them to the 300A) and its number."""
    chunks = [rows[i:i + ROWS_PER_SHEET] for i in range(0, len(rows), ROWS_PER_SHEET)] or [[]]
    found = []
    for number, chunk in enumerate(chunks, start=1):
        totals = dict.fromkeys(TOTAL_KEYS, 0)
        for row in chunk:
            totals[row["outcomeColumn"]] += 1
            totals["K"] += row["daysAway"]
            totals["L"] += row["daysRestricted"]
            if row["typeColumn"]:
                totals[row["typeColumn"]] += 1
        found.append({"rows": chunk, "totals": totals, "number": number, "last": number == len(chunks)})
    return found


@dataclass
class Printable:
    """A multi-sheet form of a site-year, ready to render whole (the
    print-ready page) or in parts (its PDF): `sheets` are the 300 Log's
    sheets or the Forms 301, one sheet each."""

    kind: str
    template: str
    filename: str
    values: dict[str, Any]
    key: str  # the template's name for the sheets
    sheets: list[dict[str, Any]] = field(default_factory=list)

    def html(self, sheets: list[dict[str, Any]] | None = None, **extra: Any) -> str:
        chosen = self.sheets if sheets is None else sheets
        return render(FORMS + self.template, {**self.values, self.key: chosen, "as_pdf": True, **extra})

    def parts(self) -> Iterator[str]:
        for start in range(0, max(len(self.sheets), 1), SHEETS_PER_PART):
            yield self.html(self.sheets[start:start + SHEETS_PER_PART])


FILENAMES = {"log300": "osha-300-log-{site}-{year}.pdf", "forms301": "osha-301-{site}-{year}.pdf"}


def sheet_count(kind: str, cases: int) -> int:
    """How many sheets a form of `cases` recordable cases has."""
    return max(1, -(-cases // ROWS_PER_SHEET) if kind == "log300" else cases)


def printable(request: Request, kind: str, site: Site, year: int, company: str,
              item: SiteYear | None = None) -> Printable:
    """The 300 Log ("log300") or the Forms 301 ("forms301") of a site-year.
    `request` gives the translations (in a job, a request of its own)."""
    if item is None:
        item = load(request.dbsession, request.registry, [site], year)[0]
    common = {"site": site, "year": year, "company": company, **labels(request)}
    filename = FILENAMES[kind].format(site=site.id, year=year)
    if kind == "log300":
        found = sheets(log_rows(request, item))
        return Printable(kind, "log300.html", filename,
                         {**common, "totals": item.totals, "sheet_count": len(found)}, "sheets", found)
    forms = [form_301_json(case, incident, item.zone) for case, incident in item.cases]
    return Printable(kind, "form301.html", filename, common, "forms", forms)


def pdf_response(body: bytes, filename: str) -> Response:
    response = Response(body=body, content_type="application/pdf")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response


def answer(request: Request, template: str, values: dict[str, Any], filename: str, as_pdf: bool) -> Response:
    """The print-ready page, or the PDF of the same template."""
    pdf_route = PDF_OF.get(request.matched_route.name, request.matched_route.name)
    pdf_url = request.route_path(pdf_route, **request.matchdict, _query=list(request.GET.items()))
    html = render(FORMS + template, {**values, "as_pdf": as_pdf, "pdf_url": pdf_url}, request=request)
    if not as_pdf:
        return Response(html, content_type="text/html", charset="utf-8")
    return pdf_response(pdf(html), filename)


def site_year(request: Request) -> tuple[Choice, Any]:
    choice = Choice(request)
    if choice.site is None:
        raise HTTPNotFound()
    return choice, load(request.dbsession, request.registry, [choice.site], choice.year)[0]


def multi_sheet(request: Request, kind: str, print_route: str) -> Response:
    """A multi-sheet form: its print-ready page, its PDF made now when small,
    or, when big, the page that makes it in the background."""
    choice, item = site_year(request)
    form = printable(request, kind, choice.site, choice.year, company_name(request), item)
    if request.matched_route.name == print_route:
        pdf_url = request.route_path(PDF_OF[print_route], _query=list(request.GET.items()))
        html = render(FORMS + form.template, {**form.values, form.key: form.sheets, "as_pdf": False,
                                              "pdf_url": pdf_url}, request=request)
        return Response(html, content_type="text/html", charset="utf-8")
    if len(form.sheets) <= IN_REQUEST_SHEETS[kind]:
        return pdf_response(pdf(form.html()), form.filename)
    return render_offer(request, choice, form)


def log_300(request: Request) -> Response:
    return multi_sheet(request, "log300", "page.osha_log_print")


def forms_301_of_year(request: Request) -> Response:
    """Every Form 301 of a site's recordable cases in a year, one per sheet."""
    return multi_sheet(request, "forms301", "page.osha_forms301")


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


# --- big PDFs: made by a job -----------------------------------------------

def render_offer(request: Request, choice: Choice, form: Printable) -> Response:
    """A big form's PDF page: what will be made, the PDFs made lately, and
    the button that starts a job."""
    user = request.identity.user
    jobs = pdfjobs.recent(request.dbsession, user.organization_id, form.kind, choice.site.id, choice.year)
    values = {"site": choice.site, "year": choice.year, "kind": form.kind,
              "sheets": len(form.sheets), "jobs": [pdfjobs.job_json(job) for job in jobs],
              "action": request.route_path(request.matched_route.name, _query=choice.query())}
    return render_page(request, "pdf_offer.html", values)


def render_page(request: Request, template: str, values: dict[str, Any]) -> Response:
    from pyramid.renderers import render_to_response

    return render_to_response(TEMPLATES + template, values, request=request)


def start_job(request: Request) -> Response:
    """POST to a big form's PDF: start the job (or join the one under way)
    and go to its progress page."""
    kind = "log300" if request.matched_route.name == "page.osha_log_pdf" else "forms301"
    choice, item = site_year(request)
    job, new = pdfjobs.start(request.dbsession, kind=kind, site=choice.site, year=choice.year,
                             user=request.identity.user, sheets=sheet_count(kind, len(item.cases)),
                             filename=FILENAMES[kind].format(site=choice.site.id, year=choice.year))
    if new:
        queue_job(request, pdfjobs.JOB, job.id)
    return HTTPSeeOther(request.route_path("page.osha_pdf_job", token=job.token))


def the_job(request: Request) -> PdfJob:
    job = pdfjobs.job_of(request.dbsession, request.matchdict["token"],
                         request.identity.account.organization_id)
    if job is None:
        raise HTTPNotFound()
    return job


def job_page(request: Request) -> Response:
    """A job's progress page, or (polled by htmx) its progress block."""
    job = the_job(request)
    site = request.dbsession.get(Site, job.site_id)
    progress_only = request.matched_route.name == "page.osha_pdf_progress"
    template = "pdf_progress.html" if progress_only else "pdf_job.html"
    return render_page(request, template, {"job": pdfjobs.job_json(job), "site": site})


def job_file(request: Request) -> Response:
    job = the_job(request)
    if job.status != "done" or job.pdf is None:
        raise HTTPNotFound()
    return pdf_response(job.pdf, job.filename)


def make_pdf(registry: Registry, job_id: int) -> None:
    """The job: lay the form out part by part, recording progress after each
    part, then store the file. Reads the data as it is now (a case changed
    since the request is in the PDF)."""
    factory = registry["dbsession_factory"]
    with prepare(registry=registry) as env, factory() as dbsession:
        job = dbsession.get(PdfJob, job_id)
        if job is None or job.status not in pdfjobs.UNFINISHED:
            return
        try:
            site = dbsession.get(Site, job.site_id)
            org = dbsession.get(Organization, job.organization_id)
            request = env["request"]
            item = load(dbsession, registry, [site], job.year)[0]
            form = printable(request, job.kind, site, job.year, org.name if org else "", item)
            pdfjobs.progress(dbsession, job_id, 0, len(form.sheets))
            dbsession.commit()

            def done(parts: int) -> None:
                pdfjobs.progress(dbsession, job_id, min(parts * SHEETS_PER_PART, len(form.sheets)))
                dbsession.commit()

            body = pdf_of_parts(form.parts(), done, processes(registry))
            pdfjobs.finish(dbsession, job_id, body)
            dbsession.commit()
        except Exception:
            log.exception("PDF job %s failed", job_id)
            dbsession.rollback()
            pdfjobs.fail(dbsession, job_id)
            dbsession.commit()


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
    for pdf_name in ("page.osha_log_pdf", "page.osha_forms301_pdf"):
        config.add_view(start_job, route_name=pdf_name, request_method="POST", permission=MANAGE)
    job_path = r"/osha/pdfs/{token:[A-Za-z0-9_-]{16,64}}"
    config.add_route("page.osha_pdf_job", job_path, factory=ROOT)
    config.add_route("page.osha_pdf_progress", job_path + "/progress", factory=ROOT)
    config.add_route("page.osha_pdf_file", job_path + "/file", factory=ROOT)
    config.add_view(job_page, route_name="page.osha_pdf_job", request_method="GET", permission=MANAGE)
    config.add_view(job_page, route_name="page.osha_pdf_progress", request_method="GET", permission=MANAGE)
    config.add_view(job_file, route_name="page.osha_pdf_file", request_method="GET", permission=MANAGE)
    config.add_setting(PROCESSES, "EHS_OSHA_PDF_PROCESSES", process_count, "auto")
    config.add_job(pdfjobs.JOB, make_pdf)
    config.add_periodic_job(pdfjobs.PURGE_JOB, pdfjobs.purge_job, pdfjobs.PURGE_SCHEDULE)
