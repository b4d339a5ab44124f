"""The web pages' foundation: Jinja2 templates, the layout every screen
extends, the static files, translations, the page error views and the
directives through which plugins add screens.

Pages are a second face over the same operations as the JSON API: a page
view parses a form, calls the domain's service function and renders. Every
page answer carries the strict Content-Security-Policy of the emailed-link
pages (no inline script or style), so htmx is loaded as a file and
configured through a meta tag.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup
from pyramid.config import Configurator
from pyramid.events import BeforeRender, NewResponse
from pyramid.i18n import default_locale_negotiator
from pyramid.interfaces import IRendererFactory
from pyramid.request import Request
from pyramid_jinja2 import IJinja2Environment

from ehs_core.security import identity_of
from ehs_core.ui.directives import (
    add_dashboard_card,
    add_incident_list_tool,
    add_incident_panel,
    add_nav_item,
    nav_items,
)
from ehs_core.users.models import Organization

# Pages load only their own scripts, styles and images; nothing may frame them.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' blob: data:; connect-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    # Not "no-referrer": browsers then send `Origin: null` with a form's
    # POST, which the Origin check must refuse. Other sites get nothing.
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def page_headers(event: NewResponse) -> None:
    """Every HTML answer outside /api gets the page headers (an attachment
    download keeps its own sandboxing policy)."""
    response = event.response
    if event.request.environ.get("PATH_INFO", "").startswith("/api/"):
        return
    if (response.content_type or "").startswith("text/html"):
        # On the header list itself: webob's header view scans the list for
        # each name it sets (a hundredth of the incident page for five).
        headerlist = response.headerlist
        present = {name.lower() for name, _ in headerlist}
        if "content-security-policy" in present:
            headerlist[:] = [(name, value) for name, value in headerlist
                             if name.lower() != "content-security-policy"]
        headerlist.extend((name, value) for name, value in PAGE_HEADERS.items()
                          if name == "Content-Security-Policy" or name.lower() not in present)


def includeme(config: Configurator) -> None:
    config.include("pyramid_jinja2")
    config.add_jinja2_renderer(".html")
    config.add_jinja2_search_path("ehs_core:templates", name=".html")
    config.add_translation_dirs("ehs_core:locale")
    config.set_locale_negotiator(negotiate_locale)
    config.add_directive("add_nav_item", add_nav_item)
    config.add_directive("add_incident_panel", add_incident_panel)
    config.add_directive("add_dashboard_card", add_dashboard_card)
    config.add_directive("add_incident_list_tool", add_incident_list_tool)
    config.action(None, lambda: _setup_environment(config), order=999)
    config.add_subscriber(page_headers, NewResponse)
    config.add_subscriber(layout_values, BeforeRender)
    config.add_static_view("static", "ehs_core:static", cache_max_age=3600)
    config.include(".errors")
    config.include(".home")


# The locales the service ships: those the core has a compiled catalogue for.
SHIPPED_LOCALES = frozenset(path.parent.parent.name
                            for path in Path(__file__).parent.parent.glob("locale/*/LC_MESSAGES/ehs.mo"))


def negotiate_locale(request: Request) -> str | None:
    """Pyramid's default negotiator (a `_LOCALE_` attribute of the request,
    else parameter, else cookie; None: the default locale), asked of the
    parameters and cookies only when the query string, the cookie header
    or a body could hold the name: parsing both for every page that shows
    a word was a hundredth of the incident page, for a name none sends.

    Only a shipped locale is answered; any other name is the default
    locale. Each name has its own localizer, compiled templates and kept
    fragments: a name from the address or a cookie, without signing in,
    cost 30 times a page and 70 KB kept for good (ASVS 5.0 V2.4: no
    anonymous request may grow what the service keeps without bound). The
    Accept-Language header is not read: with one shipped locale it could
    choose nothing."""
    name = getattr(request, "_LOCALE_", None)
    if name is None:
        environ = request.environ
        if ("_LOCALE_" in environ.get("QUERY_STRING", "") or "_LOCALE_" in environ.get("HTTP_COOKIE", "")
                or environ.get("REQUEST_METHOD") not in ("GET", "HEAD")):
            name = default_locale_negotiator(request)
    return name if name in SHIPPED_LOCALES else None


def _setup_environment(config: Configurator) -> None:
    from ehs_core.ui import rendering

    environment = config.get_jinja2_environment(".html")
    rendering.setup(environment, config.registry)
    registry = config.registry
    registry.registerUtility(rendering.FoundRenderers(registry.getUtility(IRendererFactory, name=".html"),
                                                      environment), IRendererFactory, name=".html")


# Messages a page may show after a redirect, by key (never text from the
# address, which anyone could craft).
NOTICES = {
    "password-changed": "Your password was changed. Your other sessions were signed out.",
    "saved": "Saved.",
    "moved": "The incident moved on.",
    "commented": "Your comment was added.",
    "uploaded": "The file was added.",
    "removed": "The file was removed.",
    "action-added": "The corrective action was added.",
    "verified": "The actions were verified.",
    "invited": "The invitation was sent.",
}


# The layout's own files, by name under ehs_core:static.
ASSETS = ("app.css", "print.css", "vendor/htmx-2.0.11.min.js", "app.js")


def assets(request: Request) -> dict[str, str]:
    """The URL paths of the layout's files, made once per mount point (each
    `static_path` resolves the asset spec again: a twentieth of a page)."""
    kept = request.registry.setdefault("ui.asset_paths", {})
    found = kept.get(request.script_name)
    if found is None:
        found = kept[request.script_name] = {name: request.static_path(f"ehs_core:static/{name}")
                                             for name in ASSETS}
    return found


# The layout's own links, by the name it uses.
LINKS = {"home": "home", "account": "page.account", "sign_out": "page.sign_out"}


def links(request: Request) -> dict[str, str]:
    """The layout's links, made once per mount point (as `assets`)."""
    kept = request.registry.setdefault("ui.link_paths", {})
    found = kept.get(request.script_name)
    if found is None:
        found = kept[request.script_name] = {key: request.route_path(name) for key, name in LINKS.items()}
    return found


def nav_html(request: Request, entries: list[dict[str, Any]]) -> Markup:
    """The menu's entries as HTML, rendered once per menu (its entries, the
    current one, the badges' counts, the locale) and kept by the worker:
    the loop, with its translated titles, was a quarter of the incident
    page's rendering, and most pages show one of a few menus."""
    key = (request.localizer.locale_name, request.script_name,
           tuple((e["name"], e["title"], e["url"], e["current"], e.get("badge_text")) for e in entries))
    kept = request.registry.setdefault("ui.nav_html", {})
    found = kept.get(key)
    if found is None:
        if len(kept) >= 4096:  # badges' counts vary; forget them all now and then
            kept.clear()
        environment = request.registry.queryUtility(IJinja2Environment, name=".html")
        # An autoescaping template's output: already escaped.
        found = kept[key] = Markup(environment.get_template("ui/nav.html").render(nav=entries))  # noqa: S704
    return found


def layout_values(event: BeforeRender) -> None:
    """What the layout needs on every page: the menu, the organization's
    name and a notice after a redirect."""
    request = event.get("request")
    renderer = event.get("renderer_name") or ""
    if request is None or not renderer.endswith(".html"):
        return
    identity = identity_of(request)
    signed_in = bool(identity and identity.is_user)
    # Who is signed in, for the layout's user menu (read here once: each
    # `request.identity` in a template asks the security policy again).
    event["signed_in_name"] = identity.account.name if signed_in else None
    event.setdefault("nav", nav_items(request) if signed_in else [])
    event.setdefault("nav_html", nav_html(request, event["nav"]))
    event.setdefault("assets", assets(request))
    event.setdefault("links", links(request))
    if "organization_name" not in event:
        # The signed-in identity read the organization's name with the session.
        organization = identity.extra.get("organization") if signed_in else None
        if organization is None and signed_in:
            organization = request.dbsession.get(Organization, identity.account.organization_id)
            organization = {"name": organization.name} if organization is not None else None
        event["organization_name"] = organization["name"] if organization is not None else None
    # The query string is parsed only when it could name a notice (as the
    # locale negotiator reads it).
    key = request.GET.get("notice") if "notice" in request.environ.get("QUERY_STRING", "") else None
    event.setdefault("notice", request.localizer.translate(NOTICES[key]) if key in NOTICES else None)
