"""Headers every `/api` answer carries, whatever view, error view or tween
produced it; and where every redirect leads.

API answers hold personal and injury data (OSHA 300/301 figures, medical
case detail), so no shared or browser cache may keep them (ASVS 5 14.3.2,
`Cache-Control: no-store`), and no browser may sniff a JSON or file answer
into something it would render or run (ASVS 5 3.4.4, `nosniff`). A
`NewResponse` subscriber sees every response the router hands back, error
answers included, so no endpoint can forget them.
"""

from __future__ import annotations

from pyramid.config import Configurator
from pyramid.events import NewResponse

API_PREFIX = "/api/"
API_HEADERS = (("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"))
SET_HERE = frozenset(name.lower() for name, _ in API_HEADERS)


def api_response_headers(event: NewResponse) -> None:
    # The environ's own PATH_INFO: the prefix is ASCII, so it needs no decoding.
    path = event.request.environ.get("PATH_INFO", "")
    if not (path == API_PREFIX[:-1] or path.startswith(API_PREFIX)):
        return
    response = event.response
    headerlist = response.headerlist
    if not any(name.lower() in SET_HERE for name, _ in headerlist):
        # Most answers set neither: appended, without webob's mapping
        # scanning the list once per read and per write.
        headerlist.extend(API_HEADERS)
        return
    headers = response.headers
    if "no-store" not in headers.get("Cache-Control", ""):
        headers["Cache-Control"] = "no-store"
    headers["X-Content-Type-Options"] = "nosniff"


def public_location(event: NewResponse) -> None:
    """A redirect to a path of this site leads to it under `ehs.public_url`.
    Views redirect to paths, and WebOb writes a path's absolute address
    from the request's Host header, which the client chooses (security
    reference item 11, OWASP Forgot Password cheat sheet: links are built
    on the configured base URL, never on Host)."""
    response = event.response
    if not 300 <= response.status_int < 400:
        return
    location = response.location
    if location and location.startswith("/") and not location.startswith("//"):
        response.location = event.request.registry.settings["ehs.public_url"] + location


def includeme(config: Configurator) -> None:
    config.add_subscriber(api_response_headers, NewResponse)
    config.add_subscriber(public_location, NewResponse)
