"""A request id on every request and every log line, and one access-log
line per request.

The id comes from a trusted proxy's `X-Request-Id` (when well formed) or is
made here; it is echoed in the response and attached to every log record
written while the request runs (and to the jobs and mail it queues, which
log under it when they run: `ehs_core.jobs`), so one request's lines can be
found together in the structured (JSON) logs of production.ini.

The access log (logger `ehs.access`) writes method, route, status,
duration, request id and user id: the route's pattern, never the path or
query string a person sent, which may hold the single-use token of an
invitation, reset or sign-in link or a kiosk link's secret (ASVS 4.0
V7.1.1: no session tokens or secrets in logs; issue 35: gunicorn's access
log wrote them in full). Times are UTC with their offset.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import logging
import os
import re
import time
from collections.abc import Callable

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from pyramid.response import Response
from pythonjsonlogger.json import JsonFormatter

HEADER = "X-Request-Id"
ENVIRON_KEY = "HTTP_X_REQUEST_ID"
# The version (4) and variant (RFC 9562) bits, set as uuid.uuid4() sets them.
UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
UUID4_SET = (4 << 76) | (0x8000 << 48)
WELL_FORMED = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def new_request_id() -> str:
    """A random (version 4) UUID in hex, as `uuid.uuid4().hex` writes it,
    without building a `UUID` object on every request."""
    value = int.from_bytes(os.urandom(16), "big") & UUID4_CLEAR | UUID4_SET
    return f"{value:032x}"


access_log = logging.getLogger("ehs.access")

# Paths whose segment after the prefix is a secret: a reporting link's token
# (/k/<token>) and a report's follow-up code (/f/<code>,
# /api/follow-up/<code>, issue #39 item 3).
SECRET_SEGMENT = re.compile(r"^(/k/|/f/|/api/follow-up/)[^/]+")


def loggable_path(path: str | None) -> str:
    """A path as log lines may write it: the secret segment of the paths
    above becomes `{secret}` (ASVS 4.0 V7.1.1). The access log writes the
    route's pattern only; the error log lines, which write the path, use
    this."""
    return SECRET_SEGMENT.sub(r"\1{secret}", path or "")


def request_id_tween_factory(handler: Callable[[Request], Response], registry: Registry) -> Callable:
    def tween(request: Request) -> Response:
        started = time.perf_counter()
        # The header read from the environ: `request.headers` builds a view of it.
        given = request.environ.get(ENVIRON_KEY)
        request_id = given if given is not None and WELL_FORMED.match(given) else new_request_id()
        request.request_id = request_id
        token = current_request_id.set(request_id)
        status = 500
        try:
            response = handler(request)
            status = response.status_int
        finally:
            if access_log.isEnabledFor(logging.INFO):
                log_access(request, status, time.perf_counter() - started)
            current_request_id.reset(token)
        response.headers[HEADER] = request_id
        return response

    return tween


def log_access(request: Request, status: int, seconds: float) -> None:
    """One line for the request: no path or query string as sent (see the
    module's docstring), the user only when the request already knew it."""
    route = request.matched_route
    # The identity the request worked out, if it did (`request.caller`);
    # asking for it now would ask the providers, and the database, again
    # (the request may have failed because the database is away).
    known = request.caller
    identity = known.identity if known.known else None
    user_id = getattr(identity, "user_id", None) if identity is not None else None
    access_log.info("%s %s %d", request.method, route.pattern if route is not None else "-", status,
                    extra={"http": {"method": request.method,
                                    "route": route.name if route is not None else None,
                                    "pattern": route.pattern if route is not None else None,
                                    "status": status},
                           "duration_ms": round(seconds * 1000, 1), "user_id": user_id})


def _with_request_id(record: logging.LogRecord) -> logging.LogRecord:
    if not hasattr(record, "request_id"):
        record.request_id = current_request_id.get()
    return record


def utc_time(record: logging.LogRecord) -> str:
    """The record's time in UTC with its offset (RFC 3339), whatever the
    host's zone: lines from several hosts sort and compare as written."""
    return dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds")


class TextFormatter(logging.Formatter):
    """Plain text lines that may use %(request_id)s (development.ini).
    A formatter, not a filter, because ini logging files cannot add filters."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(_with_request_id(record))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return utc_time(record)


class JSONFormatter(JsonFormatter):
    """One JSON object per line with the request id (production.ini)."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(_with_request_id(record))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return utc_time(record)


def includeme(config: Configurator) -> None:
    config.add_tween("ehs_core.requestlog.request_id_tween_factory", over="pyramid_tm.tm_tween_factory")
