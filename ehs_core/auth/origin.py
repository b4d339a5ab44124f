"""Request-origin check against cross-site request forgery (spec
"Authentication" item 6; OWASP CSRF cheat sheet, "Verifying Origin").

Unsafe requests that a cross-site form could send (form, multipart,
text/plain, body-less) must carry an `Origin` equal to `ehs.public_url`.
JSON bodies must be `application/json`, which browsers send cross-site only
after a CORS preflight that this service never grants. Unlike Pyramid's
`check_csrf_origin`, this check also runs over plain HTTP.
"""

from __future__ import annotations

import logging

from pyramid.config import Configurator
from pyramid.events import NewRequest

from ehs_core.errors import APIError

log = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


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
            raise APIError(403, "Cross-origin request refused")
        return
    if request.content_type == "application/json" and request.content_length:
        return
    log.warning("%s %s without Origin refused", request.method, request.path_info)
    raise APIError(403, "Cross-origin request refused: Origin header required")


def includeme(config: Configurator) -> None:
    config.add_subscriber(check_origin, NewRequest)
