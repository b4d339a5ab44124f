"""What every template can use: translations by plugin domain, dates and
times in a site's zone written for people, and the `{% inline %}` tag."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_date, format_datetime, format_timedelta
from babel.numbers import format_decimal
from jinja2 import Environment, nodes, pass_context
from jinja2.ext import Extension
from jinja2.runtime import Context
from markupsafe import Markup, escape
from pyramid.registry import Registry
from pyramid.threadlocal import get_current_request
from pyramid_jinja2 import PARENT_RELATIVE_DELIM

from ehs_core.zones import site_zone

LOCALE = Locale.parse("en")
# The locale that dates and numbers are written in while a mail is rendered
# for its recipients (`in_locale`); otherwise the request's.
_LOCALE_NAME: ContextVar[str | None] = ContextVar("ehs_locale_name", default=None)
_LOCALES: dict[str, Locale] = {}


def current_locale(name: str | None = None) -> Locale:
    """The Babel locale dates and numbers follow (issue #39): `name`, else
    the one a mail is being rendered in, else the current request's, else
    English."""
    if name is None:
        name = _LOCALE_NAME.get()
    if name is None:
        request = get_current_request()
        localizer = getattr(request, "localizer", None) if request is not None else None
        name = getattr(localizer, "locale_name", None)
    if not name:
        return LOCALE
    found = _LOCALES.get(name)
    if found is None:
        try:
            found = Locale.parse(name.replace("-", "_"))
        except (ValueError, TypeError):
            found = LOCALE
        _LOCALES[name] = found
    return found


@contextmanager
def in_locale(name: str | None) -> Iterator[None]:
    """Dates and numbers written while inside are in locale `name` (a
    mail rendered in its recipient's language, outside their request)."""
    token = _LOCALE_NAME.set(name)
    try:
        yield
    finally:
        _LOCALE_NAME.reset(token)
# Templates named by an asset spec of a plugin package translate in that
# plugin's domain; the core's own templates in "ehs".
DEFAULT_DOMAIN = "ehs"


def domain_of(template_name: str | None) -> str:
    """"ehs_<plugin>" for a template named by the asset spec of a plugin
    package ("pkg.plugin:templates/x.html"), else the core's domain."""
    # pyramid_jinja2 names a template that another one names relatively
    # "name@@FROM_PARENT@@parent": "layout.html" extended by a plugin's page
    # is the core's layout, in the core's domain.
    template_name = (template_name or "").split(PARENT_RELATIVE_DELIM, 1)[0]
    if ":" not in template_name:
        return DEFAULT_DOMAIN
    package = template_name.split(":", 1)[0]
    if package.split(".", 1)[0] == "ehs_core":
        return DEFAULT_DOMAIN
    return "ehs_" + package.rsplit(".", 1)[-1]


def _formatted(context: Context, text: str, variables: dict[str, Any]) -> str:
    """Jinja's new-style gettext: the %(name)s placeholders filled in (each
    value escaped first in an autoescaping template); "%%" reads "%"."""
    if context.eval_ctx.autoescape:
        return Markup(text) % variables  # noqa: S704 (a catalogue's own string)
    return text % variables


@pass_context
def _gettext(context: Context, message: str, **variables: object) -> str:
    """`_("…")` and `gettext("…")`: the translation in the template's
    domain for the request's locale (the message itself outside a request)."""
    request = get_current_request()
    if request is not None:
        message = request.localizer.translations.dugettext(domain_of(context.name), message)
    return _formatted(context, message, variables)


@pass_context
def _ngettext(context: Context, singular: str, plural: str, n: int, **variables: object) -> str:
    variables.setdefault("num", n)
    request = get_current_request()
    if request is not None:
        text = request.localizer.translations.dungettext(domain_of(context.name), singular, plural, n)
    else:
        text = singular if n == 1 else plural
    return _formatted(context, text, variables)


class InlinedPartials(Extension):
    """`{% inline "part.html" %}`: a part of a page compiled into the page
    itself when templates are not reloaded (production), and a plain
    `{% include %}` where they are (development, Babel's extraction) so
    that a change to the part shows at once. The part sees the page's
    values as an include does; what it `{% set %}`s is then the page's,
    so a part inlined must not set a name the page reads after it."""

    tags = {"inline"}

    def parse(self, parser: Any) -> Any:
        lineno = next(parser.stream).lineno
        name = parser.parse_expression()
        environment = self.environment
        if (not isinstance(name, nodes.Const) or not isinstance(name.value, str) or environment.auto_reload
                or environment.loader is None):
            return nodes.Include(name, True, False, lineno=lineno)
        wanted = name.value if parser.name is None else environment.join_path(name.value, parser.name)
        source, filename, _ = environment.loader.get_source(environment, wanted)
        return environment.parse(source, name.value, filename).body


def zone_named(name: str | None, registry: Registry | None = None) -> dt.tzinfo:
    """A site's IANA zone, or the server's (`TZ`) when the site has none
    (`ehs_core.zones`, the one helper the records and pages share)."""
    if name:
        return ZoneInfo(name)
    return site_zone(name, registry or get_current_request().registry)


def local(moment: dt.datetime | None, zone: str | dt.tzinfo | None = None,
          registry: Registry | None = None) -> dt.datetime | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(zone if isinstance(zone, dt.tzinfo) else zone_named(zone, registry))


def when(moment: dt.datetime | None, zone: str | dt.tzinfo | None = None, with_zone: bool = True,
         registry: Registry | None = None) -> str:
    """"14 Mar 2026, 09:05 EDT": a moment as the site's people read it (in
    pages and mail alike; mail sent outside a request passes the registry)."""
    moment = local(moment, zone, registry)
    if moment is None:
        return ""
    text = format_datetime(moment, "d MMM y, HH:mm", locale=current_locale())
    return f"{text} {moment.tzname()}" if with_zone else text


def day(value: dt.date | dt.datetime | str | None, zone: str | None = None) -> str:
    """"14 Mar 2026"; takes a date, a moment (read in the zone) or an ISO
    date as the JSON answers carry it."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value[:10])
        except ValueError:
            return value
    if isinstance(value, dt.datetime):
        value = local(value, zone).date()
    return format_date(value, "d MMM y", locale=current_locale())


def machine_time(moment: dt.datetime | None) -> str:
    """The value of a <time datetime> attribute: ISO 8601 in UTC to the
    millisecond ("2026-03-14T14:05:09.250Z"; whole seconds as "…:09Z").
    HTML's valid global date and time string allows a second at most three
    digits of fraction."""
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    moment = moment.astimezone(dt.UTC)
    text = moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def ago(moment: dt.datetime | None) -> str:
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return format_timedelta(moment - dt.datetime.now(dt.UTC), add_direction=True, locale=current_locale())


def number(value: int | float) -> str:
    """100000 -> "100,000" ("100.000" in Spanish): counts as people of the
    locale read them."""
    return format_decimal(value, locale=current_locale())


def label(value: str | None) -> str:
    """An enumeration value as words in the reader's language: near_miss ->
    Near miss, "Casi accidente" (`ehs_core.ui.labels` marks them)."""
    from ehs_core.ui.labels import LABELS

    text = LABELS.get(value or "") or (value or "").replace("_", " ").capitalize()
    request = get_current_request()
    if request is not None and text:
        return request.localizer.translations.dugettext(DEFAULT_DOMAIN, text)
    return text


def nl2br(text: str | None) -> Markup:
    """Text with its line breaks as <br>, escaped."""
    return Markup("<br>").join(escape(text or "").split("\n"))


def legal(text: str, **variables: object) -> str:
    """`legal("…")`: a label a regulator prints on its form (OSHA's Forms
    300, 300A and 301), kept in the regulator's words whatever the reader's
    language (issue #39); not extracted for translation. Placeholders as
    `_()`'s."""
    return text % variables if variables else text


def setup(env: Environment, registry: Registry) -> None:
    # New-style gettext (placeholders filled by the call) in the template's
    # own translation domain.
    env.install_gettext_callables(lambda s: s, lambda s, p, n: s if n == 1 else p, newstyle=True)
    env.add_extension(InlinedPartials)
    env.globals.update(gettext=_gettext, ngettext=_ngettext, _=_gettext)
    env.filters.update({"when": when, "day": day, "machine_time": machine_time, "ago": ago,
                        "label": label, "number": number, "nl2br": nl2br})
    env.globals["zone_named"] = zone_named
    env.globals["legal"] = legal
    env.trim_blocks = True
    env.lstrip_blocks = True
