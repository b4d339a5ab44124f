"""Days away and days of restriction or transfer counted from dates
(Form 300 columns K and L, Form 301 item 12's periods).

29 CFR 1904.7(b)(3)-(4), as the rule counts them:

- calendar days, not work days: weekends, holidays and days the employee
  would not have worked all count ((b)(3)(iii)-(iv));
- the day of the injury or illness is not counted ((b)(3)(i), (b)(4)(i));
- days away and days restricted together are capped at 180
  ((b)(3)(vii)); the cap is reached in date order, so the earliest days
  are the ones kept;
- a period still open counts up to today (the estimate the employer
  updates as the days pass, (b)(3)(ii));
- a day both away and restricted is a day away (the more serious; a day
  is never counted twice).

A period is `{kind, from, to}`: `from` the first day away (or restricted),
`to` the last one, inclusive, or None while the period is open. Pure
functions: the case service, the log and the forms call them alike.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ehs_plugins.osha.recordability import MAX_DAYS

AWAY, RESTRICTED = "away", "restricted"
KINDS = (AWAY, RESTRICTED)


@dataclass(frozen=True)
class Period:
    kind: str
    start: dt.date
    end: dt.date | None

    def json(self) -> dict[str, Any]:
        return {"kind": self.kind, "from": self.start.isoformat(),
                "to": self.end.isoformat() if self.end is not None else None}


def count_days(periods: Iterable[Period], injury_day: dt.date, today: dt.date) -> tuple[int, int]:
    """(days away, days restricted) of these periods, by 1904.7(b)(3)-(4)."""
    away: set[dt.date] = set()
    restricted: set[dt.date] = set()
    for period in periods:
        end = period.end if period.end is not None else today
        first = max(period.start, injury_day + dt.timedelta(days=1))  # the injury day is not counted
        days = (end - first).days + 1
        if days <= 0:
            continue
        # At most MAX_DAYS of any one period can be kept: no need to list more.
        span = {first + dt.timedelta(days=i) for i in range(min(days, MAX_DAYS))}
        (away if period.kind == AWAY else restricted).update(span)
    restricted -= away
    kept_away = kept_restricted = 0
    for day in sorted(away | restricted)[:MAX_DAYS]:
        if day in away:
            kept_away += 1
        else:
            kept_restricted += 1
    return kept_away, kept_restricted


def is_open(periods: Iterable[Period]) -> bool:
    return any(period.end is None for period in periods)


def parse(stored: str | None) -> list[Period]:
    """The periods kept on a case (JSON text), as `Period`s."""
    if not stored:
        return []
    return [Period(item["kind"], dt.date.fromisoformat(item["from"]),
                   dt.date.fromisoformat(item["to"]) if item.get("to") else None)
            for item in json.loads(stored)]


def dump(periods: list[Period]) -> str | None:
    return json.dumps([period.json() for period in periods]) if periods else None


def problems(periods: list[Period], injury_day: dt.date, today: dt.date) -> list[tuple[str, str]]:
    """What cannot be so about these periods, as (path, message): a period
    before the injury, ending before it starts, or starting in the future."""
    found = []
    for index, period in enumerate(periods):
        if period.start < injury_day:
            found.append((f"periods.{index}.from",
                          f"A period cannot start before the day of the injury ({injury_day.isoformat()})"))
        if period.end is not None and period.end < period.start:
            found.append((f"periods.{index}.to", "A period cannot end before it starts"))
        if period.start > today:
            found.append((f"periods.{index}.from", "A period cannot start in the future"))
    return found
