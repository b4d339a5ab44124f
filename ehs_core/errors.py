"""One JSON error shape for everything under /api: `{error}` and, for
validation failures, `{error, issues: [{path, message}]}`.

Operations (the service modules: `incidents/filing.py`, `attachments/storage.py`
…) raise domain errors, named for what went wrong (`Invalid`, `NotFound`,
`Conflict`, `Forbidden`, `Unprocessable` …), never HTTP exceptions, so a
second face (HTML pages) can show the same refusal its own way. Each kind
carries the HTTP status the JSON API answers with, and the one exception view
below turns any of them (or colander.Invalid) into the JSON shape. Views may
raise `APIError(status, message)` for refusals that only exist at the HTTP
level (content type, request size). A 500 is logged with its traceback and
answered with a generic message only.
"""

from __future__ import annotations

import logging
import sys
from string import Template
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPException, HTTPNotFound
from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import exception_view_config, forbidden_view_config, notfound_view_config
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ehs_core.requestlog import loggable_path

log = logging.getLogger(__name__)


class DomainError(Exception):
    """A refusal by an operation, in the user's words. `status` is what the
    JSON API answers; `issues` name fields; `headers` (e.g. Retry-After)
    travel with it."""

    status: int = 400

    def __init__(self, message: str, issues: list[dict[str, str]] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.issues = issues
        self.headers = headers or {}


class Invalid(DomainError):
    """Data that breaks a rule colander cannot express alone, about one field."""

    status = 400

    def __init__(self, path: str, message: str) -> None:
        super().__init__("Invalid request", [{"path": path, "message": message}])


class Forbidden(DomainError):
    """The caller's role is too low for this particular change."""

    status = 403


class NotFound(DomainError):
    """Missing, or not the caller's to see (answered alike, ASVS 5 8.2.2)."""

    status = 404

    def __init__(self, message: str = "Not found") -> None:
        super().__init__(message)


class Conflict(DomainError):
    """The current state refuses the change (workflow, limits, duplicates)."""

    status = 409


class Unprocessable(DomainError):
    """Well-formed but contradicting what was stored (a clientId reused for
    another report)."""

    status = 422


class TooMany(DomainError):
    """A rate limit; `headers` carries Retry-After."""

    status = 429


class APIError(DomainError):
    """A refusal with an explicit status, for adapters (views) whose rule is
    about HTTP itself: content types, request sizes, missing parts."""

    def __init__(self, status: int, message: str, issues: list[dict[str, str]] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message, issues, headers)
        self.status = status


def invalid(path: str, message: str) -> Invalid:
    """A 400 about one field, for rules colander cannot express alone."""
    return Invalid(path, message)


def error_response(request: Request, status: int, message: str,
                   issues: list[dict[str, str]] | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    body: dict[str, Any] = {"error": message}
    if issues is not None:
        body["issues"] = issues
    response = Response(json_body=body, status=status, charset="utf-8")
    response.content_type = "application/json"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


# colander's own messages, in the words of this API's users; a message of
# ours passes through unchanged.
COLANDER_WORDS = {
    "Required": "Required",
    "Shorter than minimum length ${min}": "Must be at least ${min} ${unit} long",
    "Longer than maximum length ${max}": "Must be at most ${max} ${unit} long",
    "${val} is less than minimum value ${min}": "Must be at least ${min}",
    "${val} is greater than maximum value ${max}": "Must be at most ${max}",
    '"${val}" is not one of ${choices}': "Must be one of: ${choices}",
    "String does not match expected pattern": "Not in the expected format",
    '"${val}" is not a mapping type: ${err}': "Must be a JSON object",
    '"${val}" is not iterable': "Must be a list",
}


def _words(exc: colander.Invalid, message: Any) -> str:
    text = COLANDER_WORDS.get(str(getattr(message, "default", None) or message))
    if text is None:
        return next(iter(colander.interpolate([message])))
    mapping = dict(getattr(message, "mapping", None) or {})
    mapping["unit"] = "items" if isinstance(exc.node.typ, colander.Sequence) else "characters"
    return Template(text).safe_substitute({key: str(value) for key, value in mapping.items()})


def issues_from_invalid(exc: colander.Invalid) -> list[dict[str, str]]:
    """colander's error tree as `[{path, message}]`: dotted paths as
    colander's `asdict` builds them, messages in the user's words."""
    issues = []
    for path in exc.paths():
        keys, messages = [], []
        for error in path:
            for message in error.messages() if error.msg else ():
                words = _words(error, message)
                if words not in messages:
                    messages.append(words)
            key = error._keyname()
            if key:
                keys.append(key)
        issues.append({"path": ".".join(keys), "message": "; ".join(messages)})
    return sorted(issues, key=lambda issue: issue["path"])


@exception_view_config(DomainError)
def api_error(exc: DomainError, request: Request) -> Response:
    return error_response(request, exc.status, exc.message, exc.issues, exc.headers)


@exception_view_config(colander.Invalid)
def validation_error(exc: colander.Invalid, request: Request) -> Response:
    return error_response(request, 400, "Invalid request", issues_from_invalid(exc))


def route_methods(registry: Any) -> dict[str, set[str]]:
    """Route name -> the methods its views answer (HEAD with GET)."""
    methods = registry.get("route_methods")
    if methods is None:
        methods = {}
        introspector = registry.introspector
        for route in introspector.get_category("routes"):
            intr = route["introspectable"]
            found = methods.setdefault(intr["name"], set())
            for related in introspector.related(intr):
                declared = related["request_methods"] if related.category_name == "views" else None
                if declared:
                    found.update([declared] if isinstance(declared, str) else declared)
            if "GET" in found:
                found.add("HEAD")
        registry["route_methods"] = methods
    return methods


@notfound_view_config()
def not_found(request: Request) -> Response:
    route = request.matched_route
    if route is not None:
        allowed = route_methods(request.registry).get(route.name)
        if allowed and request.method not in allowed:
            # RFC 9110 15.5.6: the resource exists, the method does not.
            return error_response(request, 405, f"{request.method} is not allowed here",
                                  headers={"Allow": ", ".join(sorted(allowed))})
    if request.path_info.startswith("/api/") or request.path_info == "/api":
        return error_response(request, 404, "Not found")
    return Response("Not found\n", status=404, content_type="text/plain")


@forbidden_view_config()
def forbidden(request: Request) -> Response:
    identity = request.identity
    if identity is None or not identity.is_user:
        log.info("unauthenticated request refused: %s %s", request.method, loggable_path(request.path_info))
        return error_response(request, 401, "Authentication required")
    log.info("access denied: user %s %s %s", identity.user_id, request.method,
             loggable_path(request.path_info))
    return error_response(request, 403, "You do not have permission to do this")


@exception_view_config(HTTPException)
def http_exception(exc: HTTPException, request: Request) -> Response:
    if isinstance(exc, HTTPNotFound):
        return not_found(request)
    if exc.code < 400:
        return exc
    message = exc.title if exc.code >= 500 else (exc.detail or exc.title)
    return error_response(request, exc.code, str(message))


@exception_view_config(Exception, retryable_error=False)
def server_error(exc: Exception, request: Request) -> Response:
    log.exception("unhandled error on %s %s", request.method, loggable_path(request.path_info))
    return error_response(request, 500, "Internal server error")


# Seconds a client is asked to wait while the database cannot be reached.
RETRY_AFTER_OUTAGE = "5"


def database_unreachable(exc: BaseException) -> bool:
    """The database cannot serve now (refused or dropped connection, a
    server shutting down, a full pool, SQLite locked): a 503 the client
    may retry (RFC 9110 15.6.4), not a 500."""
    if isinstance(exc, PoolTimeout):
        return True
    return isinstance(exc, DBAPIError) and (
        exc.connection_invalidated or isinstance(exc, OperationalError | InterfaceError))


def log_unreachable(exc: BaseException, method: str, path: str) -> None:
    """One line per failed request, no traceback: an outage of a minute
    wrote 9 MB of tracebacks (issue 35)."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    log.error("database unreachable on %s %s: %s: %s", method, path, cause.__class__.__name__,
              " ".join(str(cause).split())[:200])


@exception_view_config(DBAPIError, retryable_error=False)
@exception_view_config(PoolTimeout)
def database_error(exc: Exception, request: Request) -> Response:
    if database_unreachable(exc):
        # A connection that died after the work was done (during commit or
        # clean-up) or could not be made at all: the next request may well
        # succeed.
        log_unreachable(exc, request.method, loggable_path(request.path_info))
        return error_response(request, 503, "The service cannot reach its database; please try again "
                              "in a moment", headers={"Retry-After": RETRY_AFTER_OUTAGE})
    return server_error(exc, request)


@exception_view_config(Exception, retryable_error=True,
                       last_retry_attempt=True)
def server_error_after_retries(exc: Exception, request: Request) -> Response:
    log.exception("giving up after retries on %s %s", request.method, loggable_path(request.path_info))
    return error_response(request, 503, "The service is busy; please try again")


class LastResortErrors:
    """WSGI middleware around the whole application: anything that escapes
    Pyramid (a failed commit, a broken connection during abort) is logged
    and answered with the same JSON 500, never a server's HTML or traceback."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:  # the Router's registry etc.
        return getattr(self.app, name)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        try:
            return self.app(environ, start_response)
        except Exception as exc:
            method, path = environ.get("REQUEST_METHOD"), loggable_path(environ.get("PATH_INFO"))
            if database_unreachable(exc):  # a commit or clean-up that lost the database
                log_unreachable(exc, str(method), str(path))
                body = b'{"error": "The service cannot reach its database; please try again in a moment"}'
                start_response("503 Service Unavailable", [
                    ("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                    ("Retry-After", RETRY_AFTER_OUTAGE)], sys.exc_info())
                return [body]
            log.exception("unhandled error outside the request's views: %s %s", method, path)
            body = b'{"error": "Internal server error"}'
            start_response("500 Internal Server Error", [("Content-Type", "application/json"),
                                                         ("Content-Length", str(len(body)))],
                           sys.exc_info())
            return [body]


def includeme(config: Configurator) -> None:
    config.scan(__name__)
