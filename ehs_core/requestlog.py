"""A request id on every request and every log line.

The id comes from a trusted proxy's `X-Request-Id` (when well formed) or is
made here; it is echoed in the response and attached to every log record
written while the request runs, so one request's lines can be found
together in the structured (JSON) logs of production.ini.
"""

from __future__ import annotations

import contextvars
import logging
import os
import re
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


def request_id_tween_factory(handler: Callable[[Request], Response], registry: Registry) -> Callable:
    def tween(request: Request) -> Response:
        # The header read from the environ: `request.headers` builds a view of it.
        given = request.environ.get(ENVIRON_KEY)
        request_id = given if given is not None and WELL_FORMED.match(given) else new_request_id()
        request.request_id = request_id
        token = current_request_id.set(request_id)
        try:
            response = handler(request)
        finally:
            current_request_id.reset(token)
        response.headers[HEADER] = request_id
        return response

    return tween


def _with_request_id(record: logging.LogRecord) -> logging.LogRecord:
    if not hasattr(record, "request_id"):
        record.request_id = current_request_id.get()
    return record


class TextFormatter(logging.Formatter):
    """Plain text lines that may use %(request_id)s (development.ini).
    A formatter, not a filter, because ini logging files cannot add filters."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(_with_request_id(record))


class JSONFormatter(JsonFormatter):
    """One JSON object per line with the request id (production.ini)."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(_with_request_id(record))


def includeme(config: Configurator) -> None:
    config.add_tween("ehs_core.requestlog.request_id_tween_factory", over="pyramid_tm.tm_tween_factory")
