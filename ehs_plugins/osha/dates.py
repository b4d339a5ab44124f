"""The dates of a case against the event and each other: what cannot be is
refused, what is merely unusual is flagged for a look.

A recordkeeper checks the dates of Form 301 (items 3, 4, 11, 18) and of the
reports against the event: a death before the injury, a hire after it, a
birth after the hire, a report to OSHA before the event or in the future
(1904.39: the report follows the event; a mistyped time would silently
clear a pending report), the moment the employer learned before the event
(1904.39(b)(7)-(8)), and a Form 301 completed before the event. Unusual but
possible: an employee under 14 or over 85 at the event, a hire under 14, a
death more than a year after the injury, a hire more than 60 years earlier.

Pure functions over a case's attributes; the event's day is on the
establishment's clock.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

# A clock a little ahead of the server's (a phone's) is not "the future".
CLOCK_TOLERANCE = dt.timedelta(minutes=2)


def years_between(earlier: dt.date, later: dt.date) -> int:
    """Whole years from `earlier` to `later` (an age)."""
    return later.year - earlier.year - ((later.month, later.day) < (earlier.month, earlier.day))


def impossible(case: Any, event: dt.datetime, zone: dt.tzinfo, now: dt.datetime,
               changed: set[str]) -> list[tuple[str, str]]:
    """(field, message) for each date that cannot be, among the rules that
    involve a field in `changed` (the fields being set: a case is not refused
    for a date it already held when the incident's own date moved)."""
    day = event.astimezone(zone).date()
    shown = day.isoformat()
    found: list[tuple[str, str]] = []

    def rule(fields: tuple[str, ...], broken: bool, path: str, message: str) -> None:
        if broken and changed.intersection(fields):
            found.append((path, message))

    death, hire, birth = case.date_of_death, case.date_of_hire, case.date_of_birth
    rule(("dateOfDeath",), death is not None and death < day, "dateOfDeath",
         f"The date of death cannot be before the injury or illness ({shown})")
    rule(("dateOfHire",), hire is not None and hire > day, "dateOfHire",
         f"The date of hire cannot be after the injury or illness ({shown}): "
         "the person was not yet employed")
    rule(("dateOfBirth",), birth is not None and birth >= day, "dateOfBirth",
         f"The date of birth must be before the injury or illness ({shown})")
    rule(("dateOfBirth", "dateOfHire"), birth is not None and hire is not None and birth >= hire,
         "dateOfHire", "The date of hire must be after the date of birth")
    rule(("preparedAt",), case.prepared_at is not None and case.prepared_at < day, "preparedAt",
         f"Form 301 cannot be completed before the injury or illness ({shown})")
    for name, column in (("reportedToOshaAt", "reported_to_osha_at"), ("learnedAt", "learned_at")):
        moment = getattr(case, column)
        if moment is None:
            continue
        what = "The report to OSHA" if name == "reportedToOshaAt" else "The moment the employer learned"
        rule((name,), moment < event, name,
             f"{what} cannot be before the event ({event.astimezone(zone).isoformat()})")
        rule((name,), moment > now + CLOCK_TOLERANCE, name, f"{what} cannot lie in the future")
    return found


def unusual(case: Any, event: dt.datetime, zone: dt.tzinfo) -> list[dict[str, str]]:
    """[{field, message}] for dates that are possible but worth a second look."""
    day = event.astimezone(zone).date()
    found = []
    birth, hire, death = case.date_of_birth, case.date_of_hire, case.date_of_death
    if birth is not None and birth < day:
        age = years_between(birth, day)
        if age < 14:
            found.append({"field": "dateOfBirth", "message": f"The employee was {age} at the event: "
                                                             "check the date of birth"})
        elif age > 85:
            found.append({"field": "dateOfBirth", "message": f"The employee was {age} at the event: "
                                                             "check the date of birth"})
    if birth is not None and hire is not None and birth < hire and years_between(birth, hire) < 14:
        found.append({"field": "dateOfHire", "message": f"Hired at {years_between(birth, hire)}: "
                                                        "check the dates of birth and hire"})
    if hire is not None and hire <= day and years_between(hire, day) > 60:
        found.append({"field": "dateOfHire", "message": "Hired more than 60 years before the event: "
                                                        "check the date of hire"})
    if death is not None and death >= day and (death - day).days > 365:
        found.append({"field": "dateOfDeath",
                      "message": "Death more than a year after the injury: check the date "
                                 "(and that the case is work-related)"})
    return found
