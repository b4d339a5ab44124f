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
from urllib.parse import urlencode

from pyramid.config import Configurator
from pyramid.events import BeforeRender, NewResponse
from pyramid.i18n import Localizer, Translations, make_localizer
from pyramid.interfaces import ILocalizer, ITranslationDirectories
from pyramid.registry import Registry
from pyramid.request import Request
from pyramid.response import Response

from ehs_core.security import identity_of
from ehs_core.ui.directives import add_dashboard_card, add_incident_list_tool, add_incident_panel
from ehs_core.ui.menu import add_nav_item, nav_items

# Pages load only their own scripts, styles, images, web app manifest and
# service worker (a reporting link's page works offline); nothing may frame them.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' blob: data:; connect-src 'self'; form-action 'self'; "
    "manifest-src 'self'; worker-src 'self'; "
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
    if event.request.method == "GET" and LOCALE_KEY in event.request.GET:
        keep_language_choice(event.request, response)
    if (response.content_type or "").startswith("text/html"):
        headers = response.headers
        for name, value in PAGE_HEADERS.items():
            if name == "Content-Security-Policy" or name not in headers:
                headers[name] = value


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


# The locales the service ships: those the core has a compiled catalogue for
# (issue #39: only these are accepted, from the address, a cookie, the
# browser or a person's settings).
SHIPPED_LOCALES = frozenset(path.parent.parent.name
                            for path in Path(__file__).parent.parent.glob("locale/*/LC_MESSAGES/ehs.mo"))
# Their names in their own language, for the language choices.
LANGUAGE_NAMES = {"en": "English", "es": "Español"}
# The parameter and cookie that name a chosen language (Pyramid's own).
LOCALE_KEY = "_LOCALE_"


def shipped(name: object) -> str | None:
    """`name` when it is a shipped locale, else None."""
    return name if isinstance(name, str) and name in SHIPPED_LOCALES else None


def negotiate_locale(request: Request) -> str | None:
    """The request's locale, among the shipped ones only (issue #39): the
    request's `_LOCALE_` attribute or parameter; else the signed-in
    person's chosen language (None: the installation's default); else,
    for those not signed in (a reporting link, the sign-in page), the
    `_LOCALE_` cookie the language switch sets, then the browser's
    Accept-Language. A name that is not shipped is ignored: each name has
    its own localizer, and a name from the address or a cookie, without
    signing in, must not grow what the service keeps without bound (ASVS
    5.0 V2.4). None: the default locale."""
    name = _negotiated(request)
    registry = getattr(request, "registry", None)
    if registry is not None:
        # Made here, before Pyramid would make it without the core's
        # catalogue as the default domain.
        localizer_of(registry, name or registry.settings.get("pyramid.default_locale_name") or "en")
    return name


def _negotiated(request: Request) -> str | None:
    named = getattr(request, LOCALE_KEY, None) or request.params.get(LOCALE_KEY)
    if shipped(named):
        return named
    identity = identity_of(request) if getattr(request, "registry", None) is not None else None
    if identity is not None and identity.is_user:
        return shipped(getattr(identity.account, "locale", None))
    cookie = shipped(request.cookies.get(LOCALE_KEY))
    if cookie:
        return cookie
    if "Accept-Language" in request.headers:
        return request.accept_language.lookup(sorted(SHIPPED_LOCALES), default="") or None
    return None


def language_switch(request: Request) -> list[dict[str, object]]:
    """The visible language choices of a page anyone may open (a reporting
    link, sign-in): each shipped language with a link to this same page in
    it (the page then keeps the choice in the `_LOCALE_` cookie), the
    current one marked. Works without JavaScript."""
    current = request.localizer.locale_name
    query = [(key, value) for key, value in request.GET.items() if key != LOCALE_KEY]
    return [{"locale": name, "name": LANGUAGE_NAMES.get(name, name), "current": name == current,
             "href": request.path + "?" + urlencode([*query, (LOCALE_KEY, name)])}
            for name in sorted(SHIPPED_LOCALES)]


def keep_language_choice(request: Request, response: Response) -> None:
    """A page opened with `?_LOCALE_=xx` (the switch) keeps that choice for
    a year in a cookie, so the pages and answers that follow are in it."""
    chosen = shipped(request.GET.get(LOCALE_KEY))
    if chosen:
        response.set_cookie(LOCALE_KEY, chosen, max_age=365 * 24 * 3600, path="/", samesite="Lax",
                            secure=request.scheme == "https", httponly=True)


def localizer_of(registry: Registry, name: str) -> Localizer:
    """A shipped locale's localizer, as Pyramid makes one (every
    translation folder, the plugins' too, is known by the first request)
    and kept the same way. The core's catalogue also answers a message
    given without a domain (`request.localizer.translate("…")` in the
    core's views), which Pyramid otherwise looks up in an empty "messages"
    domain."""
    localizer = registry.queryUtility(ILocalizer, name=name)
    if localizer is None:
        directories = registry.queryUtility(ITranslationDirectories, default=[])
        localizer = make_localizer(name, directories)
        core = Path(__file__).parent.parent / "locale" / name / "LC_MESSAGES" / "ehs.mo"
        if core.exists():
            with core.open("rb") as catalogue:
                localizer.translations.add(Translations(catalogue, domain="messages"), merge=True)
        registry.registerUtility(localizer, ILocalizer, name=name)
    return localizer


def _setup_environment(config: Configurator) -> None:
    from ehs_core.ui import rendering
    environment = config.get_jinja2_environment(".html")
    rendering.setup(environment, config.registry)


def _(text: str) -> str:
    """Marks a message for extraction (`make messages`); translated where shown."""
    return text


# Messages a page may show after a redirect, by key (never text from the
# address, which anyone could craft).
NOTICES = {
    "password-changed": _("Your password was changed. Your other sessions were signed out."),
    "saved": _("Saved."),
    "moved": _("The incident moved on."),
    "commented": _("Your comment was added."),
    "uploaded": _("The file was added."),
    "removed": _("The file was removed."),
    "action-added": _("The corrective action was added."),
    "verified": _("The actions were verified."),
    "invited": _("The invitation was sent."),
    "follow-up-sent": _("Your message was sent."),
}


# The layout's own files, by name under ehs_core:static.
ASSETS = ("app.css", "print.css", "vendor/htmx-2.0.11.min.js", "app.js")
# The layout's own links, by the name it uses.
LINKS = {"home": "home", "account": "page.account", "sign_out": "page.sign_out"}


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
    event.setdefault("assets", {name: request.static_path(f"ehs_core:static/{name}") for name in ASSETS})
    event.setdefault("links", {key: request.route_path(name) for key, name in LINKS.items()})
    # The page's language (<html lang>) and the languages one may choose.
    event.setdefault("page_lang", request.localizer.locale_name)
    if not signed_in and request.method == "GET":
        event.setdefault("language_switch", language_switch(request))
    event.setdefault("languages", [(name, LANGUAGE_NAMES.get(name, name))
                                   for name in sorted(SHIPPED_LOCALES)])
    # (`organization_name`: the users package's `layout_organization`.)
    key = request.GET.get("notice")
    event.setdefault("notice", request.localizer.translate(NOTICES[key]) if key in NOTICES else None)
