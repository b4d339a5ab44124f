"""What a request may bring before any view reads it: a body within the
configured size, and a query string that is UTF-8 text.

A body whose Content-Length is over the limit is refused with 413 before a
byte of it is read (ASVS 5 4.1.x, OWASP "Denial of Service" cheat sheet:
limit request sizes); JSON bodies get a limit far below the upload limit
(`ehs.max_json_kb`), multipart uploads the files a request may carry
(`ehs.max_upload_mb` each, 5 files) plus room for the form's other parts.
pyramid_retry copies a body before the first attempt so that it can replay
it, so it is told to make a single attempt for such a body, and for a body
without a Content-Length, which `ehs_core.validation.json_body` reads only up
to the limit.
"""

from __future__ import annotations

import io
from urllib.parse import unquote_to_bytes

from pyramid.config import Configurator
from pyramid.events import NewRequest
from pyramid.request import Request

from ehs_core.errors import APIError
from ehs_core.servers import PROXY_ADDR

MAX_FILES_PER_REQUEST = 5  # the reporting link's report; one file elsewhere
FORM_ROOM = 1024 * 1024  # the other parts of a multipart body


def size_text(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit // 1024} KiB"


def body_limit(request: Request) -> int:
    settings = request.registry.settings
    if (request.content_type or "").startswith("multipart/form-data"):
        return settings["ehs.max_upload_mb"] * 1024 * 1024 * MAX_FILES_PER_REQUEST + FORM_ROOM
    return settings["ehs.max_json_kb"] * 1024


def retry_attempts(request: Request) -> int | None:
    """pyramid_retry's `activate_hook`: one attempt (no copy of the body)
    for a body that will be refused or has no announced length; the default
    otherwise. A request that has no body (neither a length nor a transfer
    coding, RFC 9112 6.3: most are GETs) is given an empty one that
    pyramid_retry rewinds for another attempt, rather than copying the
    server's input stream only to find it empty."""
    environ = request.environ
    if not environ.get("CONTENT_LENGTH") and "HTTP_TRANSFER_ENCODING" not in environ:
        environ["wsgi.input"] = io.BytesIO()
        environ["webob.is_body_seekable"] = True
        return None
    length = request.content_length
    if length is not None and length > body_limit(request):
        return 1
    if length is None and request.headers.get("Transfer-Encoding"):
        return 1
    return None


def check_request(event: NewRequest) -> None:
    request = event.request
    environ = request.environ
    # Read from the environ first: most requests have neither a body nor a query.
    if environ.get("CONTENT_LENGTH"):
        length = request.content_length
        if length is not None and length > body_limit(request):
            raise APIError(413, f"The body is too large (at most {size_text(body_limit(request))})")
    query = environ.get("QUERY_STRING")
    if not query:
        return
    try:
        unquote_to_bytes(query.replace("+", " ")).decode("utf-8")
    except UnicodeDecodeError:
        # Strict UTF-8 also refuses encoded surrogates (%ED%A0%80).
        raise APIError(400, "Invalid request", [
            {"path": "", "message": "The query string must be UTF-8 text"}]) from None


def proxy_address(request: Request) -> str | None:
    """`request.proxy_address` (reified): the trusted proxy's own address
    when REMOTE_ADDR names the client behind it (`servers.ForwardedClient`),
    else None. That middleware runs before any Pyramid request exists, so
    the WSGI environ is its only channel to the application; this is the
    one place the application reads it (the style guide: per-request state
    goes through Pyramid's request methods, never parked in
    request.environ)."""
    return request.environ.get(PROXY_ADDR)


def includeme(config: Configurator) -> None:
    config.add_request_method(proxy_address, "proxy_address", reify=True)
    config.add_subscriber(check_request, NewRequest)
