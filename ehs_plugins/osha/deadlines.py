"""Due dates of the recordkeeping rules, as small pure functions (the
case service, the pages and the home card read them alike; a core seam for
obligations can take them over as they are).

- 1904.29(b)(3): a recordable case is entered on the log and Form 301
  within 7 calendar days of receiving the information that it occurred.
- 1904.41(c): the electronic submission of a year's records is due by
  March 2 of the next year.
"""

from __future__ import annotations

import datetime as dt

RECORDING_DAYS = 7


def recording_due(learned: dt.datetime) -> dt.datetime:
    """When a case learned of at `learned` must be on the log (1904.29(b)(3))."""
    return learned + dt.timedelta(days=RECORDING_DAYS)


def ita_due(year: int) -> dt.date:
    """When the records of `year` must reach OSHA (1904.41(c): March 2 of the next year)."""
    return dt.date(year + 1, 3, 2)


def ita_due_at(year: int, zone: dt.tzinfo) -> dt.datetime:
    """The end of `ita_due(year)` on the establishment's clock: the moment
    the filing of `year`'s records is late (1904.41(c))."""
    return dt.datetime.combine(ita_due(year), dt.time(23, 59, 59), zone)


def next_business_day_end(received: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """The end of the business day after `received`, on the establishment's
    clock (1904.35(b)(2)(iv), (v)(A): the 300 Log and an employee's own Form
    301 by the end of the next business day). Saturdays and Sundays are not
    business days; holidays are the employer's own and not known here."""
    day = received.astimezone(zone).date() + dt.timedelta(days=1)
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return dt.datetime.combine(day, dt.time(23, 59, 59), zone)


def seven_days_end(received: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """The end of the 7th calendar day after `received` (1904.35(b)(2)(v)(B):
    an authorized employee representative's copies of the 301s within 7
    calendar days)."""
    day = received.astimezone(zone).date() + dt.timedelta(days=7)
    return dt.datetime.combine(day, dt.time(23, 59, 59), zone)
