"""Error answers for pages: a page asked for by a person gets a page back
(the 404 page, a sign-in redirect, the 403 page), never the API's JSON. An
incident that does not exist and one the person may not see give the same
404 page, as in the API (ASVS 5 8.2.2)."""

from __future__ import annotations

import logging

from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPException, HTTPFound
from pyramid.renderers import render_to_response
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ehs_core.errors import RETRY_AFTER_OUTAGE, DomainError, database_unreachable, log_unreachable

log = logging.getLogger(__name__)

# Everything outside the API, the static files and the kiosk's token pages.
PAGE_PATHS = r"^/(?!api(/|$)|static/)"


def error_page(request: Request, status: int, title: str, message: str) -> Response:
    response = render_to_response("ehs_core:templates/ui/error.html",
                                  {"status": status, "title": title, "message": message}, request=request)
    response.status = status
    return response


def page_not_found(request: Request) -> Response:
    return error_page(request, 404, request.localizer.translate("Page not found"),
                      request.localizer.translate(
                          "There is nothing here, or you do not have access to it. "
                          "Check the number or the link, or go back to the home page."))


def page_forbidden(request: Request) -> Response:
    identity = request.identity
    if identity is None or not identity.is_user:
        target = request.path_qs if request.method == "GET" else request.route_path("home")
        return HTTPFound(request.route_path("page.sign_in", _query={"next": target}))
    log.info("page access denied: user %s %s %s", identity.user_id, request.method, request.path_info)
    return error_page(request, 403, request.localizer.translate("Not allowed"),
                      request.localizer.translate("Your role does not allow this. Ask a safety "
                                                  "manager or an admin if you need it."))


def page_http_exception(exc: HTTPException, request: Request) -> Response:
    if exc.code == 404:
        return page_not_found(request)
    if exc.code in (401, 403):
        return page_forbidden(request)
    if exc.code < 400:
        return exc
    return error_page(request, exc.code, exc.title, str(exc.detail or exc.title))


def page_refusal(exc: DomainError, request: Request) -> Response:
    """A refusal no page form caught (the Origin check, a request too large)."""
    if exc.status == 404:
        return page_not_found(request)
    return error_page(request, exc.status, request.localizer.translate("This cannot be done"),
                      request.localizer.translate(exc.message))


def page_server_error(exc: Exception, request: Request) -> Response:
    log.exception("unhandled error on page %s %s", request.method, request.path_info)
    return error_page(request, 500, request.localizer.translate("Something went wrong"),
                      request.localizer.translate("Nothing was changed. Please try again; if it "
                                                  "happens again, tell your administrator."))


def page_database_error(exc: Exception, request: Request) -> Response:
    """The same for a page: a person's browser gets the error page, not JSON."""
    if not database_unreachable(exc):
        return page_server_error(exc, request)
    log_unreachable(exc, request.method, request.path_info)
    # Without the database nobody can be recognised: the page is the one a
    # signed-out visitor gets (the security policy's answer for this
    # request, which the layout reads, settled as "nobody" so it asks the
    # database no more).
    request.caller.settle(None)
    translate = request.localizer.translate
    response = error_page(request, 503, translate("Temporarily unavailable"),
                          translate("The service cannot reach its database just now. Nothing you sent "
                                    "was saved; please try again in a moment."))
    response.headers["Retry-After"] = RETRY_AFTER_OUTAGE
    return response


def includeme(config: Configurator) -> None:
    # The database's errors on a page (everything outside /api and /static):
    # more predicates than the JSON view of ehs_core.errors, so these win.
    for context in (DBAPIError, PoolTimeout):
        config.add_exception_view(page_database_error, context=context, path_info=r"^/(?!api(/|$)|static/)",
                                  retryable_error=False)
    # More predicates than the API's error views, so these win for pages.
    config.add_notfound_view(page_not_found, path_info=PAGE_PATHS)
    config.add_forbidden_view(page_forbidden, path_info=PAGE_PATHS)
    config.add_exception_view(page_http_exception, context=HTTPException, path_info=PAGE_PATHS)
    config.add_exception_view(page_refusal, context=DomainError, path_info=PAGE_PATHS)
    config.add_exception_view(page_server_error, context=Exception, path_info=PAGE_PATHS,
                              retryable_error=False)
