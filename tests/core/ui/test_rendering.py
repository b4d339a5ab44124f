"""Dates and times in pages read as Babel writes them for the locale
("14 Mar 2026", "14 Mar 2026, 09:05 EDT"), in the site's zone; what a
template outputs is escaped."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

from babel.dates import format_date, format_datetime
from babel.numbers import format_decimal
from jinja2 import Environment
from markupsafe import Markup

from ehs_core.ui.rendering import (
    LOCALE,
    day,
    machine_time,
    nl2br,
    number,
    setup,
    when,
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
