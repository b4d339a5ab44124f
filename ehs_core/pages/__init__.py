"""The small HTML pages that emailed links open. They read the token from
the link and POST it only when the person presses the button, so mail
scanners that follow links cannot use a token up."""

from __future__ import annotations

from importlib.resources import files

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED

# Pages load only their own script and style; nothing may frame them.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def _page(name: str):
    html = files("ehs_core.pages").joinpath(f"templates/{name}.html").read_text(encoding="utf-8")

    def view(request: Request) -> Response:
        response = Response(html, content_type="text/html", charset="utf-8")
        response.headers.update(PAGE_HEADERS)
        return response

    return view


def includeme(config: Configurator) -> None:
    config.add_route("page.magic", "/auth/magic")
    config.add_route("page.reset", "/auth/reset")
    config.add_view(_page("magic"), route_name="page.magic", request_method="GET",
                    permission=NO_PERMISSION_REQUIRED)
    config.add_view(_page("reset"), route_name="page.reset", request_method="GET",
                    permission=NO_PERMISSION_REQUIRED)
    config.add_static_view("static", "ehs_core:static", cache_max_age=3600)
