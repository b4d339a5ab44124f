"""The violent incident log as a PDF (Labor Code §6401.9(d): the log is
produced for employees on request, and a file is what they keep). The same
entries as the API and the printable page (`violence.log_entries`, already
without any name, address, phone, e-mail or number of a person), laid out
by WeasyPrint, which this plugin calls itself (a plugin never imports
another plugin)."""

from __future__ import annotations

import threading
from importlib.resources import files
from typing import Any

from pyramid.renderers import render
from pyramid.request import Request
from pyramid.response import Response

PDF_CSS = files("ehs_plugins.calosha") / "static" / "log_pdf.css"

# One layout at a time in a process: WeasyPrint (Pango, fontconfig) is not
# documented as safe across threads.
_layout = threading.Lock()


def refuse_urls(url: str, *args: Any, **kw: Any) -> dict[str, Any]:
    """WeasyPrint's URL fetcher: nothing is fetched while the PDF is made."""
    raise ValueError(f"not fetched: {url[:80]}")


def pdf_of(html: str) -> bytes:
    import weasyprint

    with _layout:
        return weasyprint.HTML(string=html, url_fetcher=refuse_urls).write_pdf(
            stylesheets=[weasyprint.CSS(string=PDF_CSS.read_text("utf-8"))])


def log_pdf(request: Request, template: str, values: dict[str, Any], filename: str) -> Response:
    """The log's PDF, as an attachment nobody caches (it is a record about people)."""
    body = pdf_of(render(template, values, request=request))
    response = Response(body=body, content_type="application/pdf")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response
