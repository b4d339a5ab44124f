"""Injury figures for the analytics plugin (registered through its
`add_injury_figures` directive when it is enabled): the recordable cases it
counts (days away, DART and lost-time cases of a period), and TRIR and DART,
rolling 12 months to the end of the period and per calendar year.
Recordable cases x 200,000 / hours worked.

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

from ehs_core.sites.models import Site
from ehs_plugins.osha.models import InjuryCase, SiteHours

BASE = Decimal(200_000)
Month = tuple[int, int]  # (year, month)
# Windows of whole months -> (recordable, DART, lost-time cases) of each; the
# analytics plugin counts them (see its figures.CaseCounts).
CaseCounts = Callable[[list[tuple[Month, Month]]], list[tuple[int, int, int]]]


def recordable_cases() -> Select:
    """Every recordable case, for the analytics plugin to count: DART cases
    are days-away and restricted ones, lost-time cases days-away ones
    (column H alone, as the 300 Log's LTIR)."""
    return select(InjuryCase.incident_id.label("incident_id"), InjuryCase.days_away.label("days_away"),
                  InjuryCase.outcome.in_(("days_away", "restricted")).label("dart"),
                  (InjuryCase.outcome == "days_away").label("lost_time")
                  ).where(InjuryCase.recordable.is_(True))


def _rate(count: int, hours: Decimal) -> float | None:
    if not hours:
        return None
    return float((Decimal(count) * BASE / hours).quantize(Decimal("0.01"), ROUND_HALF_UP))


def _windows(request: Request, windows: list[tuple[Month, Month]],
             site_id: int | None, case_counts: CaseCounts) -> list[dict[str, Any]]:
    """Rates for each window of whole months (first, last) (inclusive): the
    cases counted by the analytics plugin, one query for the hours over all
    windows, each window an aggregate with its own condition."""
    hours_filter = [SiteHours.year >= min(first[0] for first, _ in windows),
                    SiteHours.year <= max(last[0] for _, last in windows),
                    SiteHours.site_id.in_(select(Site.id).where(
                        Site.organization_id == request.identity.account.organization_id))]
    if site_id is not None:
        hours_filter.append(SiteHours.site_id == site_id)
    hours_columns = []
    for first_month, last_month in windows:
        months = and_(or_(SiteHours.year > first_month[0],
                          and_(SiteHours.year == first_month[0], SiteHours.month >= first_month[1])),
                      or_(SiteHours.year < last_month[0],
                          and_(SiteHours.year == last_month[0], SiteHours.month <= last_month[1])))
        hours_columns.append(func.coalesce(func.sum(SiteHours.hours).filter(months), 0))
    counts = case_counts(windows)
    all_hours = request.dbsession.execute(select(*hours_columns).where(*hours_filter)).one()
    found = []
    for (total, dart_count, lost_count), hours in zip(counts, all_hours, strict=True):
        hours = Decimal(str(hours))
        found.append({"recordableCases": total, "dartCases": dart_count, "lostTimeCases": lost_count,
                      "hours": float(hours), "trir": _rate(total, hours), "dart": _rate(dart_count, hours),
                      "ltir": _rate(lost_count, hours)})
    return found


def rates(request: Request, last: dt.date, site_id: int | None, *, with_counts: bool = True,
          case_counts: CaseCounts) -> dict[str, Any]:
    """Rolling 12 months to `last` and the last three calendar years.
    Without `with_counts` only the rates and hours are given: the case
    counts are injury-record figures for safety managers."""
    end_index = last.year * 12 + last.month - 1
    start_index = end_index - 11
    years = range(last.year - 2, last.year + 1)
    windows = [((start_index // 12, start_index % 12 + 1), (last.year, last.month)),
               *(((year, 1), (year, 12)) for year in years)]
    rolling, *yearly = _windows(request, windows, site_id, case_counts)
    rolling["from"] = dt.date(start_index // 12, start_index % 12 + 1, 1).isoformat()
    rolling["to"] = last.isoformat()
    for year, item in zip(years, yearly, strict=True):
        item["year"] = year
    if not with_counts:
        for item in (rolling, *yearly):
            del item["recordableCases"], item["dartCases"], item["lostTimeCases"]
    return {"rolling12Months": rolling, "yearly": yearly}
