"""Dates and times in pages read as Babel writes them for the locale
("14 Mar 2026", "14 Mar 2026, 09:05 EDT"), in the site's zone; what a
template outputs is escaped exactly as markupsafe escapes it."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape
from zoneinfo import ZoneInfo

from babel.dates import format_date, format_datetime
from babel.numbers import format_decimal
from jinja2 import Environment
from markupsafe import Markup, escape

from ehs_core.ui.rendering import (
    LOCALE,
    ascii_html,
    day,
    machine_time,
    nl2br,
    number,
    output_escape,
    setup,
    time_html,
    when,
    zone_named,
)


def test_day_writes_every_month_as_babel_does():
    for month in range(1, 13):
        date = dt.date(2026, month, 1 + month)
        assert day(date) == format_date(date, "d MMM y", locale=LOCALE)
    assert day("2026-03-14T23:30:00Z") == "14 Mar 2026"


def test_when_is_the_sites_wall_clock_with_its_zone():
    moment = dt.datetime(2026, 3, 14, 13, 5, tzinfo=dt.UTC)
    local = moment.astimezone(ZoneInfo("America/New_York"))
    assert when(moment, "America/New_York") == (
        format_datetime(local, "d MMM y, HH:mm", locale=LOCALE) + " EDT")
    assert when(moment, "Asia/Kolkata", with_zone=False) == "14 Mar 2026, 18:35"
    assert when(dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC), "UTC") == "2 Jan 2026, 03:04 UTC"


def test_when_writes_every_day_and_minute_as_babel_does():
    zone = ZoneInfo("Europe/Berlin")
    for hour, minute, day_ in [(0, 0, 1), (9, 5, 9), (10, 10, 10), (23, 59, 31)]:
        moment = dt.datetime(2026, 12, day_, hour, minute, tzinfo=zone)
        assert when(moment, "Europe/Berlin", with_zone=False) == format_datetime(
            moment, "d MMM y, HH:mm", locale=LOCALE)


def test_machine_time_is_isoformat_in_utc_to_the_millisecond():
    moments = [dt.datetime(2026, 3, 14, 14, 5, 9, 250000, tzinfo=dt.UTC),
               dt.datetime(2026, 3, 14, 14, 5, 9, 7, tzinfo=dt.UTC),
               dt.datetime(2026, 3, 14, 14, 5, 9, tzinfo=ZoneInfo("America/Chicago")),
               dt.datetime(999, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30)))]
    for moment in moments:
        timespec = "milliseconds" if moment.microsecond else "seconds"
        written = moment.astimezone(dt.UTC).isoformat(timespec=timespec)
        assert machine_time(moment) == written.replace("+00:00", "Z")
        # HTML's valid global date and time string: at most three digits of a second.
        assert re.fullmatch(r"\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z", machine_time(moment))
    assert machine_time(moments[1]) == "2026-03-14T14:05:09.000Z"
    assert machine_time(dt.datetime(2026, 3, 14, 14, 5)) == "2026-03-14T14:05:00Z"  # naive: UTC
    assert machine_time(None) == ""


def test_a_time_element_is_the_machine_time_and_the_sites_wall_clock():
    moments = [dt.datetime(2026, 3, 14, 14, 5, 9, 250000, tzinfo=dt.UTC),
               dt.datetime(2026, 3, 14, 14, 5, 9, 7, tzinfo=dt.UTC),
               dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC),  # the hour New York's clocks go back
               dt.datetime(2026, 3, 14, 14, 5, 9, tzinfo=ZoneInfo("America/Chicago")),
               dt.datetime(2026, 3, 14, 14, 5),  # naive: UTC
               dt.datetime(999, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30)))]
    for name in ("America/New_York", "Asia/Kolkata", "UTC"):
        for moment in moments:
            assert time_html(moment, zone_named(name)) == (
                f'<time datetime="{machine_time(moment)}">{when(moment, name)}</time>')
    assert time_html(moments[2], zone_named("America/New_York")) == (
        '<time datetime="2026-11-01T06:30:00Z">1 Nov 2026, 01:30 EST</time>')


def test_outputs_are_escaped_exactly_as_markupsafe_escapes():
    class Shown:
        def __str__(self) -> str:
            return "<b>'A' & \"B\"</b>"

    values = ["plain", "<script>alert('x')</script>", 'a "quoted" & <tag>', "", "é ü 中",
              Markup("<em>safe</em>"), 42, 1.5, None, Shown()]
    for value in values:
        written = output_escape(value)
        assert written.isascii()
        assert unescape(written) == unescape(str(escape(value)))
        assert written == str(escape(value)) or not str(escape(value)).isascii()
    assert output_escape("é ü 中 <") == "&#233; &#252; &#20013; &lt;"


def test_pages_are_written_in_ascii_that_reads_as_the_same_text():
    """"→" and "é" are written as character references (the page is then
    one byte a character, its UTF-8 a copy), in the template's own text,
    its translated messages and what it outputs, and a browser reads the
    same characters."""
    environment = Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
    setup(environment, None)
    template = environment.from_string('<p title="{{ name }}">Moved on · {{ name }} — {{ _("Zoë") }}</p>')
    written = template.render(name="Zoë → <b>")
    assert written.isascii()
    assert unescape(written) == '<p title="Zoë → <b>">Moved on · Zoë → <b> — Zoë</p>'
    assert "<b>" not in written
    assert ascii_html("plain <b>") == "plain <b>"


def test_templates_escape_what_they_output_and_keep_what_is_safe():
    environment = Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
    setup(environment, None)
    template = environment.from_string(
        "<p title=\"{{ title }}\">{{ body }}{{ safe }}"
        "{% set kept %}<i>{{ body }}</i>{% endset %}{{ kept }}</p>"
        "{% macro m(x) %}<u>{{ x }}</u>{% endmacro %}{{ m(body) }}")
    html = template.render(title='He said "no" & left', body="<b>x</b>", safe=Markup("<br>"))
    assert html == ('<p title="He said &#34;no&#34; &amp; left">&lt;b&gt;x&lt;/b&gt;<br>'
                    "<i>&lt;b&gt;x&lt;/b&gt;</i></p><u>&lt;b&gt;x&lt;/b&gt;</u>")


def test_outputs_and_dict_lookups_written_out_answer_as_jinjas_own():
    """`JoinedOutput` escapes a text output by markupsafe's C function and
    reads `d.name` and `d["name"]` of a plain dict in place: each answer is
    plain Jinja's, for text, Markup, numbers, None, a dict item that is
    there or not, a dict's own attribute (`d.items`), a dict subclass, an
    object's attribute, a nested lookup and a list's index; and a page is
    written in ASCII whatever its values hold."""

    class Thing:
        name = "<thing>"

    class Mapping(dict):
        name = "attribute"

    source = ("{{ text }}|{{ safe }}|{{ count }}|{{ nothing }}|{{ d.name }}|{{ d['name'] }}|"
              "{{ d.absent }}|{{ d['absent'] }}|{{ d.items is callable }}|{{ d['items'] }}|"
              "{{ sub.name }}|{{ sub['name'] }}|{{ thing.name }}|{{ thing['name'] }}|"
              "{{ d.inner.deeper }}|{{ d['inner']['deeper'] }}|{{ seq[1] }}|{{ d[7] }}|{{ accent }}")
    values = {"text": "<b>\"x\" & 'y'</b>", "safe": Markup("<i>kept</i>"), "count": 3, "nothing": None,
              "d": {"name": "<n>", "items": "an item", "inner": {"deeper": "<deep>"}, 7: "seven"},
              "sub": Mapping(name="item"), "thing": Thing(), "seq": ["a", "<b>"], "accent": "Zoë → ok"}
    plain = Environment(autoescape=True).from_string(source).render(values)
    environment = Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
    setup(environment, None)
    ours = environment.from_string(source).render(values)
    assert ours.isascii()
    assert ours == ascii_html(plain)
    assert unescape(ours).split("|")[0] == values["text"]
    assert "_o.get('name', MISSING)" in environment.compile(source, raw=True)


def test_names_read_by_the_contexts_own_lookup_answer_as_jinjas():
    """A page's functions read a name from the context's values by their
    dict lookup (`ContextValues`, `JoinedOutput.write_commons`) unless
    something was set at the top level: what a top-level `{% set %}` or an
    import gives, what an include with context sees, and an unknown name,
    all read as in plain Jinja."""
    from jinja2 import DictLoader

    parts = {
        "base.html": '{% set top = "T" %}<title>{% block title %}{{ top }} {{ name }}{% endblock %}</title>'
                     "{% block body %}{% endblock %}[{{ unknown }}]{{ top }}",
        "child.html": '{% extends "base.html" %}{% set child_top = "C" %}{% from "m.html" import m %}'
                      '{% block body %}{{ name }} {{ child_top }} {{ top }} {{ m(name) }} '
                      '{% include "part.html" %}{% endblock %}',
        "part.html": "<{{ name }} {{ child_top }} {{ top }} [{{ unknown }}]>",
        "m.html": "{% macro m(x) %}({{ x }}{{ name }}){% endmacro %}",
        "flat.html": '{% set top = "F" %}{{ top }} {{ name }}{% include "part.html" %}',
    }
    values = {"name": "<Ann>"}
    plain = Environment(autoescape=True, loader=DictLoader(parts))
    ours = Environment(autoescape=True, extensions=["jinja2.ext.i18n"], loader=DictLoader(parts))
    setup(ours, None)
    for name in ("child.html", "flat.html", "part.html"):
        assert ours.get_template(name).render(values) == plain.get_template(name).render(values)
    assert ours.get_template("child.html").render(values).startswith("<title>T &lt;Ann&gt;</title>")


def test_nl2br_escapes_the_text_and_breaks_its_lines():
    assert nl2br("Fell <2 m>\nfrom a ladder & hurt\n") == Markup(
        "Fell &lt;2 m&gt;<br>from a ladder &amp; hurt<br>")
    assert nl2br(None) == Markup("")
    assert nl2br(Markup("<b>kept</b>\nsafe")) == Markup("<b>kept</b><br>safe")


def test_counts_are_grouped_as_babel_groups_them():
    for value in (0, 7, 999, 1000, 99_999, 100_000, 1_234_567, -4_200, 2.5):
        assert number(value) == format_decimal(value, locale=LOCALE)


def test_an_inlined_part_renders_as_its_include_and_is_compiled_into_the_page():
    """`{% inline %}` (ui.rendering.InlinedPartials) writes what `{% include %}`
    writes, seeing the page's values and loop variables; without reloading
    the part's code is the page's own (no include at render time), with
    reloading it stays an include, so that a change to the part shows."""
    from jinja2 import DictLoader

    parts = {"part.html": "{% set n = items|length %}<li>{{ who }}: {{ n }} {{ item }}</li>",
             "inlined.html": "<ul>{% for item in items %}{% inline 'part.html' %}{% endfor %}</ul>",
             "included.html": "<ul>{% for item in items %}{% include 'part.html' %}{% endfor %}</ul>"}
    values = {"who": "<Ann>", "items": ["a&b", "c"]}
    for reload in (False, True):
        environment = Environment(autoescape=True, extensions=["jinja2.ext.i18n"], loader=DictLoader(parts),
                                  auto_reload=reload)
        setup(environment, None)
        inlined = environment.get_template("inlined.html").render(values)
        assert inlined == environment.get_template("included.html").render(values)
        assert inlined == "<ul><li>&lt;Ann&gt;: 2 a&amp;b</li><li>&lt;Ann&gt;: 2 c</li></ul>"
        code = environment.compile(parts["inlined.html"], "inlined.html", raw=True)
        assert ("get_template('part.html'" in code) is reload


def test_a_templates_calls_answer_as_jinjas_whether_built_in_or_asking_for_the_context():
    """`ui.rendering.PageContext` calls a built-in method (`d.get(…)`)
    directly and anything else through Jinja: the answers are Jinja's own
    (the same template through Jinja's Context), a function marked
    `pass_context` still gets the context (with what the loop `set`), and a
    built-in raising StopIteration reads as undefined."""
    from jinja2 import pass_context
    from jinja2.runtime import Context

    from ehs_core.ui.rendering import PageContext

    @pass_context
    def seen(context, name):
        return context.get(name, "?")

    source = ("{% for x in xs %}{% set y = x ~ '!' %}{{ d.get(x, '-') }}{{ seen('x') }}{{ seen('y') }};"
              "{% endfor %}[{{ empty.__next__() }}]{{ xs.index('b') }}{{ d.items()|list|length }}")
    answers = []
    for context_class in (PageContext, Context):
        environment = Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
        setup(environment, None)
        environment.context_class = context_class
        answers.append(environment.from_string(source).render(
            xs=["a", "b"], d={"a": "<1>"}, seen=seen, empty=iter([])))
    assert answers[0] == answers[1] == "&lt;1&gt;?a!;-?b!;[]11"
