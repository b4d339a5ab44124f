"""Injury figures for the analytics plugin (registered through its
`add_injury_figures` directive when it is enabled): recordable cases and
days away of a period, and TRIR and DART, rolling 12 months to the end of
the period and per calendar year. Recordable cases x 200,000 / hours worked.

A case falls in the month of its local date at its site (the site's zone,
the server's for a site without one), as on the OSHA 300 Log and 300A
(1904.32(a)(1): the establishment's calendar year); the hours are entered per
site and month already."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pyramid.request import Request
from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.sql import ColumnElement

from ehs_core.incidents.models import Incident
from ehs_core.sites.models import Site
from ehs_plugins.osha.models import InjuryCase, SiteHours

BASE = Decimal(200_000)
# The case's local wall-clock time at its site as seconds since 1970, for
# incidents between two instants; the analytics plugin supplies it.
LocalSeconds = Callable[[dt.datetime, dt.datetime], ColumnElement]


def period_cases(request: Request, scope: Callable[[Select], Select]) -> tuple[int, int]:
    """(recordable cases, days away) of the incidents `scope` narrows to."""
    recordable, days_away = request.dbsession.execute(scope(
        select(func.count(), func.coalesce(func.sum(InjuryCase.days_away), 0))
        .select_from(InjuryCase).join(Incident, Incident.id == InjuryCase.incident_id)
        .where(InjuryCase.recordable.is_(True)))).one()
    return recordable, days_away


def _rate(count: int, hours: Decimal) -> float | None:
    if not hours:
        return None
    return float((Decimal(count) * BASE / hours).quantize(Decimal("0.01"), ROUND_HALF_UP))


Month = tuple[int, int]  # (year, month)


# Any zone's offset is within this of UTC; the UTC bounds of the query are
# widened by it, and each case is then placed by its local time.
WIDEST_OFFSET = dt.timedelta(hours=15)


def _start(month: Month) -> dt.datetime:
    """Midnight starting the month, as a wall-clock time written in UTC."""
    return dt.datetime(month[0], month[1], 1, tzinfo=dt.UTC)


def _after(month: Month) -> dt.datetime:
    year, number = month
    return dt.datetime(year + (number == 12), number % 12 + 1, 1, tzinfo=dt.UTC)


def _windows(request: Request, windows: list[tuple[Month, Month]],
             site_id: int | None, local_seconds: LocalSeconds) -> list[dict[str, Any]]:
    """Rates for each window of whole months (first, last) (inclusive): one
    query for the cases and one for the hours over all windows, each window
    an aggregate with its own condition."""
    db = request.dbsession
    start = min(_start(first) for first, _ in windows) - WIDEST_OFFSET
    end = max(_after(last) for _, last in windows) + WIDEST_OFFSET
    # The case's local wall-clock time at its site, as seconds since 1970.
    local = local_seconds(start, end)
    case_filter = [InjuryCase.recordable.is_(True), Incident.occurred_at >= start, Incident.occurred_at < end,
                   Incident.organization_id == request.identity.user.organization_id]
    hours_filter = [SiteHours.year >= min(first[0] for first, _ in windows),
                    SiteHours.year <= max(last[0] for _, last in windows),
                    SiteHours.site_id.in_(select(Site.id).where(
                        Site.organization_id == request.identity.user.organization_id))]
    if site_id is not None:
        case_filter.append(Incident.site_id == site_id)
        hours_filter.append(SiteHours.site_id == site_id)
    dart = InjuryCase.outcome.in_(("days_away", "restricted"))
    # Lost-time cases: column H (days away) alone, as the 300 Log's LTIR.
    lost_time = InjuryCase.outcome == "days_away"
    columns = []
    hours_columns = []
    for first_month, last_month in windows:
        during = and_(local >= _start(first_month).timestamp(), local < _after(last_month).timestamp())
        columns += [func.count().filter(during), func.count().filter(and_(during, dart)),
                    func.count().filter(and_(during, lost_time))]
        months = and_(or_(SiteHours.year > first_month[0],
                          and_(SiteHours.year == first_month[0], SiteHours.month >= first_month[1])),
                      or_(SiteHours.year < last_month[0],
                          and_(SiteHours.year == last_month[0], SiteHours.month <= last_month[1])))
        hours_columns.append(func.coalesce(func.sum(SiteHours.hours).filter(months), 0))
    counts = db.execute(select(*columns).select_from(InjuryCase)
                        .join(Incident, Incident.id == InjuryCase.incident_id).where(*case_filter)).one()
    all_hours = db.execute(select(*hours_columns).where(*hours_filter)).one()
    found = []
    for i, hours in enumerate(all_hours):
        total, dart_count, lost_count = counts[3 * i], counts[3 * i + 1], counts[3 * i + 2]
        hours = Decimal(str(hours))
        found.append({"recordableCases": total, "dartCases": dart_count, "lostTimeCases": lost_count,
                      "hours": float(hours), "trir": _rate(total, hours), "dart": _rate(dart_count, hours),
                      "ltir": _rate(lost_count, hours)})
    return found


def rates(request: Request, last: dt.date, site_id: int | None, *, with_counts: bool = True,
          local_seconds: LocalSeconds) -> dict[str, Any]:
    """Rolling 12 months to `last` and the last three calendar years.
    Without `with_counts` only the rates and hours are given: the case
    counts are injury-record figures for safety managers."""
    end_index = last.year * 12 + last.month - 1
    start_index = end_index - 11
    years = range(last.year - 2, last.year + 1)
    windows = [((start_index // 12, start_index % 12 + 1), (last.year, last.month)),
               *(((year, 1), (year, 12)) for year in years)]
    rolling, *yearly = _windows(request, windows, site_id, local_seconds)
    rolling["from"] = dt.date(start_index // 12, start_index % 12 + 1, 1).isoformat()
    rolling["to"] = last.isoformat()
    for year, item in zip(years, yearly, strict=True):
        item["year"] = year
    if not with_counts:
        for item in (rolling, *yearly):
            del item["recordableCases"], item["dartCases"], item["lostTimeCases"]
    return {"rolling12Months": rolling, "yearly": yearly}
