"""CSV export of the incident list (same filters, no paging, at most 10,000
rows). Rows are fetched in batches and written to a spooled file that moves
to disk past 1 MB, so memory stays flat whatever the row count, and the
whole file is read in the request's own transaction (a consistent view).

Two layouts of the same rows (issue #36 item 7): the API's
(`/api/incidents/export`) is for programs, with the codes of the API
(`near_miss`) and ISO 8601 times with their offsets; the pages' download
(`/incidents/export.csv`, the list's "Export these as CSV") is for people:
headings and values in words, every time in the site's own zone, which a
column names. Both name who filed a report without an account and what
they reported through (a plugin's `add_reporter_source`, issue #36 item 5)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import tempfile
from collections.abc import Iterable
from typing import Any

from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request
from pyramid.response import FileIter, Response
from pyramid.view import view_config
from sqlalchemy import select

from ehs_core.db import streaming_session
from ehs_core.incidents.extensions import reporter_columns, reporter_of
from ehs_core.incidents.listing import list_query, list_schema, order_of
from ehs_core.incidents.models import Incident
from ehs_core.incidents.serialize import occurred_at
from ehs_core.security import Permission
from ehs_core.sites.models import Area, Site
from ehs_core.ui.rendering import label
from ehs_core.users.models import User
from ehs_core.zones import site_zone

_ = TranslationStringFactory("ehs")
MAX_ROWS = 10_000
BATCH = 500
HEADER = ["reference", "title", "type", "severity", "status", "occurredAt", "site", "area",
          "locationDetail", "description", "immediateAction", "reporter", "createdAt", "closedAt",
          "reportedThrough"]
# The pages' download: the same columns in words, then the zone its times are in.
HEADINGS = [_("Reference"), _("Title"), _("Type"), _("Severity"), _("Status"), _("Occurred (site time)"),
            _("Site"), _("Area"), _("Place"), _("Description"), _("Immediate action"), _("Reporter"),
            _("Reported (site time)"), _("Closed (site time)"), _("Reported through"), _("Time zone")]
LABELLED = (2, 3, 4)  # type, severity, status: codes, shown in words
SITE_TIME = "%Y-%m-%d %H:%M"
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


def write_csv(rows: Iterable[list[Any]], target: Any, header: list[str] = HEADER) -> None:
    # RFC 4180: CRLF line ends, fields with separators or quotes quoted.
    writer = csv.writer(target, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    for row in rows:
        writer.writerow([safe_cell(value) for value in row])


@view_config(route_name="incidents.export", request_method="GET", permission=Permission.signed_in,
             query=list_schema,
             media="text/csv")
def export(request: Request) -> Response:
    """The API's CSV: codes and ISO 8601 times, for programs."""
    return csv_response(request, for_people=False)


def csv_response(request: Request, for_people: bool) -> Response:
    """The list's matches (`request.validated_query`) as a CSV download:
    the API's layout, or the pages' (`for_people`: words and site times)."""
    query = request.validated_query
    order = order_of(query)  # the list's order (`sort`)
    ids = (list_query(request, query).with_only_columns(Incident.id).order_by(*order)
           .limit(MAX_ROWS).subquery())
    sources = reporter_columns(request)
    stmt = (
        select(Incident, Site.name, Area.name, User.name, Site.timezone, *(column for _s, column in sources))
        .join(ids, ids.c.id == Incident.id)
        .join(Site, Site.id == Incident.site_id)
        .outerjoin(Area, Area.id == Incident.area_id)
        .outerjoin(User, User.id == Incident.reporter_id)
        .order_by(*order)
        .execution_options(yield_per=BATCH)
    )
    localizer = request.localizer
    words: dict[str, str] = {}

    def word(code: str) -> str:
        if code not in words:
            words[code] = localizer.translate(label(code))
        return words[code]

    def rows(reader: Any) -> Iterable[list[Any]]:
        for incident, site, area, reporter, timezone, *raw in reader.execute(stmt):
            through = None
            if reporter is None and sources:
                found = reporter_of(request, {section.name: section.decode(request, incident, value)
                                              for (section, _c), value in zip(sources, raw, strict=True)})
                if found is not None:
                    reporter, through = found.name, found.through
            if not for_people:
                yield [incident.reference, incident.title, incident.type, incident.severity,
                       incident.status, occurred_at(incident), site, area, incident.location_detail,
                       incident.description, incident.immediate_action, reporter,
                       incident.created_at.isoformat(), incident.closed_at.isoformat()
                       if incident.closed_at else None, through]
                continue
            zone = site_zone(timezone, request.registry)

            def local(moment: dt.datetime | None, zone: dt.tzinfo = zone) -> str | None:
                return moment.astimezone(zone).strftime(SITE_TIME) if moment is not None else None

            yield [incident.reference, incident.title, word(incident.type), word(incident.severity),
                   word(incident.status), local(incident.occurred_at), site, area,
                   incident.location_detail, incident.description, incident.immediate_action, reporter,
                   local(incident.created_at), local(incident.closed_at), through,
                   timezone or getattr(zone, "key", str(zone))]

    header = [localizer.translate(h) for h in HEADINGS] if for_people else HEADER
    spool = tempfile.SpooledTemporaryFile(max_size=1024 * 1024, mode="w+b")
    text = io.TextIOWrapper(spool, encoding="utf-8", newline="", write_through=True)
    text.write("\ufeff")  # BOM: spreadsheets then read the file as UTF-8
    # The rows stream through a server-side cursor, which needs a transaction.
    with streaming_session(request) as reader:
        write_csv(rows(reader), text, header)
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
