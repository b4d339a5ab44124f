"""CSV export of the incident list (same filters, no paging, at most 10,000
rows). Rows are fetched in batches and written to a spooled file that moves
to disk past 1 MB, so memory stays flat whatever the row count, and the
whole file is read in the request's own transaction (a consistent view)."""

from __future__ import annotations

import csv
import io
import tempfile
from collections.abc import Iterable
from typing import Any

from pyramid.request import Request
from pyramid.response import FileIter, Response
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.db import streaming_session
from ehs_core.incidents.listing import list_query, list_schema, order_of
from ehs_core.incidents.models import Incident
from ehs_core.incidents.serialize import occurred_at
from ehs_core.security import Permission
from ehs_core.sites.models import Area, Site
from ehs_core.users.models import User

MAX_ROWS = 10_000
BATCH = 500
HEADER = ["reference", "title", "type", "severity", "status", "occurredAt", "site", "area",
          "locationDetail", "description", "immediateAction", "reporter", "createdAt", "closedAt"]
# A cell starting with one of these is run as a formula by spreadsheets
# (OWASP "CSV Injection"); prefix it with a quote so it stays text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def safe_cell(value: Any) -> str:
    if value is None:
        return ""
    text = str(value)
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return text


def write_csv(rows: Iterable[list[Any]], target: Any) -> None:
    # RFC 4180: CRLF line ends, fields with separators or quotes quoted.
    writer = csv.writer(target, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(HEADER)
    for row in rows:
        writer.writerow([safe_cell(value) for value in row])


@view_config(route_name="incidents.export", request_method="GET", permission=Permission.signed_in,
             query=list_schema,
             media="text/csv")
def export(request: Request) -> Response:
    query = request.validated_query
    order = order_of(query)  # the list's order (`sort`)
    ids = (list_query(request, query).with_only_columns(Incident.id).order_by(*order)
           .limit(MAX_ROWS).subquery())
    stmt = (
        select(Incident, Site.name, Area.name, User.name)
        .join(ids, ids.c.id == Incident.id)
        .join(Site, Site.id == Incident.site_id)
        .outerjoin(Area, Area.id == Incident.area_id)
        .outerjoin(User, User.id == Incident.reporter_id)
        .order_by(*order)
        .execution_options(yield_per=BATCH)
    )

    def rows(reader: Any) -> Iterable[list[Any]]:
        for incident, site, area, reporter in reader.execute(stmt):
            yield [incident.reference, incident.title, incident.type, incident.severity,
                   incident.status, occurred_at(incident), site, area, incident.location_detail,
                   incident.description, incident.immediate_action, reporter,
                   incident.created_at.isoformat(), incident.closed_at.isoformat()
                   if incident.closed_at else None]

    spool = tempfile.SpooledTemporaryFile(max_size=1024 * 1024, mode="w+b")
    text = io.TextIOWrapper(spool, encoding="utf-8", newline="", write_through=True)
    text.write("\ufeff")  # BOM: spreadsheets then read the file as UTF-8
    # The rows stream through a server-side cursor, which needs a transaction.
    with streaming_session(request) as reader:
        write_csv(rows(reader), text)
    text.flush()
    text.detach()
    size = spool.tell()
    spool.seek(0)
    response = Response(content_type="text/csv", charset="utf-8")
    response.headers["Content-Disposition"] = 'attachment; filename="incidents.csv"'
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.content_length = size
    response.app_iter = FileIter(spool)
    return response
