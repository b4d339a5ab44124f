"""Dates and times in pages read as Babel writes them for the locale
("14 Mar 2026", "14 Mar 2026, 09:05 EDT"), in the site's zone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from babel.dates import format_date, format_datetime

from ehs_core.ui.rendering import LOCALE, day, when


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
