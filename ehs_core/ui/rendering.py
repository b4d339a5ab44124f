"""What every template can use: translations by plugin domain, dates and
times in a site's zone written for people, the menu and the slots."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from functools import lru_cache
from types import BuiltinMethodType
from typing import Any

from babel import Locale
from babel.dates import format_timedelta
from babel.numbers import format_decimal
from jinja2 import Environment, Template, TemplateNotFound, nodes, pass_context
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.ext import Extension
from jinja2.lexer import Token, TokenStream
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, missing
from markupsafe import Markup, escape

try:  # the C function behind markupsafe.escape (a test pins that they agree)
    from markupsafe._speedups import _escape_inner
except ImportError:  # pragma: no cover - markupsafe without its speedups
    def _escape_inner(text: str) -> str:
        return str(escape(text))
from pyramid.registry import Registry
from pyramid.threadlocal import get_current_request
from pyramid_jinja2 import PARENT_RELATIVE_DELIM, Jinja2TemplateRenderer
from pyramid_jinja2 import Environment as PyramidEnvironment

from ehs_core.sites.zones import site_zone
from ehs_core.ui.forms import person_options

# A parsed Locale: babel's formatters parse a locale name on every call.
LOCALE = Locale.parse("en")
# A plain dict: babel's locale data looks each key up through its aliases.
MONTHS = dict(LOCALE.months["format"]["abbreviated"].items())
# Numbers as the dates and times write them, looked up rather than
# formatted: `f"{n:02d}"` parses its format for every one of a page's
# forty dates (`when`, `machine_time`: a quarter of the incident page's
# history went to formatting).
_TWO_DIGITS = tuple(f"{n:02d}" for n in range(100))
_NUMBERS = tuple(str(n) for n in range(100))
_THREE_DIGITS = tuple(f"{n:03d}" for n in range(1000))  # a second's milliseconds
_FRACTIONS = tuple(f".{digits}" for digits in _THREE_DIGITS)
# Templates named by an asset spec of a plugin package translate in that
# plugin's domain; the core's own templates in "ehs".
DEFAULT_DOMAIN = "ehs"


@lru_cache(maxsize=1024)
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


def _translated(context: Context, message: str) -> str:
    """The catalogue's translation of `message` in the template's domain.
    The catalogues do not change while the process runs, so each string is
    looked up once (a page has fifty; a lookup walks the domain's fallback
    chain). The catalogue is asked directly: Localizer.translate would wrap
    each string in a TranslationString first."""
    request = get_current_request()
    if request is None:
        return message
    translations = request.localizer.translations
    memo = translations.__dict__.setdefault("_ehs_memo", {})
    key = (domain_of(context.name), message)
    found = memo.get(key)
    if found is None:
        found = memo[key] = translations.dugettext(key[0], message)
    return found


# Finished strings without placeholders, by autoescaping and (locale, domain, message).
_MEMO: dict[bool, dict[tuple[str | None, str, str], str]] = {}


def _formatted(context: Context | EvalContext, text: str, variables: dict) -> str:
    """Jinja's new-style gettext: the %(name)s placeholders filled in
    (escaped in an autoescaping template); "%%" is read as "%" as there."""
    eval_ctx = context if isinstance(context, EvalContext) else context.eval_ctx
    if eval_ctx.autoescape:
        text = ascii_html(text)
        if not variables:
            return Markup(text % {} if "%" in text else text)  # noqa: S704 (a catalogue's string)
        # What `Markup(text) % variables` writes: text and numbers as they are
        # formatted, every other value escaped first (Markup's % escaped them
        # through a helper object per value: a fifth of a page's messages).
        return Markup(text % {name: value if type(value) in _NUMBER_TYPES else output_escape(value)  # noqa: S704
                              for name, value in variables.items()})
    return text % variables if variables or "%" in text else text


_NUMBER_TYPES = (int, float)


@pass_context
def _gettext(context: Context, message: str, **variables: object) -> str:
    if variables:
        return _formatted(context, _translated(context, message), variables)
    # Without placeholders to fill, the finished string is kept as well.
    request = get_current_request()
    memo = _MEMO.setdefault(context.eval_ctx.autoescape, {})
    key = (request.localizer.locale_name if request is not None else None, domain_of(context.name), message)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _formatted(context, _translated(context, message), variables)
    return found


# Finished strings of `_("…")` without placeholders, by (locale, domain,
# message, autoescaping).
_CONSTANT_MEMO: dict[tuple[str | None, str, str, bool], str] = {}


@pass_context
def _constant_message(context: Context, message: str, domain: str) -> str:
    """What `_("text")` without placeholders becomes (`ConstantMessages`):
    a filter, called directly, with the template's domain worked out when
    the template was compiled; Jinja calls a global function such as `_`
    through `Context.call`, whose checks cost more than the lookup. It takes
    the context so that Jinja's optimizer cannot run it while compiling
    (its arguments are constants): the translation belongs to each
    request's locale, not to the first request's."""
    eval_ctx = context.eval_ctx
    request = get_current_request()
    locale = request.localizer.locale_name if request is not None else None
    key = (locale, domain, message, eval_ctx.autoescape)
    found = _CONSTANT_MEMO.get(key)
    if found is None:
        text = request.localizer.translations.dugettext(domain, message) if request is not None else message
        found = _CONSTANT_MEMO[key] = _formatted(eval_ctx, text, {})
    return found


class InlinedPartials(Extension):
    """`{% inline "part.html" %}`: an `{% include %}` of a part of a page
    whose source is compiled into the page's own code when templates are
    not reloaded (production), where an include makes a context of its own
    for the part at every render (copying the page's values, reading them
    again, importing its macros again, one more generator for its output:
    three parts were a thirtieth of the incident page). The part sees the
    page's values as an include does; what it `{% set %}`s is then the
    page's, so a part inlined must not set a name the page reads after it.
    Its messages keep its own domain (`ConstantMessages` reads the part's
    name). Where templates are reloaded (development, Babel's extraction),
    and for a name that is not a constant, it is a plain include, so that a
    change to the part shows at once."""

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


class ConstantMessages(Extension):
    """Rewrites `_("text")` and `gettext("text")` — a single string and no
    placeholders, two thirds of a page's messages — as a template is
    compiled. In a locale's environment (`localized`) it becomes that
    locale's translation, a constant; elsewhere (a template rendered
    outside a request) `("text"|_constant_message("domain"))`, the same
    translation looked up by a direct call (a fifth of the incident page's
    rendering went to `_` and `Context.call`). Babel extracts the messages
    from the templates' source, which this does not change."""

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        domain = domain_of(stream.name)
        translate = _compile_time_catalogue(self.environment, domain)
        window: list[Token] = []
        previous = None
        for token in stream:
            window.append(token)
            if len(window) < 4:
                continue
            name, opening, text, closing = window
            if (name.type == "name" and name.value in ("_", "gettext") and opening.type == "lparen"
                    and text.type == "string" and closing.type == "rparen"
                    and (previous is None or previous.type != "dot")):
                line = name.lineno
                if translate is not None:
                    # The locale's translation as a constant marked safe, as the
                    # call's answer is: Jinja's optimizer joins it to the text
                    # around it.
                    yield from (Token(line, "lparen", "("), Token(line, "string", translate(text.value)),
                                Token(line, "pipe", "|"), Token(line, "name", "safe"),
                                Token(line, "rparen", ")"))
                    previous = closing
                    window = []
                    continue
                yield from (Token(line, "lparen", "("), text, Token(line, "pipe", "|"),
                            Token(line, "name", "_constant_message"), Token(line, "lparen", "("),
                            Token(line, "string", domain), Token(line, "rparen", ")"),
                            Token(line, "rparen", ")"))
                previous = closing
                window = []
                continue
            previous = window.pop(0)
            yield previous
        yield from window


class AsciiText(Extension):
    """Writes a template's own text in ASCII (`ascii_html`: its "·" and
    "—" as character references) as it is compiled, when the template
    escapes its output (an HTML page; no other kind reads references)."""

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        autoescape = self.environment.autoescape
        if callable(autoescape):
            autoescape = autoescape(stream.name)
        for token in stream:
            if autoescape and token.type == "data" and not token.value.isascii():
                token = Token(token.lineno, "data", ascii_html(token.value))
            yield token


@pass_context
def _ngettext(context: Context, singular: str, plural: str, n: int, **variables: object) -> str:
    variables.setdefault("num", n)
    request = get_current_request()
    if request is not None:
        text = request.localizer.translations.dungettext(domain_of(context.name), singular, plural, n)
    else:
        text = singular if n == 1 else plural
    return _formatted(context, text, variables)


def zone_named(name: str | None, registry: Registry | None = None) -> dt.tzinfo:
    """A site's IANA zone, or the server's (`TZ`) when the site has none
    (`sites.zones`, the one helper the records and pages share). A named
    zone is the same wherever it is asked for, so it is kept (a page shows
    twenty times in one or two zones)."""
    if name:
        found = _ZONES.get(name)
        if found is None:
            found = _ZONES[name] = site_zone(name, registry)  # type: ignore[arg-type]
        return found
    return site_zone(name, registry or get_current_request().registry)


_ZONES: dict[str, dt.tzinfo] = {}


def local(moment: dt.datetime | None, zone: str | None = None,
          registry: Registry | None = None) -> dt.datetime | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(zone_named(zone, registry))


def when(moment: dt.datetime | None, zone: str | None = None, with_zone: bool = True,
         registry: Registry | None = None) -> str:
    """"14 Mar 2026, 09:05 EDT": a moment as the site's people read it (in
    pages and mail alike; mail sent outside a request passes the registry)."""
    moment = local(moment, zone, registry)
    if moment is None:
        return ""
    text = _wall_clock(moment)
    return f"{text} {moment.tzname()}" if with_zone else text


def _wall_clock(moment: dt.datetime) -> str:
    """Babel's pattern "d MMM y, HH:mm" with its month names, written out
    directly: format_datetime parses the pattern and looks each field up
    again for every one of a list page's 25 rows."""
    return (f"{_NUMBERS[moment.day]} {MONTHS[moment.month]} {moment.year}, "
            f"{_TWO_DIGITS[moment.hour]}:{_TWO_DIGITS[moment.minute]}")


def time_html(moment: dt.datetime, zone: dt.tzinfo) -> str:
    """`<time datetime="machine_time">when</time>` of a moment in `zone`
    (a tzinfo: `zone_named`; a naive moment is UTC), written in one
    f-string: a history shows twenty of them, and calling `machine_time`
    and `_wall_clock` for each, with their own attribute reads, cost a
    third more than writing both here (the same text: a test compares)."""
    if moment.tzinfo is not dt.UTC:
        moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    shown = moment.astimezone(zone)
    two = _TWO_DIGITS
    year, micro = moment.year, moment.microsecond
    return (f'<time datetime="{year if year >= 1000 else f"{year:04d}"}-{two[moment.month]}-{two[moment.day]}'
            f'T{two[moment.hour]}:{two[moment.minute]}:{two[moment.second]}'
            f'{_FRACTIONS[micro // 1000] if micro else ""}Z">{_NUMBERS[shown.day]} {MONTHS[shown.month]} '
            f'{shown.year}, {two[shown.hour]}:{two[shown.minute]} {shown.tzname()}</time>')


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
    # Babel's "d MMM y", written out as `when` does (format_date parses the
    # pattern on every call: a list of actions shows a date per row).
    return f"{_NUMBERS[value.day]} {MONTHS[value.month]} {value.year}"


def machine_time(moment: dt.datetime | None) -> str:
    """The value of a <time datetime> attribute: ISO 8601 in UTC, as
    `isoformat(timespec="milliseconds")` writes it ("2026-03-14T14:05:09.250Z";
    whole seconds as "…:09Z"), from the tables (`isoformat` cost twice as
    much). HTML's valid global date and time string allows a second at most
    three digits of fraction: the microseconds written before made every
    history's times invalid HTML."""
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    elif moment.tzinfo is not dt.UTC:
        moment = moment.astimezone(dt.UTC)
    two = _TWO_DIGITS
    text = (f"{moment.year:04d}-{two[moment.month]}-{two[moment.day]}T"
            f"{two[moment.hour]}:{two[moment.minute]}:{two[moment.second]}")
    micro = moment.microsecond
    return f"{text}.{_THREE_DIGITS[micro // 1000]}Z" if micro else f"{text}Z"


def ago(moment: dt.datetime | None) -> str:
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return format_timedelta(moment - dt.datetime.now(dt.UTC), add_direction=True, locale=LOCALE)


# A whole number in LOCALE ("en": groups of three, a comma between) as
# Python writes it itself; Babel parses the locale's pattern on each call.
_GROUPED_BY_PYTHON = LOCALE.number_symbols.get("latn", LOCALE.number_symbols).get("group") == ","


def number(value: int | float) -> str:
    """100000 -> "100,000": counts as people read them (a test compares
    with Babel's)."""
    if type(value) is int and _GROUPED_BY_PYTHON:
        return f"{value:,}"
    return format_decimal(value, locale=LOCALE)


def label(value: str | None) -> str:
    """An enumeration value as words: near_miss -> Near miss."""
    return (value or "").replace("_", " ").capitalize()


def nl2br(text: str | None) -> Markup:
    """Text with its line breaks as <br>, escaped (one escape of the whole
    text, where Markup.join escaped each line again)."""
    return Markup(str(output_escape(text or "")).replace("\n", "<br>"))  # noqa: S704 (escaped on this line)


def output_escape(value: object) -> str:
    """What a template's `{{ value }}` writes in an autoescaping template:
    exactly markupsafe's `escape(value)`, as plain text. The compiled code
    uses `escape` only on what it outputs, and the outputs are joined into
    one string (a macro's or block's joined text is made Markup again), so
    the Markup object that `escape` builds for each value is never seen;
    building it (`Markup.__new__` in Python) was three quarters of
    escaping's cost, and a page escapes two hundred values."""
    if type(value) is str:
        text = _escape_inner(value)
    else:
        html = getattr(value, "__html__", None)
        text = html() if html is not None else _escape_inner(str(value))
    return text if text.isascii() else ascii_html(text)


def ascii_html(text: str) -> str:
    """HTML `text` with each character outside ASCII written as a numeric
    character reference ("→" as "&#8594;"), which HTML reads as the same
    character in text, in attribute values and in <textarea> and <title>
    (the pages have no inline <script> or <style>, where it would not).
    A page is written in ASCII for its speed: one "→" of a history entry
    or "—" of the template made Python hold the whole page two bytes to a
    character, every join of the page's pieces widened them, and encoding
    it as UTF-8 was a loop over its eleven thousand characters (a thirtieth
    of the incident page's instructions); an ASCII string is its own UTF-8,
    copied. `str.isascii` is a flag Python keeps: asking costs nothing."""
    return text if text.isascii() else text.encode("ascii", "xmlcharrefreplace").decode("ascii")


class ContextValues(dict):
    """A page context's values (Jinja's `parent`: the globals, then what
    the view gave): a name that is not there reads as Jinja's `missing`,
    so that the compiled code reads a name by the dict's own lookup
    (`JoinedOutput.write_commons`), where `Context.resolve_or_missing` was
    a Python call for each of the fifty names a page's functions read."""

    __slots__ = ()

    def __missing__(self, key: str) -> Any:
        return missing


class OutputTemplate(Template):
    """A template whose outputs are escaped by `output_escape`: the name
    `escape` in the compiled module is the one place Jinja's code generator
    escapes an output (`CodeGenerator._output_child_pre`); a text value is
    escaped by markupsafe's C function itself (`JoinedOutput`), and what a
    render writes is made ASCII once, at its end (`ascii_html`)."""

    @classmethod
    def from_code(cls, environment: Environment, code: Any, globals: Any,
                  uptodate: Any = None) -> Template:
        namespace: dict[str, Any] = {"environment": environment, "__file__": code.co_filename}
        exec(code, namespace)  # noqa: S102 (Jinja's own compiled template, as Template.from_code does)
        namespace["escape"] = output_escape
        namespace["escape_text"] = _escape_inner
        namespace["MISSING"] = _MISSING
        namespace["ContextValues"] = ContextValues
        template = cls._from_namespace(environment, namespace, globals)
        template._uptodate = uptodate
        return template

    def new_context(self, vars: dict[str, Any] | None = None, shared: bool = False,
                    locals: Any = None) -> Context:
        """Jinja's new context, its values a `ContextValues` (a context that
        shares its caller's values, or is given locals, is Jinja's own)."""
        if shared or locals:
            return super().new_context(vars, shared, locals)
        values = ContextValues(self.globals)
        if vars:
            values.update(vars)
        return self.environment.context_class(self.environment, values, self.name, self.blocks,
                                              globals=self.globals)

    def render(self, *args: Any, **kwargs: Any) -> str:
        """Rendered by the template compiled for the request's locale (its
        constant messages written in: a tenth of a page's rendering), or by
        this one outside a request and for a template made from a string."""
        request = get_current_request()
        if request is not None and self.name is not None:
            locale = request.localizer.locale_name
            if getattr(self.environment, LOCALE_ATTRIBUTE, None) != locale:
                try:
                    template = localized(self.environment, locale).get_template(self.name)
                except TemplateNotFound:
                    pass  # made from a string: no source to compile again
                else:
                    return template.render(*args, **kwargs)
        return ascii_html(super().render(*args, **kwargs))


class JoinedOutput(CodeGenerator):
    """Jinja's code generator, except that a run of text and values between
    two statements is written as one string: `yield "".join((text, escape(
    value), text, ...))` where Jinja yields each piece on its own. A piece
    yielded inside a block of an included template passes up through every
    generator above it before the render joins them (a page's thousand
    pieces went through three or four generators each); one joined string
    per run makes a tenth as many. The text and the order of evaluation are
    Jinja's own: the pieces are the ones `CodeGenerator.visit_Output` makes
    (copied from Jinja 3.1, with its constant folding), and a buffered frame
    (a macro's or a `{% set %}` block's) is left to Jinja.

    Three of Jinja's calls are written out where a page makes them most,
    each a Python function call a hundred times a page: an output that is
    text is escaped by markupsafe's C function directly (`escape_text`),
    anything else by `output_escape`; and `value.name` and `value["name"]`
    of a plain dict are the dict's item, read in place, where the item is
    there and the name is no attribute of a dict (anything else goes to the
    environment's `getattr` and `getitem`, as Jinja has it). The values and
    their order of evaluation are Jinja's; `_o`, `_d` and `_e` are the
    generated code's own names (Jinja's are `l_…`, `t_…` and `environment`)."""

    def write_commons(self) -> None:
        """Jinja's preamble of a root or block function, except that a name
        is read from the context's values by their own lookup when the
        context has them as a `ContextValues` and nothing was set at the
        top level (Jinja reads `context.vars` first): a C call for each
        name, where `resolve_or_missing` is a Python one."""
        super().write_commons()
        self.writeline("if not context.vars and context.parent.__class__ is ContextValues:")
        self.indent()
        self.writeline("resolve = context.parent.__getitem__")
        self.outdent()

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape or finalize.src is not None:
            return super()._output_child_pre(node, frame, finalize)
        self.write("(escape_text(_e) if type(_e := (")
        return None

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape or finalize.src is not None:
            return super()._output_child_post(node, frame, finalize)
        self.write(")) is str else escape(_e))")
        return None

    @optimizeconst
    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        if self.environment.is_async or node.attr in _DICT_ATTRIBUTES:
            return super().visit_Getattr(node, frame)
        self._dict_item(node.node, repr(node.attr), "getattr", frame)
        return None

    @optimizeconst
    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if (self.environment.is_async or not isinstance(node.arg, nodes.Const)
                or type(node.arg.value) not in (str, int)):
            return super().visit_Getitem(node, frame)
        self._dict_item(node.node, repr(node.arg.value), "getitem", frame)
        return None

    def _dict_item(self, value: nodes.Expr, key: str, fallback: str, frame: Frame) -> None:
        self.write("(_d if type(_o := ")
        self.visit(value, frame)
        self.write(f") is dict and (_d := _o.get({key}, MISSING)) is not MISSING "
                   f"else environment.{fallback}(_o, {key}))")

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        if frame.buffer is not None:
            return super().visit_Output(node, frame)
        if frame.require_output_check:
            # If an extends is active, don't render outside a block.
            if self.has_known_extends:
                return None
            self.writeline("if parent_template is None:")
            self.indent()
        finalize = self._make_finalize()
        body: list[list[Any] | nodes.Expr] = []
        for child in node.nodes:
            try:
                if not (finalize.const or isinstance(child, nodes.TemplateData)):
                    raise nodes.Impossible()
                const = self._output_child_to_const(child, frame, finalize)
            except (nodes.Impossible, Exception):
                body.append(child)
                continue
            if body and isinstance(body[-1], list):
                body[-1].append(const)
            else:
                body.append([const])
        joined = len(body) > 1
        if joined:
            self.writeline("yield ''.join((")
            self.indent()
        for item in body:
            if isinstance(item, list):
                value = self._output_const_repr(item)
                self.writeline(value + "," if joined else "yield " + value)
            else:
                if joined:
                    self.newline(item)
                else:
                    self.writeline("yield ", item)
                self._output_child_pre(item, frame, finalize)
                self.visit(item, frame)
                self._output_child_post(item, frame, finalize)
                if joined:
                    self.write(",")
        if joined:
            self.outdent()
            self.writeline("))")
        if frame.require_output_check:
            self.outdent()
        return None


def _compile_time_catalogue(environment: Environment, domain: str) -> Callable[[str], str] | None:
    """How `_("text")` reads in this environment's locale, when it has one:
    the catalogue of the request that is rendering (`OutputTemplate.render`
    compiles a locale's templates only for a request in that locale, and a
    locale has one catalogue in a process)."""
    locale = getattr(environment, LOCALE_ATTRIBUTE, None)
    request = get_current_request()
    if locale is None or request is None or request.localizer.locale_name != locale:
        return None
    translations = request.localizer.translations

    def translate(message: str) -> str:
        text = translations.dugettext(domain, message)
        # "%%" reads "%", as `_formatted` has it; written in ASCII as the page is (`AsciiText`).
        return ascii_html(text % {} if "%" in text else text)

    return translate


LOCALE_ATTRIBUTE = "ehs_locale"


def localized(environment: Environment, locale: str) -> Environment:
    """The environment whose templates are compiled for `locale`: Jinja's
    overlay (the same loader, filters and globals) with a cache of its own,
    so that a template compiled with one locale's words serves no other."""
    # Kept on the environment, and shared with its overlays (they copy its attributes).
    kept: dict[str, Environment] = environment.__dict__.setdefault("ehs_localized", {})
    found = kept.get(locale)
    if found is None:
        capacity = getattr(environment.cache, "capacity", 400) if environment.cache is not None else 0
        found = environment.overlay(cache_size=capacity)
        setattr(found, LOCALE_ATTRIBUTE, locale)
        kept[locale] = found
    return found


class FoundRenderers:
    """The `.html` renderer factory of pyramid_jinja2, remembering by which
    name each view's template was found. pyramid_jinja2 first looks for a
    template named relative to its view ("incidents/detail.html") in the
    view's package ("ehs_core.incidents:incidents/detail.html"), then on
    the search path; a core page's template is never in its view's
    package, and the failed look costs a twentieth of a page, on every
    render (Jinja keeps found templates, not missing ones). Which name
    finds a template does not change while the process runs."""

    def __init__(self, factory: Any, environment: Environment) -> None:
        self.factory = factory
        self.environment = environment
        self.names: dict[tuple[str, str], str] = {}

    def __call__(self, info: Any) -> Any:
        name, package = info.name, info.package
        if ":" in name or package is None:
            return self.factory(info)
        key = (package.__name__, name)
        environment = self.environment

        def template_loader() -> Template:
            found = self.names.get(key)
            if found is not None:
                return environment.get_template(found)
            try:
                template = environment.get_template(f"{key[0]}:{name}")
                self.names[key] = f"{key[0]}:{name}"
            except TemplateNotFound:
                template = environment.get_template(name)
                self.names[key] = name
            return template

        return Jinja2TemplateRenderer(template_loader)


_DICT_ATTRIBUTES = frozenset(dir(dict))
_MISSING = object()


class PageContext(Context):
    """Jinja's context, calling a built-in method directly: a template's
    `errors.get('title')` or `values.get(name, '')` is a bound method of a
    dict, which can ask for no context (built-in functions carry no
    `pass_context` mark, nor does their `__call__`), so Jinja's looking for
    one (two attribute lookups on each of them) answers nothing. Anything
    else goes through Jinja's own `call`."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if type(__obj) is not BuiltinMethodType:
            return Context.call(__self, __obj, *args, **kwargs)
        if kwargs:
            kwargs.pop("_block_vars", None)
            kwargs.pop("_loop_vars", None)
        try:
            return __obj(*args, **kwargs)
        except StopIteration:
            return __self.environment.undefined(
                "value was undefined because a callable raised a StopIteration exception")


class PageEnvironment(PyramidEnvironment):
    """The pages' Jinja environment (pyramid_jinja2's, whose class becomes
    this one in `setup`), with each template's globals a plain dict rather
    than Jinja's ChainMap over the environment's. Jinja reads every global
    of the ChainMap when it makes a context (a page makes six: the page,
    its includes and panels) and when a template imports a macro
    (`{% from … import %}` compares the two templates' globals); through
    the ChainMap's Python methods that was a tenth of the incident page.
    The pages' globals are all set up before a template is loaded
    (`setup`); a template's own globals are copied beside them."""

    context_class = PageContext

    def make_globals(self, d: Any) -> Any:
        return {**self.globals, **d} if d else self.globals

    def get_template(self, name: Any, parent: str | None = None, globals: Any = None) -> Template:
        """Jinja's `get_template`, with the templates found by (name, the
        including template) kept in a plain dict while templates are not
        reloaded: each `{% include %}` and render went through pyramid_jinja2's
        `join_path` and Jinja's LRU cache (a lock, a weak reference and a
        deque per lookup), a fortieth of the incident page for its eight
        lookups. Kept per environment (each locale's overlay compiles its
        own), found again whenever templates may change."""
        if globals is not None or self.auto_reload or type(name) is not str:
            return super().get_template(name, parent, globals)
        kept = self.__dict__.get("ehs_found")
        if kept is None or kept[0] is not self:  # an overlay copies its parent's attributes
            kept = self.__dict__["ehs_found"] = (self, {})
        found = kept[1].get((name, parent))
        if found is None:
            found = kept[1][name, parent] = super().get_template(name, parent)
        return found

    def getattr(self, obj: Any, attribute: str) -> Any:
        """`value.name`: Jinja's answer (the attribute, else the item, else
        undefined), found for a plain dict without the AttributeError Jinja
        raises and catches first: the pages read dicts by `.name` (`can.
        update`, `t.blockedReason`), and raising each error (its message
        formatted) cost more than the rest of the lookup. A plain dict's
        attributes are its class's, so a name that is not one of them is
        an item or nothing, as for Jinja."""
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            found = obj.get(attribute, _MISSING)
            return self.undefined(obj=obj, name=attribute) if found is _MISSING else found
        # Jinja's own (Environment.getattr), written out: a page reads a
        # hundred attributes, and calling up to it was a layer more each.
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)


def setup(env: Environment, registry: Registry) -> None:
    if type(env) is PyramidEnvironment:
        env.__class__ = PageEnvironment
    env.template_class = OutputTemplate
    env.code_generator_class = JoinedOutput
    # New-style gettext (placeholders filled by the call), with callables of
    # our own rather than Jinja's wrappers around plain ones: a lookup per
    # string and no formatting of a string without placeholders.
    env.install_gettext_callables(lambda s: s, lambda s, p, n: s if n == 1 else p, newstyle=True)
    env.add_extension(ConstantMessages)
    env.add_extension(InlinedPartials)
    env.add_extension(AsciiText)
    env.filters["_constant_message"] = _constant_message
    # `_` is Jinja's alias that looks `gettext` up again on every call.
    env.globals.update(gettext=_gettext, ngettext=_ngettext, _=_gettext)
    env.filters.update({"when": when, "day": day, "machine_time": machine_time, "ago": ago,
                        "label": label, "number": number, "nl2br": nl2br})
    env.globals.update({"zone_named": zone_named, "person_options": person_options})
    env.trim_blocks = True
    env.lstrip_blocks = True
