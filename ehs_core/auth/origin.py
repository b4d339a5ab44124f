"""Request-origin check against cross-site request forgery (spec
"Authentication" item 6; OWASP CSRF cheat sheet, "Verifying Origin").

Unsafe requests that a cross-site form could send (form, multipart,
body-less) must carry an `Origin` equal to `ehs.public_url`; other bodies
without one (text/plain) are refused as not JSON (415).
JSON bodies must be `application/json`, which browsers send cross-site only
after a CORS preflight that this service never grants. Unlike Pyramid's
`check_csrf_origin`, this check also runs over plain HTTP.
"""

from __future__ import annotations

import logging
from typing import Any

from pyramid.config import Configurator
from pyramid.events import NewRequest

from ehs_core.errors import APIError

log = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
# What an HTML form on another site can send (besides text/plain, which no
# endpoint takes); these, and body-less requests, need the Origin.
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


def check_origin(event: NewRequest) -> None:
    request = event.request
    if request.method in SAFE_METHODS:
        return
    expected = request.registry.settings["ehs.public_url"]
    origin = request.headers.get("Origin")
    if origin is not None:
        if origin != expected:
            log.warning("cross-origin %s %s refused (Origin %r)", request.method,
                        request.path_info, origin[:200])
            if origin == f"{request.scheme}://{request.host}":
                # The browser opened this very service at another address than
                # the configured one: say what to set rather than a bare 403.
                raise APIError(403, f"This service's address is set to {expected}, but this page was "
                                    f"opened at {origin}. Open {expected}, or set EHS_PUBLIC_URL "
                                    f"(ehs.public_url) to {origin} and restart.")
            raise APIError(403, "Cross-origin request refused")
        return
    content_type = request.content_type or ""
    if content_type == "application/json":
        # A body-less one goes on to a view that takes a JSON body, which
        # answers 400 for the empty body; any other view refuses it
        # (origin_checked_view).
        return
    if content_type not in FORM_TYPES and request.content_length:
        # No form can send this and no endpoint takes it; refused either way,
        # a 415 says what the client did wrong.
        raise APIError(415, "Send the body as application/json")
    log.warning("%s %s without Origin refused", request.method, request.path_info)
    raise APIError(403, "Cross-origin request refused: Origin header required")


def bodiless_json_without_origin(request: Any) -> bool:
    """An unsafe request labelled JSON that carries neither a body nor an
    Origin: `check_origin` lets it through, only for a view that takes a
    JSON body. Worked out from the request itself where the view deriver
    needs it, rather than a mark `check_origin` would leave in the environ
    (the style guide: per-request state goes through Pyramid's request
    methods, never parked in request.environ)."""
    return (request.method not in SAFE_METHODS and request.headers.get("Origin") is None
            and request.content_type == "application/json" and not request.content_length)


def origin_checked_view(view: Any, info: Any) -> Any:
    """View deriver: a body-less request labelled JSON and sent without
    Origin reaches only views that take a JSON body (which refuse it as
    empty); any other view refuses it like any body-less request."""
    if info.exception_only or info.options.get("body") is not None:
        return view

    def wrapper(context: Any, request: Any) -> Any:
        if bodiless_json_without_origin(request):
            raise APIError(403, "Cross-origin request refused: Origin header required")
        return view(context, request)

    return wrapper


def includeme(config: Configurator) -> None:
    config.add_subscriber(check_origin, NewRequest)
    config.add_view_deriver(origin_checked_view)
