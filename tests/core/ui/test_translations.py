"""Every user-visible string of the pages is marked for translation and
present in the core's catalogue (`make messages` keeps it current)."""

from __future__ import annotations

import time
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import ehs_core

CORE = Path(ehs_core.__file__).parent


def test_the_catalogue_holds_every_marked_string():
    extracted = {
        message[2] if isinstance(message[2], str) else message[2][0]
        for message in extract_from_dir(
            str(CORE.parent),
            method_map=[("ehs_core/**.py", "python"), ("ehs_core/templates/**.html", "jinja2")],
            options_map={"ehs_core/templates/**.html": {
                "extensions": "jinja2.ext.i18n,ehs_core.ui.rendering.InlinedPartials"}},
            keywords={"translate": None, "_": None, "gettext": None, "ngettext": (1, 2)})
    }
    with (CORE / "locale" / "en" / "LC_MESSAGES" / "ehs.po").open("rb") as po:
        catalogue = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(po) if m.id}
    missing = sorted(extracted - catalogue)
    assert not missing, f"run `make messages`: {missing[:10]}"
    assert (CORE / "locale" / "en" / "LC_MESSAGES" / "ehs.mo").exists()


def test_templates_have_no_unmarked_prose():
    """A crude guard: visible text between tags is either a variable or marked."""
    import re

    for template in (CORE / "templates").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        text = re.sub(r"{#.*?#}|{%.*?%}|{{.*?}}|<[^>]+>", " ", text, flags=re.S)
        text = re.sub(r"[\w-]+=\"[^\"]*\"", " ", text)  # attributes written by a macro
        words = re.findall(r"[A-Za-z]{3,}", text)
        assert not words, f"{template.relative_to(CORE)}: unmarked words {words[:8]}"


class FakeTranslations:
    """A catalogue that says which domain it was asked in."""

    def dugettext(self, domain, message):
        return f"[{domain}] {message}"

    def dungettext(self, domain, singular, plural, n):
        return f"[{domain}] {singular if n == 1 else plural}"


def render_as(registry, template_name, source, locale, **values):
    """Compile `source` as the template `template_name` and render it for a
    request in `locale` whose catalogue is FakeTranslations."""
    from types import SimpleNamespace

    from pyramid.threadlocal import manager
    from pyramid_jinja2 import IJinja2Environment

    env = registry.queryUtility(IJinja2Environment, name=".html")
    template = env.template_class.from_code(
        env, env.compile(source, name=template_name), env.make_globals(None))
    request = SimpleNamespace(registry=registry, localizer=SimpleNamespace(
        locale_name=locale, translations=FakeTranslations()))
    manager.push({"request": request, "registry": registry})
    try:
        return template.render(**values)
    finally:
        manager.pop()


def test_messages_translate_in_their_templates_domain_with_or_without_placeholders(registry):
    """`_("…")` translates in the template's domain (a plugin's own), its
    placeholders' values escaped, "%%" read as "%"."""
    source = ('{{ _("Sign in") }}|{{ gettext(\'Sign out\') }}|{{ _("100%% sure") }}|'
              '{{ _("Hello %(name)s", name=who) }}|{{ _("Sign in") ~ "!" }}')
    core = render_as(registry, "ui/example.html", source, "xx-core", who="<b>")
    assert core == ("[ehs] Sign in|[ehs] Sign out|[ehs] 100% sure|[ehs] Hello &lt;b&gt;|[ehs] Sign in!")
    plugin = render_as(registry, "ehs_plugins.osha:templates/example.html", source, "xx-plugin", who="Al")
    assert plugin == ("[ehs_osha] Sign in|[ehs_osha] Sign out|[ehs_osha] 100% sure|[ehs_osha] Hello Al|"
                      "[ehs_osha] Sign in!")


class LocaleTranslations(FakeTranslations):
    """A catalogue that also says which locale it belongs to."""

    def __init__(self, locale):
        self.locale = locale

    def dugettext(self, domain, message):
        return f"[{self.locale} {domain}] {message}"


def render_loaded(registry, template_name, locale, **values):
    """Render a template the loader finds, for a request in `locale`."""
    from types import SimpleNamespace

    from pyramid.threadlocal import manager
    from pyramid_jinja2 import IJinja2Environment

    env = registry.queryUtility(IJinja2Environment, name=".html")
    request = SimpleNamespace(registry=registry, localizer=SimpleNamespace(
        locale_name=locale, translations=LocaleTranslations(locale)))
    manager.push({"request": request, "registry": registry})
    try:
        return env.get_template(template_name).render(**values)
    finally:
        manager.pop()


def test_each_locale_reads_its_own_words_in_each_templates_domain(registry):
    """Each locale reads its own words, in each template's domain (the
    core's for a core macro a plugin's page uses), however the requests
    interleave."""
    name = "tests.core.ui:templates/words.html"
    one = render_loaded(registry, name, "xx-one")
    two = render_loaded(registry, name, "xx-two")
    assert one.split("|")[:3] == ["[xx-one ehs_ui] Sign in", "[xx-one ehs_ui] 100% sure",
                                  "[xx-one ehs_ui] Sign out"]
    assert "<h2>[xx-one ehs] There is a problem</h2>" in one
    assert two.split("|")[:3] == ["[xx-two ehs_ui] Sign in", "[xx-two ehs_ui] 100% sure",
                                  "[xx-two ehs_ui] Sign out"]
    assert "<h2>[xx-two ehs] There is a problem</h2>" in two
    assert render_loaded(registry, name, "xx-one") == one


def test_the_locale_is_negotiated_among_the_shipped_ones_only():
    """`ui.negotiate_locale` (issue #39): the request's `_LOCALE_` attribute
    or parameter, then (not signed in) the `_LOCALE_` cookie, then the
    browser's Accept-Language; None for the default locale. A name the
    service does not ship is ignored wherever it comes from."""
    from pyramid.request import Request

    from ehs_core.ui import SHIPPED_LOCALES, negotiate_locale

    assert SHIPPED_LOCALES == frozenset({"en", "es"})

    def made(path, **kw):
        return Request.blank(path, **kw)

    requests = [made("/incidents/42"), made("/incidents?_LOCALE_=es"), made("/?a=1&_LOCALE_=en&b=2"),
                made("/", headers={"Cookie": "service_session=x; _LOCALE_=es"}),
                made("/", headers={"Cookie": "service_session=x"}),
                made("/incidents/new", POST={"title": "Spill", "_LOCALE_": "es"}),
                made("/", headers={"Accept-Language": "es-MX,es;q=0.9,en;q=0.8"}),
                made("/", headers={"Accept-Language": "fr-CA, fr;q=0.9, es;q=0.5"}),
                made("/", headers={"Accept-Language": "de, fr"}),
                made("/?_LOCALE_=en", headers={"Accept-Language": "es"}),
                made("/", headers={"Accept-Language": "es", "Cookie": "_LOCALE_=en"})]
    named = made("/incidents/42")
    named._LOCALE_ = "es"
    requests.append(named)
    answers = [negotiate_locale(request) for request in requests]
    assert answers == [None, "es", "en", "es", None, "es", "es", "es", None, "en", "en", "es"]
    unknown = [made("/incidents?_LOCALE_=fr"), made("/?_LOCALE_=x%00y"), made("/?_LOCALE_=../../etc"),
               made("/", headers={"Cookie": "_LOCALE_=zz-" + "z" * 500}),
               made("/incidents/new", POST={"_LOCALE_": "ES"}),
               made("/", headers={"Accept-Language": "fr;q=1, *;q=0.5"}),
               made("/", headers={"Accept-Language": "not a header;;;"})]
    assert [negotiate_locale(request) for request in unknown] == [None] * len(unknown)


def test_names_of_locales_the_service_does_not_ship_cost_nothing_and_are_not_kept(registry, admin, client):
    """Any `_LOCALE_` (parameter or cookie, no sign-in needed) compiled the
    templates again for that name and kept them until restart (187 ms
    against 6 ms a page, ~70 KB a name): now the page is the default
    locale's, and nothing is kept per name."""
    from pyramid.interfaces import ILocalizer
    from pyramid_jinja2 import IJinja2Environment

    environment = registry.queryUtility(IJinja2Environment, name=".html")
    plain = client.get("/sign-in", status=200).text
    localized_before = set(environment.__dict__.get("ehs_localized", {}))
    localizers_before = {name for name, _ in registry.getUtilitiesFor(ILocalizer)}
    started = time.perf_counter()
    for index in range(150):
        page = client.get(f"/sign-in?_LOCALE_=zz{index}", status=200).text
        client.set_cookie("_LOCALE_", f"yy{index}")
        client.get("/sign-in", status=200)
    elapsed = time.perf_counter() - started
    client.set_cookie("_LOCALE_", "")
    assert page == plain
    assert set(environment.__dict__.get("ehs_localized", {})) == localized_before
    assert {name for name, _ in registry.getUtilitiesFor(ILocalizer)} == localizers_before
    assert elapsed < 15, elapsed  # 300 pages; each new name took 187 ms on its own
